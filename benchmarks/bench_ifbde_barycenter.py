"""ifBDE's cost per step against the number of barycenter fixed-point iterations.

Fits ``IFBDERegressor`` at its defaults (``device="cpu"``, ``min_epochs=0``) on the
training rows of UCI Boston split 0 (inputs standardised) with the number of fixed-point
iterations without gradient before the differentiable one (``barycenter_iter``, 0 by default;
until 2026-11-26 a tolerance of 1e-4 stopped them after 2-3) set to each value of ``--iters``,
beside the deep ensemble; time per step is the slope between fits of ``k`` and ``2k`` steps,
so one-off costs cancel. Prints each configuration's slope per repeat and the ratio to the
deep ensemble's: how much of the ratio ifBDE / deep ensemble the fixed point accounts for.

``--intervals`` adds fits at the default ``barycenter_iter`` with the W2 regulariser
evaluated at every ``w2_interval``-th step only (its gradient reused in between), for each
value given.

``--parts`` instead times the parts of a default step (wall time per call of the members'
conditioned NTK covariances, of the W2 aggregate's forward, of the backward and of the whole
update, over a fit of ``2k`` steps) and counts the tensor operations per step (the profiler's
``aten::`` events of a fit of ``k`` steps, divided by ``k``).

Usage: python benchmarks/bench_ifbde_barycenter.py --data-home ../shared/data/uci \
           [--iters 0 1 3] [--intervals 2 4] [--k 300] [--repeats 2] [--parts]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch
from bench_functional_vi import boston  # the same rows and standardisation
from bench_sgmcmc import report_slopes, slope

import skfbnn.inference.ensemble.ifbde as ifbde
from skfbnn import DeepEnsembleRegressor, IFBDERegressor


def parts(X, y, k: int) -> None:
    """Per-call wall time of a default step's parts, and tensor operations per step."""
    total: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            total[name] += time.perf_counter() - start
            calls[name] += 1
            return out
        return wrapper

    originals = {name: getattr(ifbde, name) for name in
                 ("member_covariances", "aggregate_w2", "update")}
    grad = torch.autograd.grad
    for name, fn in originals.items():
        setattr(ifbde, name, timed(name, fn))
    torch.autograd.grad = timed("backward (autograd.grad)", grad)
    try:
        IFBDERegressor(n_iter=2 * k, min_epochs=0, random_state=0, device="cpu").fit(X, y)
    finally:
        for name, fn in originals.items():
            setattr(ifbde, name, fn)
        torch.autograd.grad = grad
    for name in total:
        print(f"{name:26s} {1e3 * total[name] / calls[name]:.2f} ms per call ({calls[name]} calls)")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        IFBDERegressor(n_iter=k, min_epochs=0, random_state=0, device="cpu").fit(X, y)
    n_ops = sum(e.count for e in prof.key_averages() if e.key.startswith("aten::"))
    print(f"aten operations per step (fit of {k} steps, one-off work included): {n_ops / k:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--iters", nargs="+", type=int, default=[0, 1, 3])
    parser.add_argument("--intervals", nargs="*", type=int, default=[])
    parser.add_argument("--k", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--parts", action="store_true")
    args = parser.parse_args()
    X, y = boston(args.data_home)
    if args.parts:
        IFBDERegressor(n_iter=20, min_epochs=0, random_state=0, device="cpu").fit(X, y)
        parts(X, y, args.k)
        return
    for cls in (DeepEnsembleRegressor, IFBDERegressor):  # warm-up
        cls(n_iter=20, min_epochs=0, random_state=0, device="cpu").fit(X, y)
    rows: dict[str, list[float]] = {}
    for rep in range(args.repeats):
        for n in args.iters:
            rows.setdefault(f"ifBDE, barycenter_iter {n}", []).append(
                slope(IFBDERegressor, X, y, args.k, rep, barycenter_iter=n))
        for interval in args.intervals:
            rows.setdefault(f"ifBDE, w2_interval {interval}", []).append(
                slope(IFBDERegressor, X, y, args.k, rep, w2_interval=interval))
        rows.setdefault("deep ensemble", []).append(slope(DeepEnsembleRegressor, X, y,
                                                          args.k, rep))
    report_slopes(rows, "deep ensemble")


if __name__ == "__main__":
    main()
