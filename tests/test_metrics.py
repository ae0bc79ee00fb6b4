"""Tests for skfbnn.metrics: values against independent computations, scorers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfbnn.metrics import (
    crps_ensemble,
    crps_gaussian,
    expected_calibration_error,
    gaussian_nll,
    interval_coverage,
    interval_width,
    make_coverage_scorer,
    make_width_scorer,
    mixture_log_likelihood,
    moment_matched_log_likelihood,
    neg_crps_scorer,
    neg_gaussian_nll_scorer,
    rmse,
)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(7,), (7, 3)])
def test_rmse_and_nll_match_direct_formulas(rng, shape):
    y, mean = rng.normal(size=shape), rng.normal(size=shape)
    std = rng.uniform(0.2, 2.0, size=shape)
    assert rmse(y, mean) == pytest.approx(np.sqrt(np.mean((y - mean) ** 2)))
    expected = -np.mean(stats.norm.logpdf(y, loc=mean, scale=std))
    assert gaussian_nll(y, mean, std) == pytest.approx(expected, rel=1e-12)
    # scalar std is broadcast
    expected = -np.mean(stats.norm.logpdf(y, loc=mean, scale=0.7))
    assert gaussian_nll(y, mean, 0.7) == pytest.approx(expected, rel=1e-12)


def _crps_by_quadrature(y: float, mu: float, sigma: float) -> float:
    """Integral of (F(z) - 1{z >= y})**2 over the real line."""
    below, _ = integrate.quad(lambda z: stats.norm.cdf(z, mu, sigma) ** 2, -np.inf, y)
    above, _ = integrate.quad(lambda z: stats.norm.sf(z, mu, sigma) ** 2, y, np.inf)
    return below + above


@pytest.mark.parametrize(
    "y, mu, sigma", [(0.0, 0.0, 1.0), (1.3, -0.4, 0.5), (-3.0, 2.0, 4.0)]
)
def test_crps_gaussian_matches_integral_definition(y, mu, sigma):
    expected = _crps_by_quadrature(y, mu, sigma)
    assert crps_gaussian([y], [mu], [sigma]) == pytest.approx(expected, rel=1e-7)


def test_crps_gaussian_averages_points_and_outputs(rng):
    y, mean = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    std = rng.uniform(0.5, 2.0, size=(4, 2))
    triples = zip(y.ravel(), mean.ravel(), std.ravel(), strict=False)
    per_point = [_crps_by_quadrature(a, m, s) for a, m, s in triples]
    assert crps_gaussian(y, mean, std) == pytest.approx(np.mean(per_point), rel=1e-7)


def test_crps_gaussian_matches_monte_carlo(rng):
    x, x2 = rng.normal(0.5, 2.0, size=(2, 400_000))
    y = 1.7
    mc = np.mean(np.abs(x - y)) - 0.5 * np.mean(np.abs(x - x2))
    assert crps_gaussian([y], [0.5], [2.0]) == pytest.approx(mc, abs=0.01)


@pytest.mark.parametrize("shape", [(5,), (5, 2)])
def test_crps_ensemble_matches_pairwise_formula(rng, shape):
    y = rng.normal(size=shape)
    draws = rng.normal(size=(31,) + shape)
    term1 = np.mean(np.abs(draws - y), axis=0)
    term2 = np.mean(np.abs(draws[:, None] - draws[None, :]), axis=(0, 1))
    assert crps_ensemble(y, draws) == pytest.approx(np.mean(term1 - 0.5 * term2))


def test_crps_ensemble_single_draw_is_absolute_error():
    assert crps_ensemble([1.0, -2.0], [[0.0, 0.0]]) == pytest.approx(1.5)


def test_crps_ensemble_approaches_gaussian_closed_form(rng):
    mean, std = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.3, 2.5])
    y = np.array([0.4, 0.2, 1.0])
    draws = mean + std * rng.standard_normal((20_000, 3))
    expected = crps_gaussian(y, mean, std)
    assert crps_ensemble(y, draws) == pytest.approx(expected, rel=0.02)


def test_mixture_with_one_draw_is_gaussian_log_likelihood(rng):
    y, f = rng.normal(size=6), rng.normal(size=6)
    expected = np.mean(stats.norm.logpdf(y, loc=f, scale=0.3))
    assert mixture_log_likelihood(y, f[None], 0.3) == pytest.approx(expected)
    assert mixture_log_likelihood(y, f[None], [0.3]) == pytest.approx(expected)


@pytest.mark.parametrize(
    "y_shape, noise_shape, expand",
    [
        ((4, 2), (), lambda s: s),
        ((4, 2), (9,), lambda s: s[:, None, None]),
        ((4, 2), (9, 2), lambda s: s[:, None, :]),
        ((4, 2), (9, 4, 2), lambda s: s),
        ((4,), (9,), lambda s: s[:, None]),
        ((4,), (9, 4), lambda s: s),
    ],
)
def test_mixture_matches_brute_force(rng, y_shape, noise_shape, expand):
    y, f = rng.normal(size=y_shape), rng.normal(size=(9,) + y_shape)
    noise = rng.uniform(0.3, 1.5, size=noise_shape)
    dens = stats.norm.pdf(y, loc=f, scale=expand(noise))
    expected = np.mean(np.log(np.mean(dens, axis=0)))
    assert mixture_log_likelihood(y, f, noise) == pytest.approx(expected, rel=1e-10)


def test_mixture_is_stable_far_in_the_tail():
    # every density underflows to 0 in float64, logsumexp must not
    value = mixture_log_likelihood([100.0], [[0.0], [0.0]], 0.1)
    assert value == pytest.approx(stats.norm.logpdf(100.0, 0.0, 0.1))
    assert np.isfinite(value)


def test_moment_matched_log_likelihood(rng):
    y, f = rng.normal(size=5), rng.normal(size=(50, 5))
    noise = rng.uniform(0.2, 1.0, size=50)
    var = f.var(axis=0) + np.mean(noise**2)
    expected = np.mean(stats.norm.logpdf(y, f.mean(axis=0), np.sqrt(var)))
    assert moment_matched_log_likelihood(y, f, noise) == pytest.approx(expected)
    # one draw: same as the plain Gaussian log-likelihood and the mixture
    assert moment_matched_log_likelihood(y, f[:1], 0.4) == pytest.approx(
        mixture_log_likelihood(y, f[:1], 0.4)
    )


def test_coverage_of_standard_normal_samples(rng):
    n = 20_000
    y = rng.standard_normal(n)
    coverage = interval_coverage(y, np.zeros(n), np.ones(n), level=0.9)
    assert abs(coverage - 0.9) < 4 * np.sqrt(0.9 * 0.1 / n)
    # a too-narrow predictive std under-covers
    assert interval_coverage(y, np.zeros(n), np.full(n, 0.5), level=0.9) < 0.65


def test_interval_width():
    assert interval_width([1.0, 3.0], level=0.95) == pytest.approx(2 * 1.959964 * 2.0)
    assert interval_width(np.ones((3, 2)), level=0.5) == pytest.approx(
        2 * stats.norm.ppf(0.75)
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: rmse([1.0, 2.0], [1.0]), r"mean must have shape \(2,\)\. Got \(1,\)"),
        (lambda: rmse([1.0, 2.0], [[1.0], [2.0]]), "mean must have shape"),
        (lambda: gaussian_nll([0.0], [0.0], [0.0]), r"std must be > 0\. Got 0\.0\."),
        (lambda: gaussian_nll([0.0], [0.0], [-1.0]), r"Got -1\.0\."),
        (lambda: gaussian_nll([0.0, 1.0], [0.0, 1.0], [1.0]), r"std must have shape"),
        (lambda: crps_gaussian([np.nan], [0.0], [1.0]), r"y must be finite\. Got nan"),
        (lambda: rmse([0.0], [np.inf]), r"mean must be finite\. Got inf\."),
        (lambda: crps_gaussian([], [], []), "y must be non-empty"),
        (lambda: interval_coverage([0.0], [0.0], [1.0], 1.0), r"level .* Got 1\.0\."),
        (lambda: interval_width([1.0], level=0), r"level .* Got 0\."),
        (lambda: make_coverage_scorer(1.5), r"level .* Got 1\.5\."),
        (lambda: crps_ensemble([0.0, 1.0], [0.0, 1.0]), "f_draws must have shape"),
        (lambda: mixture_log_likelihood([0.0], [[0.0]], [1.0, 1.0]), "noise_std"),
        (lambda: mixture_log_likelihood([0.0], [[0.0]], -1.0), "noise_std must be > 0"),
        (lambda: moment_matched_log_likelihood([0.0], [[0.0]], 0.0), "noise_std"),
    ],
)
def test_invalid_inputs_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------------------------
# scorers
# ----------------------------------------------------------------------------
class LinearGaussianRegressor(RegressorMixin, BaseEstimator):
    """Least squares with a Gaussian predictive std = std_scale * residual std."""

    def __init__(self, std_scale: float = 1.0):
        self.std_scale = std_scale

    def fit(self, X, y):
        design = np.column_stack([np.asarray(X), np.ones(len(X))])
        self.coef_, *_ = np.linalg.lstsq(design, y, rcond=None)
        self.sigma_ = np.std(y - design @ self.coef_)
        return self

    def predict(self, X, return_std=False):
        mean = np.column_stack([np.asarray(X), np.ones(len(X))]) @ self.coef_
        if return_std:
            return mean, np.full(mean.shape, self.std_scale * self.sigma_)
        return mean


@pytest.fixture
def regression_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = X @ np.array([1.5, -2.0]) + 0.5 + rng.normal(size=300)
    return X, y


def test_scorers_in_cross_val_score_match_manual_computation(regression_data):
    X, y = regression_data
    cv = KFold(3, shuffle=True, random_state=0)
    scorers = {
        "nll": (neg_gaussian_nll_scorer, lambda yt, m, s: -gaussian_nll(yt, m, s)),
        "crps": (neg_crps_scorer, lambda yt, m, s: -crps_gaussian(yt, m, s)),
        "cov": (
            make_coverage_scorer(0.8),
            lambda yt, m, s: interval_coverage(yt, m, s, 0.8),
        ),
        "width": (make_width_scorer(0.8), lambda yt, m, s: -interval_width(s, 0.8)),
    }
    for scorer, metric in scorers.values():
        scores = cross_val_score(LinearGaussianRegressor(), X, y, cv=cv, scoring=scorer)
        expected = []
        for train, test in cv.split(X):
            model = LinearGaussianRegressor().fit(X[train], y[train])
            expected.append(metric(y[test], *model.predict(X[test], return_std=True)))
        np.testing.assert_allclose(scores, expected, rtol=1e-12)
    coverage = cross_val_score(
        LinearGaussianRegressor(), X, y, cv=cv, scoring=make_coverage_scorer(0.8)
    )
    assert 0.7 < np.mean(coverage) < 0.9


def test_scorers_select_expected_parameters_in_grid_search(regression_data):
    X, y = regression_data
    pipe = make_pipeline(StandardScaler(), LinearGaussianRegressor())
    grid = {"lineargaussianregressor__std_scale": [0.2, 1.0, 5.0]}
    scoring = {
        "nll": neg_gaussian_nll_scorer,
        "crps": neg_crps_scorer,
        "coverage": make_coverage_scorer(),
        "width": make_width_scorer(),
    }
    search = GridSearchCV(pipe, grid, scoring=scoring, refit="nll", cv=3).fit(X, y)
    best = {
        key: grid["lineargaussianregressor__std_scale"][
            int(np.argmax(search.cv_results_[f"mean_test_{key}"]))
        ]
        for key in scoring
    }
    # proper scores prefer the calibrated std; coverage / -width prefer extremes
    assert best == {"nll": 1.0, "crps": 1.0, "coverage": 5.0, "width": 0.2}
    assert search.best_params_["lineargaussianregressor__std_scale"] == 1.0
    assert np.all(search.cv_results_["mean_test_width"] < 0)


def test_scorer_accepts_column_vector_targets(regression_data):
    X, y = regression_data
    model = LinearGaussianRegressor().fit(X, y)
    assert neg_crps_scorer(model, X, y[:, None]) == pytest.approx(
        neg_crps_scorer(model, X, y)
    )


def test_scorer_names_reprs_and_pickling():
    cov, width = make_coverage_scorer(0.9), make_width_scorer()
    assert repr(cov) == "make_coverage_scorer(level=0.9)"
    assert repr(width) == "make_width_scorer(level=0.95)"
    assert cov.__name__ == "coverage_scorer_0.9"
    assert width.__name__ == "neg_width_scorer_0.95"
    assert neg_gaussian_nll_scorer.__name__ == "neg_gaussian_nll_scorer"
    assert repr(pickle.loads(pickle.dumps(cov))) == repr(cov)


def test_ece_is_zero_when_confidence_equals_accuracy():
    # within the 0.75 bin, three of four predictions are right: perfectly calibrated
    proba = np.array([[0.75, 0.25]] * 4)
    assert expected_calibration_error(np.array([0, 0, 0, 1]), proba) == pytest.approx(0.0)


def test_ece_matches_binned_definition(rng):
    proba = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, size=200)
    conf, pred = proba.max(1), proba.argmax(1)
    expected = 0.0
    for lo in np.arange(10) / 10:
        inside = (conf >= lo) & (conf < lo + 0.1)
        if inside.any():
            expected += inside.mean() * abs((pred[inside] == y[inside]).mean()
                                            - conf[inside].mean())
    assert expected_calibration_error(y, proba) == pytest.approx(expected)


def test_ece_rejects_bad_input():
    with pytest.raises(ValueError, match="proba must have shape"):
        expected_calibration_error([0, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="n_bins"):
        expected_calibration_error([0], [[1.0, 0.0]], n_bins=0)


# --------------------------------------------------- classification and OOD helpers
def test_ece_fifteen_bins_by_hand():
    """15 equal-width bins of the top probability: [0.6, 0.6667) holds 0.62 and 0.65,
    [0.9333, 1] holds 0.95 and 0.99; accuracy 1/2 and 2/2."""
    from skfbnn.metrics import reliability_curve

    proba = np.array([[0.62, 0.38], [0.35, 0.65], [0.95, 0.05], [0.01, 0.99]])
    y = np.array([0, 0, 0, 1])
    gap_a = abs(0.5 - (0.62 + 0.65) / 2)  # bin 9: one of two correct
    gap_b = abs(1.0 - (0.95 + 0.99) / 2)  # bin 14: both correct
    want = (2 * gap_a + 2 * gap_b) / 4
    assert expected_calibration_error(y, proba, n_bins=15) == pytest.approx(want, abs=1e-15)
    counts, acc, conf = reliability_curve(y, proba, n_bins=15)
    assert counts.tolist() == [0] * 9 + [2] + [0] * 4 + [2]
    assert acc[9] == 0.5 and acc[14] == 1.0 and np.isnan(acc[0])
    assert conf[9] == pytest.approx(0.635) and conf[14] == pytest.approx(0.97)
    filled = counts > 0
    ece = np.sum(counts[filled] * np.abs(acc[filled] - conf[filled])) / counts.sum()
    assert ece == pytest.approx(want, abs=1e-15)


def test_reliability_curve_matches_ece_on_random_data(rng):
    from skfbnn.metrics import reliability_curve

    proba = rng.dirichlet(np.ones(5), size=300)
    y = rng.integers(0, 5, size=300)
    counts, acc, conf = reliability_curve(y, proba, n_bins=15)
    filled = counts > 0
    ece = np.sum(counts[filled] * np.abs(acc[filled] - conf[filled])) / 300
    assert counts.sum() == 300
    assert ece == pytest.approx(expected_calibration_error(y, proba, n_bins=15), rel=1e-12)


def test_brier_score_by_hand_and_against_sklearn(rng):
    from sklearn.metrics import brier_score_loss

    from skfbnn.metrics import brier_score

    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    y = np.array([0, 1])
    want = ((0.3**2 + 0.2**2 + 0.1**2) + (0.1**2 + 0.9**2 + 0.8**2)) / 2
    assert brier_score(y, proba) == pytest.approx(want, abs=1e-15)
    p1 = rng.uniform(size=50)
    yb = rng.integers(0, 2, size=50)
    binary = np.column_stack([1 - p1, p1])
    assert brier_score(yb, binary) == pytest.approx(2 * brier_score_loss(yb, p1), rel=1e-12)
    with pytest.raises(ValueError, match="column indices"):
        brier_score([0, 3], proba)


def test_ood_auroc_equals_roc_auc_score_with_ties(rng):
    from sklearn.metrics import roc_auc_score

    from skfbnn.metrics import ood_auroc

    for _ in range(5):
        a = rng.integers(0, 6, size=40).astype(float)  # many ties
        b = rng.integers(2, 9, size=25).astype(float)
        want = roc_auc_score(np.r_[np.zeros(40), np.ones(25)], np.r_[a, b])
        assert ood_auroc(a, b) == pytest.approx(want, abs=1e-12)
    assert ood_auroc([0.0, 1.0], [2.0, 3.0]) == 1.0
    assert ood_auroc([2.0, 3.0], [0.0, 1.0]) == 0.0
    assert ood_auroc([1.0, 1.0], [1.0]) == 0.5
    with pytest.raises(ValueError, match="non-empty"):
        ood_auroc([], [1.0])


def test_entropy_and_mutual_information_by_hand():
    from skfbnn.metrics import mutual_information, predictive_entropy

    p = np.array([[0.25, 0.25, 0.5]])
    want = -(2 * 0.25 * np.log(0.25) + 0.5 * np.log(0.5))
    assert predictive_entropy(p)[0] == pytest.approx(want)
    draws = np.array([[[0.9, 0.1], [0.5, 0.5]],
                      [[0.1, 0.9], [0.5, 0.5]]])  # (S=2, n=2, K=2)
    h = lambda q: -(q * np.log(q)).sum()  # noqa: E731
    mi = mutual_information(draws)
    assert mi[0] == pytest.approx(h(np.array([0.5, 0.5])) - h(np.array([0.9, 0.1])))
    assert mi[1] == pytest.approx(0.0, abs=1e-15)  # draws agree: no epistemic part
    total = predictive_entropy(draws.mean(0))
    assert np.all(mi <= total + 1e-15)
    with pytest.raises(ValueError, match="n_draws"):
        mutual_information(draws[0])
