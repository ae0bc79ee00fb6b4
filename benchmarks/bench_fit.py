"""Whole-fit cost of functional SGHMC against SGHMC on Boston, side by side in one run.

Times complete default fits (``FunctionalSGHMCRegressor()`` and ``SGHMCRegressor()``
with ``device="cpu"``; the run-length defaults are printed) on the training rows of split 0 of UCI
Boston Housing (455 x 13, inputs standardised), GP hyperparameter pre-fit, validation
and diagnostics included. A third fit, fSGHMC with ``prior_fit_iter=0``, splits the
functional overhead into the pre-fit and the per-step prior. The fits take turns within
each repeat (seed = repeat, the order reversed on odd repeats) so that load from other
processes falls on all of them alike; ratios are medians of the per-repeat ratios, and
"fastest" is the ratio of the fastest fits over all repeats (the least disturbed ones on a
shared machine). Wall time is the measure; the process's CPU time is printed as well. One
short warm-up fit of each kind runs first, so one-off imports are not timed.

``--chains`` times default fits with their eight chains against the same fits with one
chain (``n_chains=1``) instead: the whole-fit counterpart of the per-iteration chain ratio of
``bench_sgmcmc.py``.

Usage: python benchmarks/bench_fit.py [--repeats 5] [--data-home shared/data/uci] [--chains]
"""

from __future__ import annotations

import argparse
import gc
import platform
import time

import numpy as np
import torch

from skfbnn import FunctionalSGHMCRegressor, SGHMCRegressor
from skfbnn.datasets import load_uci_split

MAKERS = {
    "sghmc": lambda r: SGHMCRegressor(random_state=r, device="cpu"),
    "fsghmc": lambda r: FunctionalSGHMCRegressor(random_state=r, device="cpu"),
    "fsghmc, prior_fit_iter=0": lambda r: FunctionalSGHMCRegressor(
        random_state=r, device="cpu", prior_fit_iter=0
    ),
}


CHAIN_MAKERS = {
    "sghmc": lambda r: SGHMCRegressor(random_state=r, device="cpu"),
    "sghmc, 1 chain": lambda r: SGHMCRegressor(random_state=r, device="cpu", n_chains=1),
    "fsghmc": lambda r: FunctionalSGHMCRegressor(random_state=r, device="cpu"),
    "fsghmc, 1 chain": lambda r: FunctionalSGHMCRegressor(random_state=r, device="cpu",
                                                         n_chains=1),
}


def boston(data_home: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Training rows of split 0 of Boston, inputs standardised with their own statistics."""
    X, _, y, _ = load_uci_split("boston", 0, data_home=data_home)
    std = X.std(0)
    return (X - X.mean(0)) / np.where(std > 0, std, 1.0), y


def fit_seconds(est, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``est.fit(X, y)``, after a garbage collection (as
    ``bench_sgmcmc.fit_seconds``)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    est.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu


def warm_up(X: np.ndarray, y: np.ndarray, makers: dict) -> None:
    """One short fit of each kind: imports and first-call set-up, not timed."""
    short = dict(n_burnin=5, n_samples=2, thinning=1)
    for make in makers.values():
        make(0).set_params(**short).fit(X, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data-home", default=None,
                        help="folder of the UCI data sets (default: $SKFBNN_DATA_HOME)")
    parser.add_argument("--chains", action="store_true",
                        help="eight chains (the default) against one, whole fits")
    args = parser.parse_args()
    makers = CHAIN_MAKERS if args.chains else MAKERS
    X, y = boston(args.data_home)
    warm_up(X, y, makers)
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"repeats={args.repeats}, Boston split 0 ({X.shape[0]} x {X.shape[1]}), "
          "default fits on the CPU")
    run = {k: v for k, v in SGHMCRegressor().get_params().items()
           if k in ("n_chains", "n_burnin", "n_samples", "thinning", "min_epochs", "batch_size")}
    print("SGHMC and fSGHMC defaults:", run)
    times = {name: [] for name in makers}
    for r in range(args.repeats):
        order = list(makers) if r % 2 == 0 else list(makers)[::-1]
        for name in order:
            times[name].append(fit_seconds(makers[name](r), X, y))
    for clock, column in (("wall", 0), ("CPU", 1)):
        print(f"-- {clock} time")
        seconds = {name: np.asarray(values)[:, column] for name, values in times.items()}
        for name, values in seconds.items():
            print(f"{name:26s} {np.median(values):6.2f} s per fit  (repeats: "
                  + " ".join(f"{v:.2f}" for v in values) + ")")
        pairs = (
            (("8 / 1 chain, SGHMC whole fit:", "sghmc", "sghmc, 1 chain", "  (goal <= 1.5)"),
             ("8 / 1 chain, fSGHMC whole fit:", "fsghmc", "fsghmc, 1 chain", "  (goal <= 1.5)"))
            if args.chains else
            (("fSGHMC / SGHMC, whole fit:", "fsghmc", "sghmc", "  (goal <= 1.5)"),
             ("fSGHMC without pre-fit / SGHMC:", "fsghmc, prior_fit_iter=0", "sghmc", ""))
        )
        for label, name, base, goal in pairs:
            ratios = seconds[name] / seconds[base]
            fastest = seconds[name].min() / seconds[base].min()
            print(f"{label:33s} {np.median(ratios):.2f}, fastest {fastest:.2f}{goal}  (repeats: "
                  + " ".join(f"{v:.2f}" for v in ratios) + ")")


if __name__ == "__main__":
    main()
