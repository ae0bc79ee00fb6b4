"""``speed.py warm-refit``: a warm-started update of the bandit's size, per method.

The contextual bandit refits its model every 64 steps on the last 4 096 rows, continuing the
previous fit (``warm_start=True``) for the update budget of ``skfbnn.bench.bandit``
(``WARM_UPDATE``: 200 steps). Each method is fitted once on a buffer of 4 096 rows, cold at the
bandit's budget, then refitted warm ``--rounds`` times in two ways taking turns. With
``--data-home`` (a folder holding ``mushroom/``) the buffer is the bandit's own kind: random
mushrooms, each eaten or rejected at random, with their rewards at p = 0.5
(``mushroom_buffer``); without it, rows like them (``--features`` binary columns, 22 one-hot
groups and the rest coin flips) with normal targets, which the GP fits in fewer iterations
than real rewards. The two ways: **kept**, as the estimator does it (a GP prior's fit
continues from the previous fit's prior), and **fresh**, with the previous prior dropped
before the refit (the prior built anew: median heuristic, marginal-likelihood fit from its
start), the behaviour before priors were carried over. The table gives the median seconds
of each and their ratio, and each method's kept refit against SGLD's (what the functional
prior adds to an update).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

METHODS = ("sgld", "fsgld", "fsghmc", "bbb", "fbnn", "ifbnn", "ensemble", "ifbde")


def add_arguments(p) -> None:
    p.add_argument("--methods", nargs="+", default=list(METHODS),
                   help="registered methods (default: %(default)s)")
    p.add_argument("--data-home", default=None,
                   help="folder holding mushroom/: the bandit's rows and rewards")
    p.add_argument("--rows", type=int, default=4096, help="rows of the buffer")
    p.add_argument("--features", type=int, default=119, help="binary input columns")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)


def bandit_like_rows(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of ``d`` binary columns (22 one-hot groups of 5 where they fit, coin flips
    after) and standard-normal targets times 3 (rewards of -35..5 standardise to this)."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, d), dtype=np.float32)
    groups = min(22, d // 5)
    for j in range(groups):
        X[np.arange(n), 5 * j + rng.integers(0, 5, n)] = 1.0
    X[:, 5 * groups:] = rng.integers(0, 2, (n, d - 5 * groups))
    return X, rng.normal(size=n) * 3.0


def mushroom_buffer(data_home, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` bandit tuples: random mushrooms, each eaten or rejected at random, as the
    agent's inputs (117 one-hot features and the action) and rewards at p = 0.5."""
    from skfbnn.bench.bandit_env import inputs_of, mushroom_rewards
    from skfbnn.datasets import load_mushroom

    contexts, edible = load_mushroom(data_home=data_home, return_X_y=True)
    rng = np.random.default_rng(seed)
    rows, actions = rng.integers(0, len(contexts), n), rng.integers(0, 2, n)
    rewards = mushroom_rewards(edible[rows], actions, rng.random(n) < 0.5)
    return inputs_of(contexts[rows], actions).astype(np.float32), rewards


def warm_model(method: str, X, y):
    """``method`` fitted cold at the bandit's budget, set for warm updates."""
    from skfbnn.bench.bandit import BANDIT_BUDGET, WARM_UPDATE
    from skfbnn.estimators import BayesianNetRegressor
    from skfbnn.inference.registry import METHODS as REGISTRY

    family = REGISTRY[method].family
    model = BayesianNetRegressor(method=method, method_params=dict(BANDIT_BUDGET[family]),
                                 random_state=0, device="cpu")
    model.fit(X, y)
    update = {**model.method_params, **WARM_UPDATE[family]}
    return model.set_params(warm_start=True, method_params=update)


def timed_refit(model, X, y, keep_prior: bool) -> float:
    """Seconds of one warm refit; without ``keep_prior`` the previous GP prior is dropped
    first, so that the refit builds its prior anew."""
    if not keep_prior:
        model.__dict__.pop("prior_", None)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def run(args) -> None:
    import torch

    torch.set_num_threads(args.threads)
    X, y = (bandit_like_rows(args.rows, args.features) if args.data_home is None
            else mushroom_buffer(args.data_home, args.rows))
    times: dict[tuple[str, str], list[float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short runs: convergence warnings expected
        for method in args.methods:
            model = warm_model(method, X, y)
            timed_refit(model, X, y, True)  # warm-up
            for r in range(args.rounds):
                ways = ("kept", "fresh") if r % 2 == 0 else ("fresh", "kept")
                for way in ways:
                    times.setdefault((method, way), []).append(
                        timed_refit(model, X, y, way == "kept"))
    median = {key: float(np.median(v)) for key, v in times.items()}
    base = median.get(("sgld", "kept"))
    rows = (f"{args.features} binary columns" if args.data_home is None
            else "the mushroom bandit's inputs and rewards")
    print(f"warm refit, {args.rows} rows of {rows}, 200 steps, "
          f"{args.threads} thread(s), median of {args.rounds} rounds (s)\n")
    print("| method | kept prior | fresh prior | fresh / kept | kept / SGLD's |\n"
          "|---|---|---|---|---|")
    for method in args.methods:
        kept, fresh = median[method, "kept"], median[method, "fresh"]
        against = f"{kept / base:.2f}" if base else "-"
        print(f"| {method} | {kept:.2f} | {fresh:.2f} | {fresh / kept:.2f} | {against} |")
