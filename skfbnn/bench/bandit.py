"""The Mushroom contextual bandit (Blundell et al. 2015) with Thompson sampling, as a
``skfbnn bench`` task.

The environment and its loop are in :mod:`skfbnn.bench.bandit_env`, the agents in
:mod:`skfbnn.bench.bandit_policies`. Agents learn from the most recent ``buffer_size``
(4096) tuples in minibatches of ``batch_size`` (64), updated every ``update_every`` (64)
steps; before the first update every agent acts uniformly at random. Baselines: ``uniform``
(random actions), ``greedy`` (a scikit-learn ``MLPRegressor(hidden_layer_sizes=(50, 50))``
trained by ``partial_fit`` on random minibatches of the buffer, taking the action of larger
predicted reward) and ``oracle``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .bandit_env import check_run, expected_rewards, mushroom_rewards, oracle_rewards, run_bandit
from .bandit_policies import GreedyMLPPolicy, OraclePolicy, ThompsonPolicy, UniformPolicy
from .settings import SETTINGS, format_params
from .tasks import Task, bayes_params, check_param_values, check_params_used, select_params

__all__ = ["BanditTask", "mushroom_rewards", "expected_rewards", "oracle_rewards",
           "run_bandit", "UniformPolicy", "OraclePolicy", "GreedyMLPPolicy",
           "ThompsonPolicy", "BANDIT_BUDGET", "WARM_UPDATE", "BASELINES", "summary_markdown"]

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
    p : float or sequence of float, default=0.5
        Probability that eating a poisonous mushroom costs -35; with several, a cell for
        each (in the order given, every method and seed at one ``p`` before the next).
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
        ps = [p] if isinstance(p, (int, float, np.number)) else list(p)
        if not ps:
            raise ValueError("p must be a probability or a non-empty sequence of them. Got [].")
        for value in ps:
            check_run(horizon=horizon, buffer_size=buffer_size, update_every=update_every,
                       curve_every=curve_every, n_seeds=self.n_seeds, p=value)
        self.data_home, self.seed, self.horizon = data_home, seed, horizon
        self.ps = tuple(float(value) for value in ps)
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
        return [{"task": self.name, "dataset": "mushroom", "p": p, "horizon": self.horizon,
                 "method": m, "warm_start": self._warm_label(m), "seed": self.seed + k,
                 **self.settings(m)}
                for p in self.ps for m in self.methods for k in range(self.n_seeds)]

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
                            horizon=self.horizon, p=cell["p"], seed=cell["seed"],
                            buffer_size=self.buffer_size, update_every=self.update_every,
                            curve_every=self.curve_every)
        wall = time.perf_counter() - tic
        keys = ("regret", "expected_regret", "reward", "oracle_reward", "eaten",
                "poisonous_eaten", "n_updates", "failed_updates", "fit_time")
        record = {**cell, **{k: result[k] for k in keys}, "wall_time": wall}
        curves = [{**cell, "step": s, "regret": r, "expected_regret": e}
                  for s, r, e in result["curve"]]
        return {"records": [record], "curves": curves}

    def progress(self, cell: dict, records: list[dict]) -> str:
        r = records[0]
        return (f"bandit p={r['p']:g} {r['method']} (warm start {r['warm_start']}) seed "
                f"{r['seed']}: regret {r['regret']:.0f} expected {r['expected_regret']:.0f} "
                f"after {r['horizon']} steps, fit {r['fit_time']:.1f}s"
                + (f", {r['failed_updates']} failed updates" if r["failed_updates"] else ""))


from .bandit_summary import (  # noqa: E402,F401  (the tables, importable from here)
    relative_to_uniform,
    summary_markdown,
    warm_start_table,
)
