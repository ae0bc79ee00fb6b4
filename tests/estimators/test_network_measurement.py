"""``measurement_points=`` of the functional priors: context rows, a callable, the checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import skfbnn
from skfbnn.estimators import estimator_pair

from ..conftest import FAST_ENSEMBLE, FAST_FUNCTIONAL, FAST_OPTIMISATION
from .test_network import TinyCNN

FUNCTIONAL_BUDGETS = {
    "fsgld": FAST_FUNCTIONAL,
    "fbnn": dict(FAST_OPTIMISATION, prior_fit_iter=5, n_measurement_points=10),
    "ifbnn": dict(FAST_OPTIMISATION, prior_fit_iter=5, n_measurement_points=10),
    "ifbde": dict(FAST_ENSEMBLE, prior_fit_iter=5, n_measurement_points=10,
                  measurement_train_fraction=0.5),  # its default 1 leaves no room for them
}


@pytest.mark.parametrize("method", list(FUNCTIONAL_BUDGETS))
def test_measurement_points_take_context_rows_or_a_callable(method, regression_data):
    X, y = regression_data
    cls = estimator_pair(method)[0]
    budget = FUNCTIONAL_BUDGETS[method]
    asked = []

    def around_the_data(n, generator):
        asked.append((n, generator))
        rows = torch.randint(len(X), (n,), generator=generator)
        return X[rows.numpy()] + 0.1 * torch.randn(n, 3, generator=generator,
                                                     dtype=torch.float64).numpy()

    default = cls(random_state=0, **budget).fit(X, y).predict(X)
    context = cls(measurement_points=3.0 + X[:5], random_state=0, **budget).fit(X, y)
    drawn = cls(measurement_points=around_the_data, random_state=0, **budget).fit(X, y)
    assert not np.array_equal(context.predict(X), default)
    assert asked and all(isinstance(g, torch.Generator) and n > 0 for n, g in asked)
    again = cls(measurement_points=around_the_data, random_state=0, **budget).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), drawn.predict(X))


def test_measurement_points_of_the_wrong_width_are_refused(regression_data):
    X, y = regression_data
    est = skfbnn.FunctionalSGLDRegressor(measurement_points=np.zeros((4, 2)), **FAST_FUNCTIONAL)
    with pytest.raises(ValueError, match=r"rows of 3 values.*shape \(4, 2\)"):
        est.fit(X, y)
    est.set_params(measurement_points=lambda n, gen: np.zeros((n, 2)))
    with pytest.raises(ValueError, match=r"n rows of 3 values.*shape \(\d+, 2\)"):
        est.fit(X, y)


def test_measurement_points_of_input_shape_are_flattened(classification_data):
    X, y = classification_data
    X6 = np.hstack([X, X ** 2, X[:, :1] * X[:, 1:], np.sin(X[:, :1])])
    context = X6[:8].reshape(-1, 1, 6) + 1.0
    est = skfbnn.FunctionalSGLDClassifier(network=TinyCNN, input_shape=(1, 6),
                                          measurement_points=context, random_state=0,
                                          **FAST_FUNCTIONAL).fit(X6, y)
    assert est.predict_proba(X6).shape == (len(X6), 2)
