"""
Devices, dtypes and reproducibility
===================================

Every estimator takes ``device=`` (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"``),
``dtype=`` (``"float32"`` or ``"float64"``) and ``random_state=``. This example runs on any
machine, with or without a GPU: it shows which device ``"auto"`` picks, what an explicit
device that is not there does, what float64 costs, and that a seed reproduces a fit. Every fit
is a short one (four chains of 400 steps, a **reduced budget**).
"""

# %%
# ``device="auto"`` and the fitted ``device_``
# --------------------------------------------
import pickle
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from skfbnn import SGHMCRegressor
from skfbnn.datasets import make_oscillation

X, y = make_oscillation(200, noise_std=0.3, random_state=0)
short = dict(n_chains=4, n_burnin=300, n_samples=10, thinning=10, min_epochs=0)

print("CUDA available:", torch.cuda.is_available())
reg = SGHMCRegressor(device="auto", random_state=0, **short).fit(X, y)
print("device='auto' fitted on", reg.device_)

# %%
# ``"auto"`` picks CUDA, then Apple's MPS, then the CPU. An explicit device that is not there
# is an error, not a silent fallback:

if not torch.cuda.is_available():
    try:
        SGHMCRegressor(device="cuda", **short).fit(X, y)
    except ValueError as error:
        print("ValueError:", error)
else:
    print("CUDA is available here, so device='cuda' fits on", SGHMCRegressor(
        device="cuda", random_state=0, **short).fit(X, y).device_)

# %%
# Outputs are NumPy arrays on the CPU whatever the device, and a fitted estimator pickles
# with CPU tensors, so a model fitted on a GPU predicts on a machine without one.

mean, std = reg.predict(X[:3], return_std=True)
print(type(mean).__name__, mean.dtype, mean.round(3), std.round(3))
restored = pickle.loads(pickle.dumps(reg))
print("same predictions after a pickle round trip:",
      np.array_equal(restored.predict(X), reg.predict(X)))

# %%
# Reproducibility
# ---------------
# ``random_state`` seeds one ``torch.Generator`` for the whole fit; the global random states
# are left alone. The same seed on the same device gives the same predictions; another seed
# gives another draw of the posterior.

again = SGHMCRegressor(device="auto", random_state=0, **short).fit(X, y)
other = SGHMCRegressor(device="auto", random_state=1, **short).fit(X, y)
print("same seed, same predictions:", np.array_equal(again.predict(X), reg.predict(X)))
print("other seed, max difference of the mean:",
      float(np.abs(other.predict(X) - reg.predict(X)).max().round(3)))

# %%
# float32 against float64 on the CPU
# ----------------------------------
# ``dtype`` sets the type of the network's maths (a functional prior's GP maths is always
# float64). Timing two fits of each on the CPU:

times = {}
for dtype in ("float32", "float64"):
    runs = []
    for seed in range(2):
        start = time.perf_counter()
        SGHMCRegressor(device="cpu", dtype=dtype, random_state=seed, **short).fit(X, y)
        runs.append(time.perf_counter() - start)
    times[dtype] = min(runs)
    print(f"{dtype}: {times[dtype]:.2f} s per fit (best of two)")
print(f"float64 / float32: {times['float64'] / times['float32']:.2f}")

fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(list(times), list(times.values()), color=["C0", "C1"])
ax.set_ylabel("seconds per fit (CPU)")
ax.set_title("The same SGHMC fit in two dtypes", fontsize=10)
fig.tight_layout()
plt.show()

# %%
# On small networks like these a step is mostly per-operation overhead, so the two dtypes
# cost about the same; float64 pays on wide networks and large batches. On a GPU, consumer
# cards run float64 far slower than float32. Small problems are often faster on the CPU than
# on a GPU, where every operation is a kernel launch: pass ``device="cpu"`` explicitly there.
