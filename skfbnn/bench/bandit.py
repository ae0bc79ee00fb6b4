"""The Mushroom contextual bandit (Blundell et al. 2015) with Thompson sampling.

At every step a mushroom is drawn uniformly at random from the 8124 rows; the
agent sees its 117 one-hot features and eats it or rejects it. Eating an edible
mushroom gives +5; eating a poisonous one -35 with probability ``p`` and +5
otherwise; rejecting gives 0. The oracle eats exactly the edible mushrooms
(+5 or 0), and the regret of a step is the oracle's reward minus the agent's
(``regret``; ``expected_regret`` replaces the agent's reward by its expectation
given the mushroom, which removes the coin's noise). The draws of mushrooms
and coins depend only on the seed, so every method of a seed meets the same
sequence.

Agents model the reward of a (context, action) pair, the action one-hot encoded
after the 117 features, with a regressor trained on the most recent
``buffer_size`` (4096) tuples in minibatches of ``batch_size`` (64), updated
every ``update_every`` (64) steps; before the first update every agent acts
uniformly at random. Thompson sampling takes one posterior draw per decision,
uniformly among the fitted model's stored draws (``predict_draws``): a sampler's
kept chain states, a mean-field method's draws from its variational posterior,
an ensemble's members; the action is the one with the larger reward under that
draw. Baselines: ``uniform`` (random actions), ``greedy`` (a scikit-learn
``MLPRegressor(hidden_layer_sizes=(50, 50))`` trained by ``partial_fit`` on random
minibatches of the buffer, taking the action of larger predicted reward) and ``oracle``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .settings import SETTINGS, format_params
from .tasks import Task, bayes_params, check_param_values, check_params_used, select_params

__all__ = ["BanditTask", "mushroom_rewards", "expected_rewards", "oracle_rewards",
           "run_bandit", "UniformPolicy", "OraclePolicy", "GreedyMLPPolicy",
           "ThompsonPolicy", "BANDIT_BUDGET", "WARM_UPDATE", "BASELINES", "summary_markdown"]

EAT, REJECT = 1, 0
BASELINES = ("uniform", "greedy", "oracle")

BANDIT_BUDGET = {
    "sgmcmc": dict(n_chains=4, n_burnin=500, n_samples=10, thinning=10, min_epochs=0,
                   batch_size=64),
    "vi": dict(n_iter=1000, min_epochs=0, batch_size=64),
    "ensemble": dict(n_iter=1000, min_epochs=0, batch_size=64),
    "mh": dict(n_burnin=200, n_samples=20, thinning=5),
}
"""Run length of every fit that starts from scratch, per method family (a full default
fit at every update would take days): 600 sampler steps on 4 chains keeping 40 draws,
1000 optimiser steps, minibatches of 64."""
WARM_UPDATE = {
    "sgmcmc": dict(n_burnin=100, n_samples=10, thinning=10),
    "vi": dict(n_iter=200),
    "ensemble": dict(n_iter=200),
    "mh": dict(n_burnin=50, n_samples=20, thinning=5),
}
"""Run length of a warm-started update (after the first fit): 200 steps."""
GREEDY_STEPS = (1000, 200)
"""Minibatch steps of the greedy MLP at its first update and at every later one."""


# ----------------------------------------------------------------- environment
def mushroom_rewards(edible: np.ndarray, actions: np.ndarray, unlucky: np.ndarray) -> np.ndarray:
    """Rewards of ``actions`` (1 eat, 0 reject) on mushrooms of class ``edible`` (bool);
    ``unlucky`` (bool) says whether eating a poisonous one costs -35 rather than +5.

    Examples
    --------
    >>> mushroom_rewards(np.array([1, 0, 0, 0]), np.array([1, 1, 1, 0]),
    ...                  np.array([1, 1, 0, 1])).tolist()
    [5.0, -35.0, 5.0, 0.0]
    """
    edible, unlucky = np.asarray(edible, bool), np.asarray(unlucky, bool)
    eat = np.where(edible, 5.0, np.where(unlucky, -35.0, 5.0))
    return np.where(np.asarray(actions) == EAT, eat, 0.0)


def expected_rewards(edible: np.ndarray, actions: np.ndarray, p: float) -> np.ndarray:
    """Expected reward of ``actions`` given the mushrooms' classes: eating a poisonous one
    is worth ``-35 p + 5 (1 - p)``.

    Examples
    --------
    >>> expected_rewards(np.array([1, 0, 0]), np.array([1, 1, 0]), 0.5).tolist()
    [5.0, -15.0, 0.0]
    """
    edible = np.asarray(edible, bool)
    eat = np.where(edible, 5.0, -35.0 * p + 5.0 * (1.0 - p))
    return np.where(np.asarray(actions) == EAT, eat, 0.0)


def oracle_rewards(edible: np.ndarray) -> np.ndarray:
    """The oracle's rewards: +5 for an edible mushroom (eaten), 0 for a poisonous one."""
    return np.where(np.asarray(edible, bool), 5.0, 0.0)


