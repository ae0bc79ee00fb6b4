"""Time per step of a few estimators on each device, side by side in one run.

Fits each estimator at its defaults on the Boston-sized synthetic problem of
``bench_sgmcmc.py`` (455 x 13) with two run lengths, ``k`` and ``2k`` steps, and prints the slope
(seconds per step; one-off costs such as the GP pre-fit, validation and diagnostics cancel) on
every device named, and each device's ratio to the first. One short untimed fit of every
configuration runs first. The samplers' run length is ``n_burnin`` (``n_samples=1``), the
optimisers' ``n_iter``; ``min_epochs=0`` so that these alone set it.

``--rows N --hidden W`` replaces the problem by ``N`` rows of the same kind and the network by
two hidden layers of ``W`` units, to find where an accelerator starts to pay.

Usage: python benchmarks/bench_device.py [--devices cpu cuda] [--k 200] [--repeats 2]
           [--methods sghmc ensemble] [--rows 20000 --hidden 256]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from bench_sgmcmc import boston_sized_problem, fit_seconds

from skfbnn import (
    BBBRegressor,
    DeepEnsembleRegressor,
    FunctionalSGHMCRegressor,
    IFBDERegressor,
    SGHMCRegressor,
)

SAMPLERS = {"sghmc": SGHMCRegressor, "fsghmc": FunctionalSGHMCRegressor}
OPTIMISERS = {"bbb": BBBRegressor, "ensemble": DeepEnsembleRegressor, "ifbde": IFBDERegressor}


def make(name: str, steps: int, device: str, seed: int, **extra):
    if name in SAMPLERS:
        return SAMPLERS[name](n_burnin=steps, n_samples=1, thinning=1, min_epochs=0,
                              device=device, random_state=seed, **extra)
    return OPTIMISERS[name](n_iter=steps, min_epochs=0, device=device, random_state=seed,
                            **extra)


def problem(rows: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The Boston-sized problem, or ``rows`` rows of the same kind."""
    if rows is None:
        return boston_sized_problem()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, 13))
    return X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", nargs="+", default=["cpu", "cuda"])
    parser.add_argument("--k", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--methods", nargs="+", default=[*SAMPLERS, *OPTIMISERS])
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--hidden", type=int, default=None)
    args = parser.parse_args()
    X, y = problem(args.rows)
    extra = {} if args.hidden is None else {"hidden_layer_sizes": (args.hidden, args.hidden)}
    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA device"
    print(f"torch {torch.__version__}; {name}; {torch.get_num_threads()} CPU threads; "
          f"problem {X.shape}; k = {args.k}; {extra or 'default network'}")
    for method in args.methods:
        for device in args.devices:
            fit_seconds(make(method, 5, device, 0, **extra), X, y)  # warm-up
    for method in args.methods:
        slopes = {}
        for device in args.devices:
            values = [(fit_seconds(make(method, 2 * args.k, device, r, **extra), X, y)
                       - fit_seconds(make(method, args.k, device, r, **extra), X, y)) / args.k
                      for r in range(args.repeats)]
            slopes[device] = float(np.median(values))
        base = slopes[args.devices[0]]
        print(f"{method:9s} " + ", ".join(
            f"{d} {1e3 * s:.2f} ms/step ({s / base:.2f}x)" for d, s in slopes.items()),
            flush=True)


if __name__ == "__main__":
    main()
