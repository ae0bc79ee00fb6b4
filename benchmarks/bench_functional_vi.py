"""Cost per iteration of fBNN and ifBNN against Bayes by backprop, ifBDE against the deep ensemble.

Each estimator is fitted at its defaults (``device="cpu"``, ``min_epochs=0`` so that
``n_iter`` alone sets the run length) on the training rows of split 0 of UCI Boston Housing
(455 x 13, inputs standardised) with ``n_iter = k`` and ``n_iter = 2k``; the time per
iteration is the slope ``(t(2k) - t(k)) / k``, so one-off costs (the GP pre-fit, validation,
diagnostics, the prediction draws) cancel. All fits of a repeat take turns (order reversed on
odd repeats) so that load from other processes falls on all of them alike; the ratios are
medians over repeats of the per-repeat ratios. Where a method has its own network (its
``ARCHITECTURE``, e.g. fBNN's two GELU layers) its baseline is also timed on that network
(``bbb@fbnn``), so the ratio to it is the method's own overhead per iteration. The
garbage collector runs before every timed fit (``bench_sgmcmc.fit_seconds``): without that,
a collection of the previous fit's objects fell into the next one (BBB's 300-step fit took
0.57 s right after an ifBDE fit and 0.45 s otherwise, which put its slope at 1.05 ms
instead of 1.42-1.48).

``--variant fbnn:n_mc=8`` also times a method with one parameter changed (a Python literal,
e.g. ``"fbnn:hidden_layer_sizes=(50, 50)"``, or else a string), against the same baselines
as the method.

Usage: python benchmarks/bench_functional_vi.py [--k 400] [--repeats 3] [--data-home ...]
       [--variant METHOD:PARAM=VALUE ...]
"""

from __future__ import annotations

import argparse
import ast
import platform

import numpy as np
import torch
from bench_sgmcmc import slope

from skfbnn import (
    BBBRegressor,
    DeepEnsembleRegressor,
    FBNNRegressor,
    IFBDERegressor,
    IFBNNRegressor,
)
from skfbnn.datasets import load_uci_split
from skfbnn.inference.registry import METHODS

ESTIMATORS = {"bbb": BBBRegressor, "fbnn": FBNNRegressor, "ifbnn": IFBNNRegressor,
              "ensemble": DeepEnsembleRegressor, "ifbde": IFBDERegressor}
PAIRS = [("fbnn", "bbb"), ("ifbnn", "bbb"), ("ifbde", "ensemble")]
NETWORKS = {name: {} for name in ESTIMATORS}
for _new, _base in list(PAIRS):
    if METHODS[_new].architecture != METHODS[_base].architecture:
        ESTIMATORS[f"{_base}@{_new}"] = ESTIMATORS[_base]
        NETWORKS[f"{_base}@{_new}"] = METHODS[_new].architecture
        PAIRS.append((_new, f"{_base}@{_new}"))


def boston(data_home: str | None) -> tuple[np.ndarray, np.ndarray]:
    X, _, y, _ = load_uci_split("boston", 0, data_home=data_home)
    std = X.std(0)
    return (X - X.mean(0)) / np.where(std > 0, std, 1.0), y


def add_variant(spec: str) -> None:
    """Time ``method`` with ``param=value`` too (``spec`` is ``"method:param=value"``)."""
    method, _, setting = spec.partition(":")
    key, _, text = setting.partition("=")
    if method not in ESTIMATORS or not key or not text:
        raise SystemExit(f"--variant needs METHOD:PARAM=VALUE with METHOD in {list(ESTIMATORS)}."
                         f" Got {spec!r}.")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text
    name = f"{method}[{key}={text}]"
    ESTIMATORS[name] = ESTIMATORS[method]
    NETWORKS[name] = {**NETWORKS[method], key: value}
    PAIRS.extend((name, base) for new, base in list(PAIRS) if new == method)


def seconds_per_step(name: str, k: int, seed: int, X, y) -> float:
    return slope(ESTIMATORS[name], X, y, k, seed, **NETWORKS[name])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--variant", action="append", default=[],
                        help="METHOD:PARAM=VALUE, e.g. fbnn:n_mc=8 (repeatable)")
    args = parser.parse_args()
    for spec in args.variant:
        add_variant(spec)
    X, y = boston(args.data_home)
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads; Boston split 0, {X.shape}; k = {args.k}")
    for name in ESTIMATORS:  # warm-up: imports, first-call overheads
        seconds_per_step(name, 10, 0, X, y)
    slopes: dict[str, list[float]] = {name: [] for name in ESTIMATORS}
    for rep in range(args.repeats):
        names = list(ESTIMATORS) if rep % 2 == 0 else list(ESTIMATORS)[::-1]
        for name in names:
            slopes[name].append(seconds_per_step(name, args.k, rep, X, y))
        print(f"repeat {rep}: " + ", ".join(f"{n} {1e3 * s[-1]:.2f} ms/it"
                                            for n, s in slopes.items()), flush=True)
    print("\n| ratio | per-iteration time (ms) | median ratio | per-repeat ratios |")
    print("|---|---|---|---|")
    for new, base in PAIRS:
        ratios = np.array(slopes[new]) / np.array(slopes[base])
        print(f"| {new} / {base} | {1e3 * np.median(slopes[new]):.2f} / "
              f"{1e3 * np.median(slopes[base]):.2f} | {np.median(ratios):.2f} | "
              f"{', '.join(f'{r:.2f}' for r in ratios)} |")


if __name__ == "__main__":
    main()
