"""Tests for the Mushroom bandit task (skfbnn.bench.bandit): its cells, baselines and a
Thompson sampler on the real data, the warm-start switch, and the regret relative to uniform."""

from __future__ import annotations

import numpy as np
import pytest

from skfbnn.bench.bandit import BanditTask, _supports_warm_start, relative_to_uniform
from tests.conftest import SHARED_DATA

needs_mushroom = pytest.mark.skipif(not (SHARED_DATA / "mushroom").is_dir(),
                                    reason="Mushroom not found")


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


@needs_mushroom
def test_several_p_make_a_cell_each_and_each_cell_runs_its_p():
    task = BanditTask(["uniform", "oracle"], data_home=SHARED_DATA, n_seeds=2, horizon=64,
                      p=[0.6, 0.4])
    cells = task.cells()
    assert [(c["p"], c["method"], c["seed"]) for c in cells] == [
        (p, m, s) for p in (0.6, 0.4) for m in ("uniform", "oracle") for s in (0, 1)]
    # the coin's probability reaches the run: always eating costs more at the larger p
    eat = BanditTask(["uniform"], data_home=SHARED_DATA, n_seeds=1, horizon=64, p=[0.0, 1.0])
    expected = {c["p"]: eat.run_cell(c)["records"][0]["expected_regret"] for c in eat.cells()}
    assert expected[1.0] > expected[0.0]
    for bad in ([], [0.5, 2.0]):
        with pytest.raises(ValueError, match="p"):
            BanditTask(["uniform"], p=bad)


@needs_mushroom
def test_an_estimator_parameter_reaches_the_estimator_not_its_method_params():
    """``--set sgld.noise_std=...`` (a parameter of the estimator, not of the method) sets the
    regressor's own parameter, at the first fit and at warm updates."""
    task = BanditTask(["sgld"], data_home=SHARED_DATA, n_seeds=1, horizon=192,
                      warm_start="on", params={"sgld.noise_std": 1.0, "n_burnin": 20,
                                               "n_samples": 2, "thinning": 2, "n_chains": 2})
    policy = task.policy("sgld", 0)
    assert policy.model.noise_std == 1.0
    assert "noise_std" not in policy.model.method_params
    (cell,) = task.cells()
    assert "noise_std=1.0" in cell["params"].split(";")
    (record,) = task.run_cell(cell)["records"]  # a first fit, then a warm update
    assert record["n_updates"] == 2 and record["failed_updates"] == 0
