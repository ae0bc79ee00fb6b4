"""scikit-learn's common estimator checks on every public estimator."""

from __future__ import annotations

from sklearn.base import is_regressor
from sklearn.utils.estimator_checks import parametrize_with_checks

import skfbnn

from ..conftest import FAST_FUNCTIONAL
from ._cases import NAMED_CLASSIFIERS, NAMED_REGRESSORS, budget

NAMED = [*NAMED_REGRESSORS, *NAMED_CLASSIFIERS]


def _instances():
    for cls in NAMED:
        yield cls(random_state=0, **budget(cls))
    for cls in (skfbnn.BayesianNetRegressor, skfbnn.BayesianNetClassifier):
        yield cls(method="fsgld", method_params=FAST_FUNCTIONAL, random_state=0)


@parametrize_with_checks(list(_instances()))
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_named_estimator_is_exported():
    assert {c.__name__ for c in NAMED} <= set(skfbnn.__all__)
    assert len({(c._method, is_regressor(c())) for c in NAMED}) == len(NAMED)
