"""Tests for the Mushroom bandit's agents (skfbnn.bench.bandit_policies): Thompson sampling's
draw choice."""

from __future__ import annotations

import numpy as np

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
