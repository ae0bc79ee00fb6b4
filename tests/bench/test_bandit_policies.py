"""Tests for the Mushroom bandit's agents (skfbnn.bench.bandit_policies): Thompson sampling's
draw choice."""

from __future__ import annotations

import numpy as np
import pytest

from skfbnn.bench.bandit_policies import ThompsonPolicy


class FakeModel:
    """predict_draws: draw s values action 1 above action 0 iff s is odd."""

    def predict_draws(self, Z):
        n = len(Z) // 2
        f = np.zeros((4, 2 * n))
        f[1::2, 1::2] = 1.0
        f[0::2, 0::2] = 1.0
        return f, np.ones(4)


def test_thompson_takes_one_draw_per_decision():
    policy = ThompsonPolicy.__new__(ThompsonPolicy)
    policy.model, policy.n_fits = FakeModel(), 1
    rng = np.random.default_rng(0)
    actions = policy.act(np.zeros((4000, 3)), rng)
    draws = np.random.default_rng(0).integers(0, 4, size=4000)
    np.testing.assert_array_equal(actions, draws % 2)  # the sampled draw's best action
    policy.n_fits = 0  # before the first fit: uniform
    assert set(policy.act(np.zeros((50, 3)), rng)) == {0, 1}


class FlakyModel:
    """Fits count up; the fits listed in ``fail`` diverge (and lose the fitted state, as
    a failed estimator fit does)."""

    def __init__(self, fail):
        self.fail, self.calls, self.fitted, self.method_params = set(fail), 0, None, {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        from skfbnn.exceptions import SamplerDivergenceError

        self.calls += 1
        self.fitted = None
        if self.calls in self.fail:
            raise SamplerDivergenceError("diverged")
        self.fitted = self.calls
        return self


@pytest.mark.parametrize("warm", [False, True])
def test_a_diverged_update_keeps_the_previous_fit_and_is_counted(warm):
    policy = ThompsonPolicy.__new__(ThompsonPolicy)
    policy.model, policy.n_fits, policy.random_state = FlakyModel(fail={1, 3}), 0, 0
    policy.warm_start, policy.update_budget = warm, {}
    X, y, rng = np.zeros((4, 3)), np.zeros(4), np.random.default_rng(0)
    policy.update(X, y, rng)  # the first fit diverges: still acting at random
    assert policy.failed_updates == 1 and policy.n_fits == 0
    policy.update(X, y, rng)
    assert policy.model.fitted == 2 and policy.n_fits == 1
    policy.update(X, y, rng)  # diverges: the fit of update 2 stays
    assert policy.failed_updates == 2 and policy.n_fits == 1 and policy.model.fitted == 2
