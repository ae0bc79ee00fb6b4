"""The Mushroom bandit's agents: uniform, oracle, a greedy MLP, and Thompson sampling from a
skfbnn regressor of the reward.

Agents model the reward of a (context, action) pair, the action one-hot encoded after the
context's features. Thompson sampling takes one posterior draw per decision, uniformly among
the fitted model's stored draws (``predict_draws``): a sampler's kept chain states, a
mean-field method's draws from its variational posterior, an ensemble's members; the action
is the one with the larger reward under that draw.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from ..estimators import BayesianNetRegressor
from ..exceptions import DivergenceError
from .bandit_env import encode_actions
from .configs import split_params

__all__ = ["UniformPolicy", "OraclePolicy", "GreedyMLPPolicy", "ThompsonPolicy",
           "GREEDY_STEPS"]

GREEDY_STEPS = (1000, 200)
"""Minibatch steps of the greedy MLP at its first update and at every later one."""


class UniformPolicy:
    """Eat or reject with probability one half."""

    failed_updates = 0
    """Updates whose fit failed (a policy that fits a model counts them)."""

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
        values = self.model.predict(encode_actions(contexts)).reshape(len(contexts), 2)
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
    One stored draw per decision, uniformly at random. An update whose fit diverges
    (:class:`~skfbnn.exceptions.DivergenceError`) is counted in ``failed_updates`` and the
    policy keeps acting on the previous fit (at random before the first).
    """

    def __init__(self, method: str, random_state: int, budget: dict, update: dict,
                 warm_start: bool = False, device: str = "cpu"):
        own, rest = split_params(budget, BayesianNetRegressor)
        self.model = BayesianNetRegressor(method=method, method_params=rest,
                                          random_state=random_state, device=device, **own)
        self.random_state, self.update_budget, self.warm_start = random_state, update, warm_start
        self.n_fits = 0

    def act(self, contexts, rng, edible=None) -> np.ndarray:
        if not self.n_fits:
            return super().act(contexts, rng)
        f, _ = self.model.predict_draws(encode_actions(contexts))
        f = np.asarray(f).reshape(f.shape[0], len(contexts), 2)
        draw = rng.integers(0, f.shape[0], size=len(contexts))  # one draw per decision
        return f[draw, np.arange(len(contexts))].argmax(axis=1)

    def update(self, X, y, rng) -> None:
        if self.n_fits and self.warm_start:
            own, rest = split_params(self.update_budget, BayesianNetRegressor)
            self.model.set_params(warm_start=True,  # the warm-start switch
                                  method_params={**self.model.method_params, **rest}, **own)
        else:
            self.model.set_params(random_state=self.random_state + 7919 * self.n_fits)
        previous = copy.deepcopy(self.model) if self.n_fits else None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # short runs: convergence warnings expected
                self.model.fit(X, y)
        except DivergenceError:
            self.failed_updates += 1
            if previous is not None:
                self.model = previous
            return
        self.n_fits += 1
