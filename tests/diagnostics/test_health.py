"""The boundaries of the fit-health checks (``skfbnn.diagnostics.health``), pinned with
constructed predictions on both sides of each threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from skfbnn.diagnostics.health import (
    CHANCE_SE,
    NOISE_WARNING,
    SPREAD_WARNING,
    classification_checks,
    regression_checks,
)
from skfbnn.exceptions import NoiseOnlyFitWarning, PoorFitWarning, SamplerDivergenceWarning
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.posterior import Particles

N = 200


def _targets() -> torch.Tensor:
    y = torch.as_tensor(np.random.default_rng(0).normal(size=(N, 1)), dtype=torch.float64)
    return (y - y.mean()) / y.std(correction=0)  # standardised, as the estimators encode


def _regression(f: torch.Tensor, y: torch.Tensor, log_noise: float | None = None):
    """``regression_checks`` of two draws predicting ``f`` ``(N, 1)`` at every row, with a
    fixed noise (None) or a learned one of ``log_noise`` (the draws' ``log_noise``)."""
    learned = log_noise is not None
    draws = {"log_noise": torch.full((1, 2, 1), float(log_noise))} if learned else {
        "w": torch.zeros(1, 2, 1)}
    likelihood = GaussianLikelihood(None if learned else [0.1])
    X = np.arange(N, dtype=float)[:, None]

    def outputs(rows):
        return f[torch.as_tensor(rows[:, 0], dtype=torch.long)].expand(2, -1, -1)

    return regression_checks(Particles(draws), outputs, likelihood, X, y,
                             np.zeros(1, bool), np.ones(1), learned, 0.0, True, "step_size")


def _shrunk(y: torch.Tensor, r2: float) -> torch.Tensor:
    """The mean of y plus ``a (y - mean)``: a prediction of training R^2 exactly ``r2``
    (``1 - (1 - a)^2``; ``a < 0`` for R^2 below 0)."""
    return y.mean() + (1 - math.sqrt(1 - r2)) * (y - y.mean())


@pytest.mark.parametrize("r2", [-1e-3, 1e-3, -1e-6, 1e-6])
def test_worse_than_the_mean_warns_just_below_an_r2_of_zero_only(r2):
    y = _targets()
    checks = _regression(_shrunk(y, r2), y)
    assert checks["training_r2"][0] == pytest.approx(r2, rel=1e-6, abs=1e-12)
    poor = [w for w in checks["warnings"] if w.kind == "worse_than_mean"]
    if r2 < 0:
        (found,) = poor
        assert found.category is PoorFitWarning
        assert "worse than predicting the mean of y" in found.message
        assert f"R^2 of {r2:.3g}" in found.message
    else:
        assert not poor and not checks["warnings"]


@pytest.mark.parametrize("ratio", [NOISE_WARNING * 0.99, NOISE_WARNING * 1.01])
def test_a_learned_noise_warns_just_above_its_threshold_only(ratio):
    """Noise ``ratio`` standard deviations of y, with a good fit of the mean: the noise
    warning replaces the R^2 one, and comes only above ``NOISE_WARNING``."""
    y = _targets()
    checks = _regression(y.clone(), y, log_noise=math.log(ratio))
    assert checks["noise_ratio"][0] == pytest.approx(ratio)
    kinds = [w.kind for w in checks["warnings"]]
    if ratio > NOISE_WARNING:
        assert kinds == ["noise"]
        assert checks["warnings"][0].category is NoiseOnlyFitWarning
    else:
        assert kinds == []


@pytest.mark.parametrize("spread", [SPREAD_WARNING * 0.99, SPREAD_WARNING * 1.01])
def test_a_predictive_spread_warns_just_above_its_threshold_only(spread):
    """Draws at ``mean(y) + c`` spread ``sqrt(c^2 + 0.1^2)`` standard deviations of y (the
    fixed noise 0.1 is the user's: it does not count), so ``c = spread``."""
    y = _targets()
    checks = _regression(torch.full_like(y, spread), y)
    assert checks["predictive_spread"][0] == pytest.approx(spread)
    kinds = [w.kind for w in checks["warnings"]]
    assert ("spread" in kinds) == (spread > SPREAD_WARNING)
    if spread > SPREAD_WARNING:
        found = checks["warnings"][kinds.index("spread")]
        assert found.category is SamplerDivergenceWarning


@pytest.mark.parametrize("above", [False, True])
def test_chance_accuracy_warns_at_or_below_its_margin_only(above):
    """Balanced labels: chance is 0.5 and the margin ``CHANCE_SE`` binomial standard
    errors; a classifier right on one row more than the margin allows is not at chance."""
    n = 400
    labels = torch.arange(n) % 2
    margin = CHANCE_SE * np.sqrt(0.5 * 0.5 / n)
    at_chance = max(k for k in range(n + 1) if k / n <= 0.5 + margin)  # 230 of 400
    right = at_chance + (1 if above else 0)
    predicted = labels.clone()
    predicted[right:] = 1 - predicted[right:]  # wrong on the rows after the first `right`
    proba = torch.nn.functional.one_hot(predicted, 2).double() * 0.4 + 0.3

    def probabilities(X):
        return proba[torch.as_tensor(X[:, 0], dtype=torch.long)][None]

    X = np.arange(n, dtype=float)[:, None]
    checks = classification_checks(probabilities, X, labels, "step_size")
    assert checks["training_accuracy"] == right / n
    chance = [w for w in checks["warnings"] if w.kind == "chance"]
    assert bool(chance) is (not above)
    if chance:
        assert chance[0].category is PoorFitWarning
