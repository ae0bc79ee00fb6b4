"""``speed.py small-calls``: one-row calls of every regressor beside scikit-learn's MLP.

A bandit's Thompson decision is ``predict_draws`` on one row; a service answers ``predict``
on one row. Each named regressor is fitted on the Boston-sized problem (455 x 13,
``speed.boston_sized_problem``) with its **default posterior size** (chains, kept draws,
members) and a short run (``n_burnin``/``n_iter`` = ``--steps``, ``min_epochs=0``,
``prior_fit_iter=0``), since a call's cost depends on what is stored, not on how long the
run was. Then ``predict(x)``, ``predict_draws(x)`` and ``predict(x, return_std=True)`` on one
row, and scikit-learn's ``MLPRegressor(hidden_layer_sizes=(50,)).predict(x)`` (the same
problem, the same network size as the default MLP), take turns, ``--calls`` calls each per
round and ``--rounds`` rounds; each cell is the least per-call time over the rounds (robust
to other processes on a shared machine), in microseconds, and its ratio to the
``MLPRegressor`` call.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

REGRESSORS = ("SGLDRegressor", "FunctionalSGLDRegressor", "SGHMCRegressor",
              "FunctionalSGHMCRegressor", "PCNRegressor", "PCNLRegressor", "MALARegressor",
              "BBBRegressor", "FBNNRegressor", "IFBNNRegressor", "DeepEnsembleRegressor",
              "IFBDERegressor")
CALLS = ("predict", "predict_draws", "predict std")


def add_arguments(p) -> None:
    p.add_argument("--estimators", nargs="+", default=list(REGRESSORS),
                   help="named regressors (default: all twelve)")
    p.add_argument("--steps", type=int, default=20, help="run length of the short fits")
    p.add_argument("--calls", type=int, default=50, help="calls per timed round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)


def short_fit(name: str, X, y, steps: int):
    """``name`` at its defaults but for the run length, fitted on ``X, y``."""
    import skfbnn

    est = getattr(skfbnn, name)(random_state=0, device="cpu")
    params = est.get_params()
    short = {k: v for k, v in (("n_burnin", steps), ("n_iter", steps), ("min_epochs", 0),
                               ("prior_fit_iter", 0)) if k in params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run: convergence warnings expected
        return est.set_params(**short).fit(X, y)


def per_call(fn, calls: int) -> float:
    """Seconds per call of ``fn()`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def run(args) -> None:
    import torch
    from sklearn.neural_network import MLPRegressor
    from speed import boston_sized_problem

    torch.set_num_threads(args.threads)
    X, y = boston_sized_problem()
    x = X[:1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPRegressor(hidden_layer_sizes=(50,), max_iter=50, random_state=0).fit(X, y)
    fitted = {name: short_fit(name, X, y, args.steps) for name in args.estimators}
    calls = {"MLPRegressor": {"predict": lambda: mlp.predict(x)}}
    for name, est in fitted.items():
        calls[name] = {"predict": lambda est=est: est.predict(x),
                       "predict_draws": lambda est=est: est.predict_draws(x),
                       "predict std": lambda est=est: est.predict(x, return_std=True)}
    best = {(name, call): np.inf for name, fns in calls.items() for call in fns}
    for fns in calls.values():  # warm-up
        for fn in fns.values():
            per_call(fn, 3)
    for r in range(args.rounds):
        order = list(calls) if r % 2 == 0 else list(calls)[::-1]
        for name in order:
            for call, fn in calls[name].items():
                best[name, call] = min(best[name, call], per_call(fn, args.calls))
    base = best["MLPRegressor", "predict"]
    print(f"one row, {args.threads} thread(s), least of {args.rounds} rounds of {args.calls} "
          f"calls; MLPRegressor.predict: {1e6 * base:.0f} us\n")
    print("| estimator | stored draws | " + " | ".join(f"{c} (us, x MLPRegressor)" for c in CALLS)
          + " |\n|---" * 1 + "|---" * (len(CALLS) + 1) + "|")
    for name, est in fitted.items():
        draws = int(np.prod(est.posterior_.shape))
        cells = [f"{1e6 * best[name, c]:.0f} ({best[name, c] / base:.1f}x)" for c in CALLS]
        print(f"| {name} | {draws} | " + " | ".join(cells) + " |")
