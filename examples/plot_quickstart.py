"""
Quickstart: a fit and its uncertainty band
==========================================

The shortest complete use of skfbnn: fit a Bayesian neural network at its **default
settings** inside a scikit-learn pipeline, ask for the predictive mean and standard deviation,
and draw the band. The data are 40 noisy observations of a 1-D function on two clusters,
``[-0.75, -0.25]`` and ``[0.25, 0.75]`` (:func:`skfbnn.datasets.make_oscillation`), so the
figure shows what a posterior does where there are no data: between the clusters and beyond
them.

:class:`~skfbnn.FunctionalSGHMCRegressor` samples the network's weights by stochastic-gradient
Hamiltonian Monte Carlo under a Gaussian-process prior on the function. The example prints
the time of the fit and of the whole script; the total running time is also at the bottom of
this page.
"""

# %%
# Fit
# ---
# ``predict(X, return_std=True)`` returns the mean and the *total* predictive standard
# deviation (posterior spread and observation noise), in the units of ``y``, as scikit-learn's
# ``GaussianProcessRegressor`` does. ``predict_std(X, kind="epistemic")`` is the spread of the
# posterior's functions alone.
import time

start = time.perf_counter()

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skfbnn import FunctionalSGHMCRegressor  # noqa: E402
from skfbnn.datasets import make_oscillation, oscillation_function  # noqa: E402

X, y = make_oscillation(n_samples=40, random_state=0)
model = make_pipeline(StandardScaler(), FunctionalSGHMCRegressor(random_state=0))

fit_start = time.perf_counter()
model.fit(X, y)
print(f"fit at the defaults: {time.perf_counter() - fit_start:.1f} s")

grid = np.linspace(-1.2, 1.2, 400)[:, None]
mean, std = model.predict(grid, return_std=True)
epistemic = model[-1].predict_std(model[0].transform(grid), kind="epistemic")

# %%
# The band
# --------
# The shaded regions are the mean plus or minus two standard deviations: the total
# predictive (light) and its epistemic part (dark). Both widen between the clusters and
# outside the data, where the data say nothing about the function.

x = grid.ravel()
fig, ax = plt.subplots(figsize=(8, 5))
ax.fill_between(x, mean - 2 * std, mean + 2 * std, color="tab:blue", alpha=0.2,
                label="mean ± 2 sd, total")
ax.fill_between(x, mean - 2 * epistemic, mean + 2 * epistemic, color="tab:blue", alpha=0.35,
                label="mean ± 2 sd, epistemic")
ax.plot(x, mean, color="tab:blue", lw=2, label="predictive mean")
ax.plot(x, oscillation_function(x), color="0.3", ls="--", lw=1, label="true function")
ax.scatter(X.ravel(), y, color="k", s=14, zorder=3, label="data")
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.set_ylim(-5, 5)
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=9, ncol=3, frameon=False)
ax.set_title("FunctionalSGHMCRegressor at its defaults")
fig.tight_layout()

# %%
# How wide, where
# ---------------
# The mean epistemic standard deviation in the data region, in the gap between the clusters
# and outside the data:

data = (np.abs(x) >= 0.25) & (np.abs(x) <= 0.75)
gap, outside = np.abs(x) < 0.25, np.abs(x) > 0.75
for name, region in (("data", data), ("gap", gap), ("outside", outside)):
    print(f"epistemic sd, {name:8s}: {epistemic[region].mean():.2f}")
print(f"whole script: {time.perf_counter() - start:.1f} s")
