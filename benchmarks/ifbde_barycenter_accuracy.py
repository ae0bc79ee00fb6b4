"""How far ifBDE's barycenter, a few fixed-point maps from the members' average, is from the
converged one, on the member covariances of real fits.

Fits ``IFBDERegressor`` (``n_iter`` steps, ``min_epochs=0``, the rest at its defaults plus
the settings given) on the training rows of split 0 of each data set (inputs standardised)
and, at every ``--every``-th evaluation of the W2's covariance part, takes the members'
conditioned NTK covariances and the measurement set of that step. For each it computes the
squared W2 between the members' barycenter and the GP prior with ``barycenter_iter`` = 0, 1
and 3 fixed-point maps without gradient before the differentiable one, and with 300 (the
converged barycenter), and its gradient with respect to the members' covariances. Prints,
per setting, the relative error of the squared W2 against the converged one and the
relative distance of the gradient from that of ``barycenter_iter=3`` (what the tolerance
of 1e-4 used before 2026-11-26 gave): median and maximum over the evaluations.

Usage: python benchmarks/ifbde_barycenter_accuracy.py --data-home ../shared/data/uci \
           [--datasets boston yacht concrete] [--n-iter 2000] [--every 25] \
           [--set random_function=True] [--set prior_std=None,ntk_scale=1.0] ...
"""

from __future__ import annotations

import argparse
import ast

import numpy as np
import torch

import skfbnn.inference.ensemble.ifbde as ifbde
from skfbnn import IFBDERegressor
from skfbnn.datasets import load_uci_split

ITERS = (0, 1, 3)
CONVERGED = 300


def _settings(text: str) -> dict:
    """``a=1,b=None`` -> ``{"a": 1, "b": None}``."""
    if not text:
        return {}
    return {k: ast.literal_eval(v) for k, v in (part.split("=") for part in text.split(","))}


def errors(covs: torch.Tensor, measure) -> list[float]:
    """Relative W2 errors (ITERS against the converged) and gradient distances (0 and 1
    against 3) at one evaluation."""
    values, grads = {}, {}
    for n in (*ITERS, CONVERGED):
        leaf = covs.clone().requires_grad_(True)
        value = ifbde.aggregate_w2(None, leaf, measure, "barycenter", barycenter_iter=n)
        values[n] = float(value.detach())
        grads[n] = torch.autograd.grad(value, leaf)[0]
    exact = values[CONVERGED]
    ref = grads[3]
    return ([abs(values[n] - exact) / abs(exact) for n in ITERS]
            + [float((grads[n] - ref).norm() / ref.norm()) for n in (0, 1)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--datasets", nargs="+", default=["boston", "yacht", "concrete"])
    parser.add_argument("--n-iter", type=int, default=2000)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--set", action="append", default=[""], dest="settings",
                        help="comma-separated estimator settings; repeat for several")
    args = parser.parse_args()
    rows: list[list[float]] = []
    calls = [0]
    original = ifbde.aggregate_w2

    def recording(means, covs, measure, aggregate, barycenter_iter=0):
        calls[0] += 1
        if calls[0] % args.every == 1:
            rows.append(errors(covs.detach(), measure))
        return original(means, covs, measure, aggregate, barycenter_iter)

    ifbde.aggregate_w2 = recording
    print("setting | evaluations | W2 relative error, median (max), 0 / 1 / 3 maps | "
          "gradient distance to 3 maps, median (max), 0 / 1 maps")
    try:
        for text in args.settings:
            rows.clear()
            for name in args.datasets:
                X, _, y, _ = load_uci_split(name, 0, data_home=args.data_home)
                std = X.std(0)
                X = (X - X.mean(0)) / np.where(std > 0, std, 1.0)
                IFBDERegressor(n_iter=args.n_iter, min_epochs=0, random_state=0, device="cpu",
                               **_settings(text)).fit(X, y)
            a = np.asarray(rows)
            med, top = np.median(a, 0), a.max(0)
            cells = [" / ".join(f"{m:.1e} ({t:.1e})" for m, t in zip(med[s], top[s],
                                                                   strict=True))
                     for s in (slice(0, 3), slice(3, 5))]
            print(f"{text or 'defaults'} | {len(a)} | {cells[0]} | {cells[1]}", flush=True)
    finally:
        ifbde.aggregate_w2 = original


if __name__ == "__main__":
    main()
