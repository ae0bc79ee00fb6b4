"""Test log-likelihood with and without the fused linear + tanh node, split by split.

Fits the default pipeline of ``skfbnn bench`` (standardised inputs, the method at its
defaults, ``random_state`` = split) on splits 0-2 of yacht, Boston and energy three times:
with the fused node at its default threshold, with it off
(``skfbnn.nn.functional.FUSE_MIN_ELEMENTS = 10**9``), and with it on again (determinism).
The node computes the same function to round-off; what differs is how round-off differences
grow along a chain.

Usage: python benchmarks/fused_equivalence.py [--method sghmc] [--data-home ../shared/data/uci]
"""

from __future__ import annotations

import argparse

import skfbnn.nn.functional as functional
from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="sghmc")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    default = functional.FUSE_MIN_ELEMENTS
    for name in ("yacht", "bostonHousing", "energy"):
        for split in range(3):
            X_train, X_test, y_train, y_test = load_uci_split(name, split,
                                                              data_home=args.data_home)
            lls = []
            for threshold in (default, 10**9, default):
                functional.FUSE_MIN_ELEMENTS = threshold
                pipeline = make_regression_pipeline(args.method, random_state=split,
                                                    device="cpu")
                lls.append(evaluate_split(pipeline, X_train, y_train, X_test, y_test)["test_ll"])
            functional.FUSE_MIN_ELEMENTS = default
            print(f"{name} split {split}: fused {lls[0]:.5f}, unfused {lls[1]:.5f}, "
                  f"fused again {lls[2]:.5f}, fused - unfused {lls[0] - lls[1]:+.5f}",
                  flush=True)


if __name__ == "__main__":
    main()