def _encode(contexts: np.ndarray) -> np.ndarray:
    """Every context with each action appended one-hot: rows ``2 i + a``."""
    m = len(contexts)
    X = np.repeat(contexts, 2, axis=0)
    actions = np.tile(np.eye(2), (m, 1))
    return np.hstack([X, actions])


def _inputs(contexts: np.ndarray, actions: np.ndarray) -> np.ndarray:
    return np.hstack([contexts, np.eye(2)[np.asarray(actions, int)]])


# ----------------------------------------------------------------- policies
class UniformPolicy:
    """Eat or reject with probability one half."""

    def act(self, contexts, rng, edible=None) -> np.ndarray:
        return rng.integers(0, 2, size=len(contexts))

    def update(self, X, y, rng) -> None:
        return None


class OraclePolicy(UniformPolicy):
    """Eat exactly the edible mushrooms (it is told which)."""

    def act(self, contexts, rng, edible=None) -> np.ndarray:
        return np.asarray(edible, int)


class GreedyMLPPolicy(UniformPolicy):
    """A plain MLP regressor of the reward, always taking the action it predicts best.

    Trained by ``partial_fit`` (Adam, continuing from its previous state) on
    ``steps[0]`` random minibatches of the buffer at the first update and
    ``steps[1]`` at every later one.
    """

    def __init__(self, random_state: int, batch_size: int = 64, steps=GREEDY_STEPS):
        from sklearn.neural_network import MLPRegressor

        self.model = MLPRegressor(hidden_layer_sizes=(50, 50), random_state=random_state)
        self.batch_size, self.steps, self.n_fits = batch_size, steps, 0

    def act(self, contexts, rng, edible=None) -> np.ndarray:
        if not self.n_fits:
            return super().act(contexts, rng)
        values = self.model.predict(_encode(contexts)).reshape(len(contexts), 2)
        return values.argmax(axis=1)

    def update(self, X, y, rng) -> None:
        n_steps = self.steps[0] if not self.n_fits else self.steps[1]
        for _ in range(n_steps):
            rows = rng.integers(0, len(X), size=min(self.batch_size, len(X)))
            self.model.partial_fit(X[rows], y[rows])
        self.n_fits += 1


class ThompsonPolicy(UniformPolicy):
    """Thompson sampling from a skfbnn regressor of the reward.

    Every fit from scratch runs ``budget``; with ``warm_start`` every fit after
    the first continues from the previous one's final state and runs ``update``.
    One stored draw per decision, uniformly at random.
    """

    def __init__(self, method: str, random_state: int, budget: dict, update: dict,
                 warm_start: bool = False, device: str = "cpu"):
        from ..estimators import BayesianNetRegressor

        self.model = BayesianNetRegressor(method=method, method_params=dict(budget),
                                          random_state=random_state, device=device)
        self.random_state, self.update_budget, self.warm_start = random_state, update, warm_start
        self.n_fits = 0

    def act(self, contexts, rng, edible=None) -> np.ndarray:
        if not self.n_fits:
            return super().act(contexts, rng)
        f, _ = self.model.predict_draws(_encode(contexts))
        f = np.asarray(f).reshape(f.shape[0], len(contexts), 2)
        draw = rng.integers(0, f.shape[0], size=len(contexts))  # one draw per decision
        return f[draw, np.arange(len(contexts))].argmax(axis=1)

    def update(self, X, y, rng) -> None:
        if self.n_fits and self.warm_start:
            params = {**self.model.method_params, **self.update_budget}
            self.model.set_params(warm_start=True, method_params=params)  # the warm-start switch
        else:
            self.model.set_params(random_state=self.random_state + 7919 * self.n_fits)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # short runs: convergence warnings expected
            self.model.fit(X, y)
        self.n_fits += 1


# ----------------------------------------------------------------- the loop
def _check_run(p: float, **counts: int) -> None:
    for name, value in counts.items():
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"{name} must be a positive int. Got {value!r}.")
    if not (isinstance(p, (int, float, np.number)) and 0 <= p <= 1):
        raise ValueError(f"p must lie in [0, 1]. Got {p!r}.")


