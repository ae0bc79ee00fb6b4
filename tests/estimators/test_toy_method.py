"""A new method is one file and one registry entry: its estimator pair follows.

The toy method (:mod:`.toy_langevin`, plain Langevin steps) is registered with one
:class:`~skfbnn.inference.registry.MethodSpec`; its named pair then exists, is importable
from :mod:`skfbnn.estimators`, runs through the generic estimator and passes
scikit-learn's common estimator checks.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

import skfbnn.estimators
from skfbnn.estimators import BayesianNetRegressor, estimator_pair
from skfbnn.inference import registry
from skfbnn.inference.registry import MethodSpec

from ..conftest import FAST
from . import toy_langevin
from .test_common import SAMPLE_WEIGHT_EQUIVALENCE


@pytest.fixture
def toy(monkeypatch):
    """The one registry entry, removed again after the test."""
    spec = MethodSpec(toy_langevin, "sgmcmc", "weight", "particles", estimator="Toy",
                      title="plain Langevin steps")
    monkeypatch.setitem(registry.METHODS, "toy", spec)
    return estimator_pair("toy")


def test_one_registry_entry_gives_a_named_pair(toy):
    regressor, classifier = toy
    assert (regressor.__name__, classifier.__name__) == ("ToyRegressor", "ToyClassifier")
    assert skfbnn.estimators.ToyRegressor is regressor  # importable, hence picklable
    params = regressor().get_params()
    assert params["step_size"] == 0.02 and params["n_chains"] == 8  # method + family
    assert params["prior_std"] == 1.0  # the weight prior's table
    assert "plain Langevin steps" in regressor.__doc__ and "step_size" in regressor.__doc__


@pytest.mark.parametrize("which", [0, 1], ids=["regressor", "classifier"])
def test_toy_pair_passes_the_common_checks(toy, which):
    est = toy[which](**FAST, random_state=0, device="cpu")
    check_estimator(est, expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": SAMPLE_WEIGHT_EQUIVALENCE})


def test_toy_regressor_fits_pickles_and_matches_the_generic_estimator(toy):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=40)
    named = toy[0](**FAST, random_state=0, device="cpu").fit(X, y)
    generic = BayesianNetRegressor(method="toy", method_params=dict(FAST), random_state=0,
                                   device="cpu")
    np.testing.assert_array_equal(named.predict(X), generic.fit(X, y).predict(X))
    loaded = pickle.loads(pickle.dumps(named))
    np.testing.assert_array_equal(loaded.predict(X), named.predict(X))
    assert np.corrcoef(named.predict(X), y)[0, 1] > 0.9
