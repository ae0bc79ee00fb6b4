"""Whole sampler steps with the fused linear + tanh node on and off, in one process.

Times SGLD (or ``--kernel sghmc``) steps on the Boston-sized problem of ``bench_sgmcmc.py``
(the same slope between fits of 200 and 1200 steps) for one and eight chains, with the
fused node of ``skfbnn.nn.fused`` forced on every tanh layer
(``skfbnn.nn.functional.FUSE_MIN_ELEMENTS = 0``), forced off (``10**9``), and at the default
threshold; the three take turns within each repeat. Prints the median ms per step of each:
where the node pays for its Python overhead, which sets ``FUSE_MIN_ELEMENTS``.

Usage: python benchmarks/bench_fused.py [--repeats 5] [--kernel sgld|sghmc]
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_sgmcmc import KERNELS, boston_sized_problem, fit_times

import skfbnn.nn.functional as functional

SETTINGS = {"on": 0, "off": 10**9, "default": functional.FUSE_MIN_ELEMENTS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="sgld")
    args = parser.parse_args()
    cls = KERNELS[args.kernel][0]
    X, y = boston_sized_problem()
    for chains in (1, 8):
        def make(n, r, chains=chains):
            return cls(n_burnin=n, n_samples=1, thinning=1, n_chains=chains, random_state=r,
                       min_epochs=0, device="cpu")

        make(50, 0).fit(X, y)  # warm-up
        slopes: dict[str, list[float]] = {name: [] for name in SETTINGS}
        for r in range(args.repeats):
            for name, threshold in SETTINGS.items():
                functional.FUSE_MIN_ELEMENTS = threshold
                short, long = fit_times(make, X, y, r)
                slopes[name].append((long - short) / 1000)
        functional.FUSE_MIN_ELEMENTS = SETTINGS["default"]
        print(f"{args.kernel}, {chains} chain(s): " + ", ".join(
            f"node {name} {1e3 * np.median(v):.3f} ms" for name, v in slopes.items()), flush=True)


if __name__ == "__main__":
    main()
