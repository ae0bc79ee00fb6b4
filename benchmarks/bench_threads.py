"""One or two torch threads inside a fit, alone and with a second fit beside it.

Fits ``SGHMCRegressor`` (3000 burn-in steps, one kept draw, ``min_epochs=0``) on the
Boston-sized problem of ``bench_sgmcmc.py``, with ``skfbnn.device.FIT_THREADS`` (the torch
CPU threads inside ``fit``) set to 1 or 2 and 1 or 8 chains. Each configuration runs once
alone and once as two processes at the same time, as in a parallel benchmark grid; printed
are the wall seconds of each fit.

Usage: python benchmarks/bench_threads.py [--steps 3000]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp

from bench_sgmcmc import boston_sized_problem, fit_seconds

import skfbnn.device
from skfbnn import SGHMCRegressor


def fit_with_threads(threads: int, chains: int, steps: int) -> float:
    """Wall seconds of one fit with ``threads`` torch threads inside it."""
    skfbnn.device.FIT_THREADS = threads
    X, y = boston_sized_problem()
    est = SGHMCRegressor(n_burnin=steps, n_samples=1, thinning=1, n_chains=chains, min_epochs=0,
                         hidden_layer_sizes=(50,), device="cpu", random_state=0)
    return fit_seconds(est, X, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args()
    print("| threads per fit | chains | alone (s) | two at once (s each) |")
    print("|---|---|---|---|")
    with mp.get_context("spawn").Pool(2) as pool:
        for threads in (1, 2):
            for chains in (8, 1):
                job = (threads, chains, args.steps)
                alone = pool.apply(fit_with_threads, job)
                pair = [pool.apply_async(fit_with_threads, job) for _ in range(2)]
                both = " / ".join(f"{r.get():.2f}" for r in pair)
                print(f"| {threads} | {chains} | {alone:.2f} | {both} |", flush=True)


if __name__ == "__main__":
    main()
