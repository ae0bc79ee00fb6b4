"""Tests for skfbnn.diagnostics.checks (the warnings a fit reports)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from skfbnn.diagnostics import SamplerWarning, summarize

from .test_convergence import _stationary_ar1


# --------------------------------------------------------------------------- #
# 5. summarize()
# --------------------------------------------------------------------------- #
def test_summarize_good_chains_no_warnings() -> None:
    draws = np.random.default_rng(4).standard_normal((4, 1000, 8))
    summary, warnings = summarize(draws)
    assert warnings == []
    assert summary["r_hat"].shape == summary["ess_bulk"].shape == (8,)
    assert summary["ess_tail"].shape == (8,)
    assert summary["max_r_hat"] == pytest.approx(np.max(summary["r_hat"]))
    assert summary["min_ess_bulk"] == pytest.approx(np.min(summary["ess_bulk"]))
    assert summary["min_ess_tail"] == pytest.approx(np.min(summary["ess_tail"]))
    assert summary["max_r_hat"] < 1.01 and summary["min_ess_bulk"] > 400


def test_summarize_bad_mixing_warns_rhat() -> None:
    draws = np.random.default_rng(5).standard_normal((4, 1000, 8))
    draws[3] += 2.0
    _, warnings = summarize(draws, label="probe predictions")
    rhat = [w for w in warnings if w.kind == "rhat"]
    assert len(rhat) == 1
    assert isinstance(rhat[0], SamplerWarning) and rhat[0].level == "warning"
    assert rhat[0].extra["max_r_hat"] > 1.01
    assert "8 probe predictions" in rhat[0].message and "n_burnin" in rhat[0].message
    # No R-hat warning from a single chain, however the chains look.
    _, single = summarize(draws[3:] + np.linspace(0, 5, 1000)[:, None])
    assert not [w for w in single if w.kind == "rhat"]


def test_summarize_low_ess_warns_ess() -> None:
    draws = _stationary_ar1(np.random.default_rng(6), 0.95, (4, 500 * 3))
    summary, warnings = summarize(draws.reshape(4, 500, 3), min_ess_per_chain=100)
    ess = [w for w in warnings if w.kind == "ess"]
    assert len(ess) == 1 and summary["min_ess_bulk"] < 400
    assert ess[0].extra["required"] == 400
    # The same draws pass a requirement they meet.
    _, relaxed = summarize(draws.reshape(4, 500, 3), min_ess_per_chain=1)
    assert not [w for w in relaxed if w.kind == "ess"]


def test_summarize_stuck_sampler_warns() -> None:
    draws = np.random.default_rng(7).standard_normal((4, 1000, 3))
    draws[..., 0] = 1.0
    summary, warnings = summarize(draws)
    assert np.isnan(summary["ess_bulk"][0]) and np.isfinite(summary["min_ess_bulk"])
    (ess,) = [w for w in warnings if w.kind == "ess"]
    assert ess.extra["n_undefined"] == 1
    summary, warnings = summarize(np.zeros((4, 100, 2)))
    assert np.isnan(summary["max_r_hat"]) and np.isnan(summary["min_ess_tail"])
    assert [w.kind for w in warnings] == ["ess"]


def test_sampler_warning_is_frozen() -> None:
    w = SamplerWarning("divergence", "3 divergent transitions")
    assert w.level == "warning" and w.extra == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.kind = "jitter"  # type: ignore[misc]


def test_lagging_chains_flags_only_the_escaped_chain():
    from skfbnn.diagnostics import lagging_chains

    rng = np.random.default_rng(3)
    trace = 250.0 + 5.0 * rng.normal(size=(300, 4))
    assert lagging_chains(trace) == []
    trace[:, 1] -= 2500.0  # yacht split 10's escaped fSGHMC chain sat ~2400 nats lower
    assert lagging_chains(trace) == [1]
    trace[:, 1] += 2500.0 - 20.0  # within ordinary between-chain variation: not flagged
    assert lagging_chains(trace) == []


# ------------------------------------------------------ optimisation traces
def test_optimisation_warnings_on_known_traces():
    from skfbnn.diagnostics import optimisation_warnings

    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 1000)[:, None]
    noise = 0.01 * rng.normal(size=(1000, 3))
    converged = 1 - np.exp(-20 * t) + noise
    assert optimisation_warnings(converged) == []
    climbing = t + noise  # still rising linearly at the end
    kinds = [w.kind for w in optimisation_warnings(climbing)]
    assert kinds == ["convergence"]
    fell = np.where(t < 0.5, 1 - np.exp(-20 * t), 1 - (t - 0.5)) + noise
    fell[:, 0] = converged[:, 0]  # only members 1 and 2 fall back
    found = optimisation_warnings(fell)
    assert [w.kind for w in found] == ["divergence"]
    assert found[0].extra["members"] == [1, 2]
    assert optimisation_warnings(np.zeros((30, 2))) == []  # too short to judge


# ------------------------------------------------------- predictive spread
def test_predictive_spread_closed_form_and_units():
    from skfbnn.diagnostics import predictive_spread

    rng = np.random.default_rng(0)
    y = rng.normal(3.0, 2.0, size=(50, 2))
    centre, sd = y.mean(0), y.std(0)
    # Draw d predicts mean(y) + a_d everywhere with noise s_d: spread^2 = mean(a^2 + s^2)/sd^2.
    a = np.array([0.5, -1.0, 2.0])[:, None, None] * np.array([1.0, 3.0])
    s = np.array([1.0, 0.5, 0.25])[:, None, None] * np.array([2.0, 1.0])
    f = centre + a + np.zeros((3, 50, 2))
    expected = np.sqrt((a[:, 0] ** 2 + s[:, 0] ** 2).mean(0)) / sd
    np.testing.assert_allclose(predictive_spread(f, s, y), expected, rtol=1e-12)
    # Per-point noise equal to the per-draw noise gives the same; units cancel.
    np.testing.assert_allclose(predictive_spread(f, np.broadcast_to(s, f.shape), y), expected,
                               rtol=1e-12)
    np.testing.assert_allclose(predictive_spread(1e-9 * f, 1e-9 * s, 1e-9 * y), expected,
                               rtol=1e-9)
    np.testing.assert_allclose(predictive_spread(f, None, y),
                               np.sqrt((a[:, 0] ** 2).mean(0)) / sd, rtol=1e-12)
    np.testing.assert_allclose(predictive_spread(f, s, y, scale=2 * sd), expected / 2,
                               rtol=1e-12)


def test_predictive_spread_non_finite_and_constant():
    from skfbnn.diagnostics import predictive_spread

    y = np.c_[np.arange(4.0), np.arange(4.0), np.full(4, 5.0)]
    f = np.zeros((2, 4, 3))
    noise = np.ones((2, 1, 3))
    f[1, 2, 0] = np.nan
    noise[0, 0, 1] = np.inf
    spread = predictive_spread(f, noise, y)
    assert spread[0] == np.inf and spread[1] == np.inf and np.isnan(spread[2])
    huge = np.full((2, 4, 3), 1e300)  # finite, but its square overflows
    assert (predictive_spread(huge, None, y)[:2] == np.inf).all()


def test_predictive_mixing_measures_in_predictive_std():
    from skfbnn.diagnostics import predictive_mixing

    rng = np.random.default_rng(0)
    mixed = rng.normal(size=(4, 200, 5))
    summary, found = predictive_mixing(mixed, np.full(5, 4.0))  # noise var 3 + draw var 1
    # iid chains: chain means spread ~ 1/sqrt(200), mc error ~ 1/sqrt(800), both / 2
    assert summary["max_chain_disagreement"] < 0.1 and summary["max_mc_error"] < 0.05
    assert found == []
    offset = mixed + np.array([0.0, 0.0, 3.0, 3.0])[:, None, None]
    summary, found = predictive_mixing(offset, np.full(5, 4.0))
    # chain means 0, 0, 3, 3: their std is sqrt(3) = 1.73, in units of sd 2: 0.87
    np.testing.assert_allclose(summary["chain_disagreement"], np.sqrt(3) / 2, atol=0.05)
    assert "rhat" in {w.kind for w in found}
    # the same stuck chains under a much wider predictive do not matter
    summary, found = predictive_mixing(offset, np.full(5, 400.0))
    assert "rhat" not in {w.kind for w in found}
    assert summary["max_r_hat"] > 1.5  # R-hat alone would have flagged them
