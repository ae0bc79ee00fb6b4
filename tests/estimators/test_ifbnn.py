"""ifBNN-specific estimator checks of ``ntk_limit``: a regression fit runs and changes the
fit, a classifier refuses it by name, and a bad value is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from skfbnn import IFBNNClassifier, IFBNNRegressor

from ._cases import sine_data

FAST = dict(n_iter=40, hidden_layer_sizes=(8,), n_samples=10, device="cpu", random_state=0)


def test_ntk_limit_regression_fits_finite_and_differs_from_the_plain_linearisation():
    X, y = sine_data()
    limit = IFBNNRegressor(**FAST, ntk_limit=True).fit(X, y)
    plain = IFBNNRegressor(**FAST).fit(X, y)
    mean, std = limit.predict(X, return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all()
    assert not np.allclose(mean, plain.predict(X))


def test_ntk_limit_is_refused_by_a_classifier_by_name():
    X, y = sine_data()
    with pytest.raises(ValueError, match="ntk_limit"):
        IFBNNClassifier(**FAST, ntk_limit=True).fit(X, y > 0)


@pytest.mark.parametrize("value", ["yes", 2])
def test_bad_ntk_limit_is_refused_by_name(value):
    X, y = sine_data()
    with pytest.raises(ValueError, match="ntk_limit"):
        IFBNNRegressor(**FAST, ntk_limit=value).fit(X, y)


def test_auto_reduction_is_the_sum_for_regression_and_the_mean_for_classification():
    X, y = sine_data()
    auto = IFBNNRegressor(**FAST).fit(X, y).predict(X)
    np.testing.assert_array_equal(auto, IFBNNRegressor(**FAST, w2_reduction="sum").fit(X, y)
                                  .predict(X))
    assert not np.allclose(auto, IFBNNRegressor(**FAST, w2_reduction="mean").fit(X, y)
                           .predict(X))
    labels = y > 0
    auto = IFBNNClassifier(**FAST).fit(X, labels).predict_proba(X)
    np.testing.assert_array_equal(auto, IFBNNClassifier(**FAST, w2_reduction="mean")
                                  .fit(X, labels).predict_proba(X))
    assert not np.allclose(auto, IFBNNClassifier(**FAST, w2_reduction="sum").fit(X, labels)
                           .predict_proba(X))
