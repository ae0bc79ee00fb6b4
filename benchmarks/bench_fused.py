"""Whole sampler steps with the fused linear + tanh node on and off, in one process.

Times SGLD (or ``--kernel sghmc``) steps on the Boston-sized problem of ``bench_sgmcmc.py``
(the same slope between fits of 200 and 1200 steps) for one and eight chains, with the
fused node of ``skfbnn.nn.fused`` forced on every tanh layer
(``skfbnn.nn.functional.FUSE_MIN_ELEMENTS = 0``), forced off (``10**9``), and at the default
threshold, and at the default threshold without the readout node (``tanh_readout`` replaced by
``linear_tanh`` and the readout's own ``baddbmm``, as before that node); the four take turns
within each repeat. Prints the median ms per step of each: where the nodes pay for their
Python overhead, which sets ``FUSE_MIN_ELEMENTS``, and what folding the readout saves.

``--whole-fits`` instead times default fits on Boston (split 0) of SGHMC and fSGHMC with eight
chains and with one, with the readout node and without it (as above), taking turns within each
repeat, and prints the median of each and of the paired differences.

Usage: python benchmarks/bench_fused.py [--repeats 5] [--kernel sgld|sghmc]
       python benchmarks/bench_fused.py --whole-fits [--repeats 5] [--data-home ../shared/data/uci]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from bench_sgmcmc import KERNELS, boston_sized_problem, fit_times

import skfbnn.nn.functional as functional
from skfbnn.nn.fused import linear_tanh, tanh_readout

SETTINGS = {"on": 0, "off": 10**9, "default": functional.FUSE_MIN_ELEMENTS,
            "default, no readout node": functional.FUSE_MIN_ELEMENTS}


def unfolded_readout(b1, w1, h, b2, w2):
    """The readout as its own ``baddbmm`` after the linear + tanh node."""
    return torch.baddbmm(b2.unsqueeze(2), w2, linear_tanh(b1, w1, h))


def whole_fits(repeats: int, data_home: str | None) -> None:
    """Default fits with and without the readout node, taking turns (see the docstring)."""
    from bench_fit import boston
    from bench_sgmcmc import fit_seconds

    from skfbnn import FunctionalSGHMCRegressor, SGHMCRegressor

    X, y = boston(data_home)
    for cls in (SGHMCRegressor, FunctionalSGHMCRegressor):
        for chains in (8, 1):
            cls(random_state=0, device="cpu", n_chains=chains).fit(X, y)  # warm-up
            times: dict[str, list[float]] = {"readout node": [], "no readout node": []}
            for r in range(repeats):
                for name in times:
                    functional.tanh_readout = (unfolded_readout if name == "no readout node"
                                               else tanh_readout)
                    times[name].append(fit_seconds(
                        cls(random_state=r, device="cpu", n_chains=chains), X, y))
            functional.tanh_readout = tanh_readout
            saved = np.subtract(times["no readout node"], times["readout node"])
            print(f"{cls.__name__}, {chains} chain(s): " + ", ".join(
                f"{name} {np.median(v):.2f} s" for name, v in times.items())
                + f", saved (paired) {np.median(saved):+.3f} s  (repeats: "
                + " ".join(f"{v:+.3f}" for v in saved) + ")", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="sgld")
    parser.add_argument("--whole-fits", action="store_true")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    if args.whole_fits:
        whole_fits(args.repeats, args.data_home)
        return
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
                functional.tanh_readout = (unfolded_readout if name.endswith("no readout node")
                                           else tanh_readout)
                short, long = fit_times(make, X, y, r)
                slopes[name].append((long - short) / 1000)
        functional.FUSE_MIN_ELEMENTS = SETTINGS["default"]
        functional.tanh_readout = tanh_readout
        print(f"{args.kernel}, {chains} chain(s): " + ", ".join(
            f"node {name} {1e3 * np.median(v):.3f} ms" for name, v in slopes.items()), flush=True)


if __name__ == "__main__":
    main()