def run_bandit(policy, contexts: np.ndarray, edible: np.ndarray, *, horizon: int,
               p: float = 0.5, seed: int = 0, buffer_size: int = 4096,
               update_every: int = 64, curve_every: int = 64) -> dict[str, Any]:
    """Run ``policy`` for ``horizon`` steps on the mushrooms ``contexts`` / ``edible``.

    Returns
    -------
    result : dict
        ``regret``, ``expected_regret``, ``reward``, ``oracle_reward`` (totals),
        ``eaten``, ``poisonous_eaten``, ``fit_time`` (seconds in ``update``),
        ``n_updates`` and ``curve``: ``(step, cumulative regret, cumulative
        expected regret)`` every ``curve_every`` steps and at the end, and
        ``actions`` (one per step).
    """
    _check_run(horizon=horizon, buffer_size=buffer_size, update_every=update_every,
               curve_every=curve_every, p=p)
    env = np.random.default_rng([seed, 0])  # the same for every method of a seed
    rows = env.integers(0, len(contexts), size=horizon)
    unlucky = env.random(horizon) < p
    agent = np.random.default_rng([seed, 1])
    edible = np.asarray(edible, bool)
    actions = np.empty(horizon, dtype=int)
    rewards = np.empty(horizon)
    buf_X = np.empty((0, contexts.shape[1] + 2))
    buf_y = np.empty(0)
    fit_time, n_updates = 0.0, 0
    for start in range(0, horizon, update_every):
        block = slice(start, min(start + update_every, horizon))
        ctx, ed = contexts[rows[block]], edible[rows[block]]
        a = np.asarray(policy.act(ctx, agent, edible=ed), dtype=int)
        actions[block] = a
        rewards[block] = mushroom_rewards(ed, a, unlucky[block])
        buf_X = np.vstack([buf_X, _inputs(ctx, a)])[-buffer_size:]
        buf_y = np.concatenate([buf_y, rewards[block]])[-buffer_size:]
        if block.stop < horizon:
            tic = time.perf_counter()
            policy.update(buf_X, buf_y, agent)
            fit_time += time.perf_counter() - tic
            n_updates += 1
    ed_all = edible[rows]
    oracle = oracle_rewards(ed_all)
    regret = np.cumsum(oracle - rewards)
    expected = np.cumsum(oracle - expected_rewards(ed_all, actions, p))
    steps = sorted({*range(curve_every, horizon + 1, curve_every), horizon})
    return {
        "regret": float(regret[-1]), "expected_regret": float(expected[-1]),
        "reward": float(rewards.sum()), "oracle_reward": float(oracle.sum()),
        "eaten": int(np.sum(actions == EAT)),
        "poisonous_eaten": int(np.sum((actions == EAT) & ~ed_all)),
        "fit_time": fit_time, "n_updates": n_updates,
        "curve": [(s, float(regret[s - 1]), float(expected[s - 1])) for s in steps],
        "actions": actions,
    }


# ----------------------------------------------------------------- the task
def _supports_warm_start() -> bool:
    from ..estimators import BayesianNetRegressor

    return "warm_start" in BayesianNetRegressor().get_params()


