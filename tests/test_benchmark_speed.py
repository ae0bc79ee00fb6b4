"""``benchmarks/speed.py warm-refit`` and ``prior-grad`` at a tiny size: a row per method or
prior, and the warm refit's two ways differ in what they measure (the GP prior carried over
or built anew)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def modules(monkeypatch):
    import skfbnn.device

    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.setattr(skfbnn.device, "FIT_THREADS", skfbnn.device.FIT_THREADS)
    import speed
    import speed_warm

    return speed, speed_warm


def test_the_table_has_a_row_per_method(modules):
    speed, _ = modules
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        speed.main(["warm-refit", "--methods", "sgld", "fsgld", "--rows", "200",
                    "--features", "12", "--rounds", "1"])
    rows = {cells[0]: cells[1:] for line in out.getvalue().splitlines()
            if line.startswith("| ") and (cells := [c.strip() for c in
                                                    line.strip("|").split("|")])}
    assert set(rows) == {"method", "sgld", "fsgld"}
    kept, fresh, ratio, against = (float(c) for c in rows["fsgld"])
    half = 0.005  # each printed to two decimals
    assert 0 < kept and 0 < fresh
    assert (fresh - half) / (kept + half) - half <= ratio <= (fresh + half) / (kept - half) + half
    assert float(rows["sgld"][3]) == 1.0


def test_only_the_fresh_way_builds_the_prior_anew(modules, monkeypatch):
    import skfbnn.priors.gp as gp_module

    _, speed_warm = modules
    X, y = speed_warm.bandit_like_rows(200, 12)
    assert set(X.ravel().tolist()) == {0.0, 1.0} and (X[:, :10].sum(1) == 2).all()
    model = speed_warm.warm_model("fsgld", X, y)
    calls = []
    real = gp_module.median_lengthscale
    monkeypatch.setattr(gp_module, "median_lengthscale", lambda X: calls.append(1) or real(X))
    speed_warm.timed_refit(model, X, y, keep_prior=True)
    assert not calls
    speed_warm.timed_refit(model, X, y, keep_prior=False)
    assert len(calls) == 1


SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.skipif(not (SHARED / "mushroom").is_dir(), reason="no Mushroom data here")
def test_the_mushroom_buffer_is_the_bandits_kind(modules):
    _, speed_warm = modules
    X, y = speed_warm.mushroom_buffer(SHARED, 300)
    assert X.shape == (300, 119) and set(np.unique(X)) == {0.0, 1.0}
    eat = X[:, -1] == 1  # the action, one-hot in the last two columns
    assert (X[:, -2:].sum(1) == 1).all() and 0 < eat.mean() < 1
    assert (y[~eat] == 0).all() and set(np.unique(y[eat])) <= {5.0, -35.0}
    assert (y == -35.0).any()


def test_the_prior_gradient_table_has_both_priors(modules):
    speed, _ = modules
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        speed.main(["prior-grad", "--chains", "2", "--blocks", "2", "--calls", "3"])
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| ")]
    assert [r.split("|")[1].strip() for r in rows[1:]] == ["learn", "isotropic"]
    for row in rows[1:]:
        assert all(float(c) > 0 for c in row.strip("|").split("|")[2:])
