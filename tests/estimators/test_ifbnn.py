"""ifBNN-specific estimator checks of ``ntk_limit``: a regression fit runs and changes the
fit, a classifier refuses it by name, and a bad value is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import skfbnn
from skfbnn import IFBNNClassifier, IFBNNRegressor

from ._cases import sine_data

FAST = dict(n_iter=40, hidden_layer_sizes=(8,), n_samples=10, device="cpu", random_state=0)


def test_ntk_limit_regression_fits_finite_and_differs_from_the_plain_linearisation():
    X, y = sine_data()
    # the final q of both: in 40 steps early stopping can keep the same early checkpoint
    limit = IFBNNRegressor(**FAST, ntk_limit=True, early_stopping=False).fit(X, y)
    plain = IFBNNRegressor(**FAST, early_stopping=False).fit(X, y)
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
    final = dict(FAST, early_stopping=False)  # the final q, as above
    auto = IFBNNRegressor(**final).fit(X, y).predict(X)
    np.testing.assert_array_equal(auto, IFBNNRegressor(**final, w2_reduction="sum").fit(X, y)
                                  .predict(X))
    assert not np.allclose(auto, IFBNNRegressor(**final, w2_reduction="mean").fit(X, y)
                           .predict(X))
    labels = y > 0
    auto = IFBNNClassifier(**FAST).fit(X, labels).predict_proba(X)
    np.testing.assert_array_equal(auto, IFBNNClassifier(**FAST, w2_reduction="mean")
                                  .fit(X, labels).predict_proba(X))
    assert not np.allclose(auto, IFBNNClassifier(**FAST, w2_reduction="sum").fit(X, labels)
                           .predict_proba(X))


def test_w2_interval_one_and_the_lazy_default_both_fit_and_differ():
    X, y = sine_data()  # the final q of both (early stopping could keep one from before
    whole = IFBNNRegressor(**FAST, w2_interval=1, early_stopping=False).fit(X, y)  # they part)
    lazy = IFBNNRegressor(**FAST, early_stopping=False).fit(X, y)
    assert IFBNNRegressor().w2_interval == 8
    mean, std = lazy.predict(X, return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all()
    assert not np.allclose(mean, whole.predict(X))
    # the reported W2 is the mean part plus the covariance part last evaluated: finite
    assert np.isfinite(lazy.diagnostics_["trace"]["w2"]).all()


def test_a_classifier_whose_objective_collapses_raises_though_its_log_loss_looks_sane():
    """At learning rate 1e6 the lazy ifBNN classifier's averaged probabilities stay moderate
    (the log-loss check runs first and passes them: its message would differ), while its
    objective falls from -0.9 to about -1e12: the objective check of classifiers
    (``_diagnose_optimisation``) raises. On one tanh layer: on ifBNN's own two GELU layers
    the objective is already non-finite at step 1, which the driver reports instead."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    est = IFBNNClassifier(learning_rate=1e6, n_iter=60, n_samples=8, prior_fit_iter=5,
                          hidden_layer_sizes=(50,), activation="tanh",
                          n_measurement_points=10, min_epochs=0, random_state=0, device="cpu")
    with pytest.raises(skfbnn.SamplerDivergenceError, match="objective more than 100 times"):
        est.fit(X, y)
