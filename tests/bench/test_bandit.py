"""Tests for the Mushroom bandit (skfbnn.bench.bandit): reward model, regret bookkeeping
against scripted policies, buffer and update schedule, Thompson sampling's draw choice."""

from __future__ import annotations

import numpy as np
import pytest

from skfbnn.bench.bandit import (
    BanditTask,
    ThompsonPolicy,
    _supports_warm_start,
    expected_rewards,
    mushroom_rewards,
    oracle_rewards,
    relative_to_uniform,
    run_bandit,
)
from tests.conftest import SHARED_DATA

needs_mushroom = pytest.mark.skipif(not (SHARED_DATA / "mushroom").is_dir(),
                                    reason="Mushroom not found")


def test_reward_model():
    edible = np.array([1, 1, 0, 0, 0, 0], bool)
    actions = np.array([1, 0, 1, 1, 0, 0])
    unlucky = np.array([1, 0, 1, 0, 1, 0], bool)
    assert mushroom_rewards(edible, actions, unlucky).tolist() == [5, 0, -35, 5, 0, 0]
    for p in (0.4, 0.5, 0.6):
        assert expected_rewards(edible, actions, p).tolist() == pytest.approx(
            [5, 0, -35 * p + 5 * (1 - p), -35 * p + 5 * (1 - p), 0, 0])
    assert oracle_rewards(edible).tolist() == [5, 5, 0, 0, 0, 0]


class Scripted:
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
    task = BanditTask(["oracle"], n_seeds=1)
    oracle = run_bandit(task.policy("oracle", 0), X, edible, horizon=90, seed=1)
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


def test_relative_to_uniform():
    rows = [{"method": m, "p": 0.5, "horizon": 10, "seed": s, "regret": r}
            for m, s, r in [("uniform", 0, 200.0), ("uniform", 1, 100.0), ("sgld", 0, 50.0),
                            ("sgld", 1, 50.0), ("bbb", 2, 10.0)]]
    rel = {(r["method"], r["seed"]): r["relative_regret"] for r in relative_to_uniform(rows)}
    assert rel[("sgld", 0)] == 25.0 and rel[("sgld", 1)] == 50.0
    assert rel[("uniform", 0)] == 100.0 and np.isnan(rel[("bbb", 2)])


@needs_mushroom
def test_task_runs_baselines_and_a_thompson_sampler():
    task = BanditTask(["uniform", "greedy", "sgld"], data_home=SHARED_DATA, n_seeds=1,
                      horizon=128, seed=5, warm_start="off",
                      params={"n_burnin": 20, "n_samples": 2, "thinning": 2, "n_chains": 2})
    assert task.budgets("sgld")[0] == dict(n_chains=2, n_burnin=20, n_samples=2, thinning=2,
                                           min_epochs=0, batch_size=64)
    results = {c["method"]: task.run_cell(c) for c in task.cells()}
    for out in results.values():
        (record,) = out["records"]
        assert record["seed"] == 5 and record["horizon"] == 128 and record["n_updates"] == 1
        assert record["reward"] == record["oracle_reward"] - record["regret"]
        assert [c["step"] for c in out["curves"]] == [64, 128]
    assert results["uniform"]["records"][0]["warm_start"] == "n/a"
    assert results["sgld"]["records"][0]["warm_start"] == "off"
    assert results["sgld"]["records"][0]["fit_time"] > 0


def test_warm_start_switch_follows_the_estimators():
    if _supports_warm_start():
        assert BanditTask(["sgld"], warm_start="auto").warm
    else:
        assert not BanditTask(["sgld"], warm_start="auto").warm
        with pytest.raises(ValueError, match="warm_start='on' needs"):
            BanditTask(["sgld"], warm_start="on")
    with pytest.raises(ValueError, match="method must be one of"):
        BanditTask(["thompson"])
