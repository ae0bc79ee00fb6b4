"""Cost per iteration of SGLD, Bayes by backprop and a deep ensemble, side by side in one run.

Same Boston-sized synthetic problem as ``bench_sgmcmc.py`` (455 x 13, one hidden
layer of 50 tanh units, minibatch 64, CPU) and the same slope method (its
``per_iteration``): time per iteration is the difference between fits of 200
and 1200 iterations divided by 1000, so one-off costs cancel. The three methods
take turns within each repeat; times and ratios are medians over repeats. An
iteration is one optimiser step for BBB and the ensemble (``n_iter``) and one
sampler step for SGLD (``n_burnin + n_samples * thinning`` with
``n_samples=1, thinning=1``, varying ``n_burnin``).

Methods: one SGLD chain; BBB with its defaults (``n_mc=1`` weight draw per
step, learned noise); the default 5-member deep ensemble (learned noise, so
Gaussian heads), all members updated together in one vectorised step.

Usage: python benchmarks/bench_cost.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
import torch

# bench_sgmcmc.py sits next to this script, so it is importable when the script is run.
from bench_sgmcmc import LONG, SHORT, boston_sized_problem, per_iteration

from skfbnn import BBBRegressor, DeepEnsembleRegressor, SGLDRegressor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    X, y = boston_sized_problem()  # the problem of bench_sgmcmc.py
    # min_epochs=0: the run lengths are exactly the ones asked for (no stretch to 100-200 passes)
    common = dict(device="cpu", hidden_layer_sizes=(50,), min_epochs=0)

    makers = {
        "sgld, 1 chain": lambda n, r: SGLDRegressor(
            n_burnin=n, n_samples=1, thinning=1, n_chains=1, random_state=r, **common
        ),
        "bbb, n_mc=1": lambda n, r: BBBRegressor(n_iter=n, random_state=r, **common),
        "ensemble, 5 members": lambda n, r: DeepEnsembleRegressor(
            n_iter=n, n_estimators=5, random_state=r, **common
        ),
    }
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads available, repeats={args.repeats}, "
          f"slope between {SHORT} and {LONG} iterations")
    # The methods take turns within each repeat (one slope each, seed = repeat), so that
    # load from other processes on the machine falls on all of them alike; the ratios are
    # medians of the per-repeat ratios.
    slopes = {name: [] for name in makers}
    for r in range(args.repeats):
        for name, make in makers.items():
            slopes[name].append(per_iteration(lambda n, _, make=make, r=r: make(n, r), X, y, 1))
    for name, values in slopes.items():
        print(f"{name:20s} {np.median(values) * 1e3:7.3f} ms / iteration  (repeats: "
              + " ".join(f"{v * 1e3:.3f}" for v in values) + ")")
    sgld = np.asarray(slopes["sgld, 1 chain"])
    for label, name in (("BBB / SGLD", "bbb, n_mc=1"), ("ensemble / SGLD", "ensemble, 5 members")):
        ratios = np.asarray(slopes[name]) / sgld
        print(f"{label + ' per iteration:':31s}{np.median(ratios):.2f}  (repeats: "
              + " ".join(f"{v:.2f}" for v in ratios) + ")")


if __name__ == "__main__":
    main()
