"""Tests for the Mushroom bandit's environment (skfbnn.bench.bandit_env): reward model, regret
bookkeeping against scripted policies, buffer and update schedule."""

from __future__ import annotations

import numpy as np
import pytest

from skfbnn.bench.bandit_env import expected_rewards, mushroom_rewards, oracle_rewards, run_bandit
from skfbnn.bench.bandit_policies import OraclePolicy, UniformPolicy


def test_reward_model():
    edible = np.array([1, 1, 0, 0, 0, 0], bool)
    actions = np.array([1, 0, 1, 1, 0, 0])
    unlucky = np.array([1, 0, 1, 0, 1, 0], bool)
    assert mushroom_rewards(edible, actions, unlucky).tolist() == [5, 0, -35, 5, 0, 0]
    for p in (0.4, 0.5, 0.6):
        assert expected_rewards(edible, actions, p).tolist() == pytest.approx(
            [5, 0, -35 * p + 5 * (1 - p), -35 * p + 5 * (1 - p), 0, 0])
    assert oracle_rewards(edible).tolist() == [5, 5, 0, 0, 0, 0]


class Scripted(UniformPolicy):
    """Eats always (or never) and remembers what it saw and what it was trained on."""

    def __init__(self, eat):
        self.eat, self.seen, self.updates = eat, [], []

    def act(self, contexts, rng, edible=None):
        self.seen.append(np.asarray(edible, bool))
        return np.full(len(contexts), int(self.eat))

    def update(self, X, y, rng):
        self.updates.append((X.copy(), y.copy()))


def _toy(n=30, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, size=(n, d)).astype(float), rng.integers(0, 2, size=n)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_regret_of_always_eating_by_hand(p):
    X, edible = _toy()
    policy = Scripted(eat=True)
    out = run_bandit(policy, X, edible, horizon=100, p=p, seed=3, update_every=16)
    seen = np.concatenate(policy.seen)
    poisonous = int(np.sum(~seen))
    # p = 1: every poisonous one costs -35 against the oracle's 0; p = 0: each gives +5
    assert out["regret"] == (35.0 * poisonous if p == 1 else -5.0 * poisonous)
    assert out["expected_regret"] == pytest.approx(out["regret"])
    assert out["eaten"] == 100 and out["poisonous_eaten"] == poisonous
    assert out["oracle_reward"] == 5.0 * np.sum(seen)
    assert out["reward"] == out["oracle_reward"] - out["regret"]


def test_regret_of_rejecting_and_of_the_oracle():
    X, edible = _toy()
    reject = Scripted(eat=False)
    out = run_bandit(reject, X, edible, horizon=90, p=0.5, seed=1, update_every=32)
    assert out["regret"] == 5.0 * np.sum(np.concatenate(reject.seen)) == out["expected_regret"]
    oracle = run_bandit(OraclePolicy(), X, edible, horizon=90, seed=1)
    assert oracle["regret"] == oracle["expected_regret"] == 0.0
    # common random numbers: the same seed shows every policy the same mushrooms
    again = Scripted(eat=True)
    run_bandit(again, X, edible, horizon=90, p=0.5, seed=1, update_every=32)
    np.testing.assert_array_equal(np.concatenate(again.seen), np.concatenate(reject.seen))


def test_expected_regret_of_eating_at_p_half():
    X, edible = _toy()
    policy = Scripted(eat=True)
    out = run_bandit(policy, X, edible, horizon=64, p=0.5, seed=0)
    assert out["expected_regret"] == 15.0 * np.sum(~np.concatenate(policy.seen))


def test_buffer_update_schedule_and_curve():
    X, edible = _toy(n=12)
    policy = Scripted(eat=True)
    out = run_bandit(policy, X, edible, horizon=23, p=1.0, seed=0, buffer_size=10,
                     update_every=4, curve_every=5)
    assert out["n_updates"] == len(policy.updates) == 5  # after steps 4, 8, ..., 20
    sizes = [len(y) for _, y in policy.updates]
    assert sizes == [4, 8, 10, 10, 10]  # the most recent 10 tuples
    Xb, yb = policy.updates[-1]
    assert Xb.shape == (10, X.shape[1] + 2) and np.all(Xb[:, -1] == 1)  # action "eat"
    seen = np.concatenate(policy.seen)[:20]
    np.testing.assert_array_equal(yb, np.where(seen[10:20], 5.0, -35.0))
    assert [s for s, _, _ in out["curve"]] == [5, 10, 15, 20, 23]
    assert out["curve"][-1][1] == out["regret"]
    with pytest.raises(ValueError, match="horizon must be a positive int"):
        run_bandit(policy, X, edible, horizon=0)