class BanditTask(Task):
    """The Mushroom bandit for registry methods (Thompson sampling) and the baselines.

    Parameters
    ----------
    methods : sequence of str
        Registry keys and any of ``uniform``, ``greedy``, ``oracle``.
    data_home : str or None
        Folder holding ``mushroom/agaricus-lepiota.data``.
    n_seeds : int, default=3
        Seeds ``seed, seed + 1, ...``; each is one run of every method.
    horizon : int, default=50000
    p : float, default=0.5
        Probability that eating a poisonous mushroom costs -35.
    warm_start : {"auto", "on", "off"}, default="auto"
        Whether updates continue from the previous fit (``"auto"``: when the
        estimators take a ``warm_start`` parameter).
    params : dict
        Overrides of :data:`BANDIT_BUDGET` (``name=value`` or ``method.name=value``);
        keys ``update.name`` override :data:`WARM_UPDATE`.
    """

    name = "bandit"
    key_columns = ("task", "dataset", "p", "horizon", "method", "warm_start", "seed",
                   *SETTINGS["bandit"])
    details = ("curves",)

    def __init__(self, methods: Sequence[str], *, data_home=None, n_seeds: int | None = None,
                 seed: int = 0, horizon: int = 50000, p: float = 0.5, buffer_size: int = 4096,
                 update_every: int = 64, curve_every: int = 64, warm_start: str = "auto",
                 device: str = "cpu", params: dict | None = None, dataset: str = "mushroom"):
        from ..inference.registry import METHODS

        self.methods = list(methods)
        for m in self.methods:
            if m not in METHODS and m not in BASELINES:
                raise ValueError(f"method must be one of {sorted(METHODS)} or "
                                 f"{list(BASELINES)}. Got {m!r}.")
        if dataset != "mushroom":
            raise ValueError(f"dataset must be 'mushroom' for the bandit. Got {dataset!r}.")
        if warm_start not in ("auto", "on", "off"):
            raise ValueError(f"warm_start must be 'auto', 'on' or 'off'. Got {warm_start!r}.")
        self.n_seeds = 3 if n_seeds is None else n_seeds
        _check_run(horizon=horizon, buffer_size=buffer_size, update_every=update_every,
                   curve_every=curve_every, n_seeds=self.n_seeds, p=p)
        self.data_home, self.seed, self.horizon, self.p = data_home, seed, horizon, float(p)
        self.buffer_size, self.update_every, self.curve_every = (buffer_size, update_every,
                                                                 curve_every)
        self.device = device
        params = dict(params or {})
        self.update_params = {k[len("update."):]: v for k, v in params.items()
                              if k.startswith("update.")}
        self.params = {k: v for k, v in params.items() if not k.startswith("update.")}
        bayes = [m for m in self.methods if m in METHODS]
        self._valid = {m: bayes_params(m, "regression") for m in bayes}
        check_params_used(self.params, bayes, self._valid)
        check_params_used(self.update_params, bayes, self._valid)
        check_param_values(self.params, bayes, "regression")
        check_param_values(self.update_params, bayes, "regression")
        warm = _supports_warm_start() if warm_start == "auto" else warm_start == "on"
        if warm and not _supports_warm_start():
            raise ValueError("warm_start='on' needs estimators with a warm_start parameter; "
                             "this version has none (use 'off').")
        self.warm = warm

    def _warm_label(self, method: str) -> str:
        return "n/a" if method in BASELINES else ("on" if self.warm else "off")

    def settings(self, method: str) -> dict:
        """The setting columns of ``method``'s cells (its overrides, warm updates'
        prefixed ``update.``)."""
        params = {}
        if method not in BASELINES:
            valid = self._valid[method]
            params = {**select_params(method, self.params, valid),
                      **{f"update.{k}": v for k, v in
                         select_params(method, self.update_params, valid).items()}}
        return {"buffer_size": self.buffer_size, "update_every": self.update_every,
                "curve_every": self.curve_every, "params": format_params(params)}

    def cells(self) -> list[dict]:
        return [{"task": self.name, "dataset": "mushroom", "p": self.p, "horizon": self.horizon,
                 "method": m, "warm_start": self._warm_label(m), "seed": self.seed + k,
                 **self.settings(m)}
                for m in self.methods for k in range(self.n_seeds)]

    def budgets(self, method: str) -> tuple[dict, dict]:
        """The scratch and warm-update run lengths of a registry method."""
        from ..inference.registry import METHODS

        family = METHODS[method].family
        valid = self._valid[method]
        budget = {k: v for k, v in BANDIT_BUDGET[family].items() if k in valid}
        update = {k: v for k, v in WARM_UPDATE[family].items() if k in valid}
        budget.update(select_params(method, self.params, valid))
        update.update(select_params(method, self.update_params, valid))
        return budget, update

    def policy(self, method: str, seed: int):
        if method == "uniform":
            return UniformPolicy()
        if method == "oracle":
            return OraclePolicy()
        if method == "greedy":
            return GreedyMLPPolicy(random_state=seed)
        budget, update = self.budgets(method)
        return ThompsonPolicy(method, random_state=seed, budget=budget, update=update,
                              warm_start=self.warm, device=self.device)

    def run_cell(self, cell: dict) -> dict[str, list[dict]]:
        from ..datasets import load_mushroom
        from ..datasets._fetch import data_home_or_fetch

        data_home = data_home_or_fetch(self.data_home, "mushroom")  # none given: download once
        X, y = load_mushroom(data_home=data_home, return_X_y=True)
        tic = time.perf_counter()
        result = run_bandit(self.policy(cell["method"], cell["seed"]), X, y,
                            horizon=self.horizon, p=self.p, seed=cell["seed"],
                            buffer_size=self.buffer_size, update_every=self.update_every,
                            curve_every=self.curve_every)
        wall = time.perf_counter() - tic
        keys = ("regret", "expected_regret", "reward", "oracle_reward", "eaten",
                "poisonous_eaten", "n_updates", "fit_time")
        record = {**cell, **{k: result[k] for k in keys}, "wall_time": wall}
        curves = [{**cell, "step": s, "regret": r, "expected_regret": e}
                  for s, r, e in result["curve"]]
        return {"records": [record], "curves": curves}

    def progress(self, cell: dict, records: list[dict]) -> str:
        r = records[0]
        return (f"bandit p={r['p']:g} {r['method']} (warm start {r['warm_start']}) seed "
                f"{r['seed']}: regret {r['regret']:.0f} expected {r['expected_regret']:.0f} "
                f"after {r['horizon']} steps, fit {r['fit_time']:.1f}s")


from .bandit_summary import (  # noqa: E402,F401  (the tables, importable from here)
    relative_to_uniform,
    summary_markdown,
    warm_start_table,
)
