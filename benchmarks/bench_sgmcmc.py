"""Per-iteration cost of the SG-MCMC samplers, measured side by side in one run.

Prints two ratios on a Boston-sized problem (455 x 13, one hidden layer of 50):
fSGLD / SGLD time per iteration, and 8 vectorised chains / 1 chain.
Time per iteration is the slope between fits of two lengths, so one-off costs
(GP hyperparameter fitting, validation, diagnostics) cancel. The four
configurations take turns within each repeat (seed = repeat), so that load
from other processes falls on all of them alike; times and ratios are medians
over repeats of the per-repeat values. A short untimed fit of each configuration runs
first: without it the functional samplers' first short fit carried one-off set-up and put
their first-repeat slope 20% low.

``--kernel sghmc`` measures SGHMC and fSGHMC (the samplers of the accuracy goals) instead
of SGLD and fSGLD.

``--threads 2`` runs the fits with two torch CPU threads (``skfbnn.device.FIT_THREADS``; the
default is one, see ``bench_threads.py`` for why).

Usage: python benchmarks/bench_sgmcmc.py [--repeats 5] [--kernel sgld|sghmc] [--threads 1]
"""

from __future__ import annotations

import argparse
import gc
import platform
import time

import numpy as np
import torch

import skfbnn.device
from skfbnn import (
    FunctionalSGHMCRegressor,
    FunctionalSGLDRegressor,
    SGHMCRegressor,
    SGLDRegressor,
)

KERNELS = {"sgld": (SGLDRegressor, FunctionalSGLDRegressor),
           "sghmc": (SGHMCRegressor, FunctionalSGHMCRegressor)}

SHORT, LONG = 200, 1200


def fit_seconds(est, X, y) -> float:
    """Wall seconds of ``est.fit(X, y)`` (the timer of every speed benchmark here), after a
    collection of the garbage earlier fits left (which would otherwise fall into this one)."""
    gc.collect()
    start = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - start


def slope(cls, X, y, k: int, seed: int, **params) -> float:
    """Seconds per step of estimator class ``cls``: (t(2k) - t(k)) / k, one-off costs cancel."""
    short, long = (fit_seconds(cls(n_iter=n, min_epochs=0, random_state=seed, device="cpu",
                                   **params), X, y) for n in (k, 2 * k))
    return (long - short) / k


def report_slopes(rows: dict[str, list[float]], base: str) -> None:
    """Print each row's median milliseconds per step, its repeats, and its ratio to ``base``."""
    reference = np.median(rows[base])
    for name, values in rows.items():
        print(f"{name:28s} {1e3 * np.median(values):.2f} ms/step (repeats "
              f"{', '.join(f'{1e3 * v:.2f}' for v in values)}), / {base} "
              f"{np.median(values) / reference:.2f}")


def fit_times(make, X, y, r) -> tuple[float, float]:
    """Wall seconds of the fits of ``SHORT`` and ``LONG`` steps with seed ``r``."""
    return fit_seconds(make(SHORT, r), X, y), fit_seconds(make(LONG, r), X, y)


def per_iteration(make, X, y, repeats):
    """Median over repeats of (t_long - t_short) / (LONG - SHORT), in seconds."""
    slopes = []
    for r in range(repeats):
        short, long = fit_times(make, X, y, r)
        slopes.append((long - short) / (LONG - SHORT))
    return float(np.median(slopes))


def boston_sized_problem() -> tuple[np.ndarray, np.ndarray]:
    """The synthetic 455 x 13 regression problem of the speed benchmarks."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(455, 13))
    return X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=455)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="sgld")
    parser.add_argument("--threads", type=int, default=skfbnn.device.FIT_THREADS)
    args = parser.parse_args()
    skfbnn.device.FIT_THREADS = args.threads
    X, y = boston_sized_problem()
    # min_epochs=0: the run lengths of the slope must not be stretched to a number of epochs.
    common = dict(n_samples=1, thinning=1, device="cpu", hidden_layer_sizes=(50,), min_epochs=0)
    plain, functional = KERNELS[args.kernel]
    k, fk = args.kernel, "f" + args.kernel

    def weight_space(chains):
        return lambda n, r: plain(n_burnin=n, n_chains=chains, random_state=r, **common)

    def function_space(chains):
        return lambda n, r: functional(
            n_burnin=n, n_chains=chains, random_state=r, prior_fit_iter=10, **common
        )

    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads available, {args.threads} per fit, "
          f"repeats={args.repeats}")
    makers = {f"{k}, 1 chain": weight_space(1), f"{fk}, 1 chain": function_space(1),
              f"{k}, 8 chains": weight_space(8), f"{fk}, 8 chains": function_space(8)}
    for make in makers.values():  # warm-up: one-off imports and set-up, not timed
        fit_seconds(make(5, 0), X, y)
    times = {name: [] for name in makers}
    for r in range(args.repeats):
        for name, make in makers.items():
            times[name].append(fit_times(make, X, y, r))
    slopes = {}
    for name, values in times.items():
        short, long = np.asarray(values).T
        slopes[name] = (long - short) / (LONG - SHORT)
        print(f"{name:18s} {np.median(slopes[name]) * 1e3:7.3f} ms / iteration  (repeats: "
              + " ".join(f"{v * 1e3:.3f}" for v in slopes[name]) + ")")
    K = k.upper()
    FK = "f" + K
    for label, num, den, goal in (
        (f"{FK} / {K} per iteration (1 chain):", f"{fk}, 1 chain", f"{k}, 1 chain", 1.2),
        (f"{FK} / {K} per iteration (8 chains):", f"{fk}, 8 chains", f"{k}, 8 chains", None),
        (f"8 chains / 1 chain ({K}):", f"{k}, 8 chains", f"{k}, 1 chain", 1.5),
        (f"8 chains / 1 chain ({FK}):", f"{fk}, 8 chains", f"{fk}, 1 chain", 1.5),
    ):
        ratios = slopes[num] / slopes[den]
        print(f"{label:39s} {np.median(ratios):.2f}"
              + (f"  (goal <= {goal})" if goal else "") + "  (repeats: "
              + " ".join(f"{v:.2f}" for v in ratios) + ")")


if __name__ == "__main__":
    main()
