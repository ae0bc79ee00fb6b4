"""scikit-learn's common estimator checks on every public estimator."""

from __future__ import annotations

from sklearn.base import is_regressor

import skfbnn

from ..conftest import FAST_FUNCTIONAL
from ._cases import NAMED_CLASSIFIERS, NAMED_REGRESSORS, budget, common_checks

NAMED = [*NAMED_REGRESSORS, *NAMED_CLASSIFIERS]


QUICK = {"sgld", "bbb", "ensemble"}
"""One named pair per family whose checks run by default: the pairs share the estimator
code the checks exercise (tests/estimators/test_contract.py runs the method-specific
paths on every pair); the others' common checks are marked slow."""


def _instances(quick: bool):
    for cls in NAMED:
        if (cls._method in QUICK) == quick:
            yield cls(random_state=0, **budget(cls))
    if quick:  # the generic pair, on a functional method
        for cls in (skfbnn.BayesianNetRegressor, skfbnn.BayesianNetClassifier):
            yield cls(method="fsgld", method_params=FAST_FUNCTIONAL, random_state=0)


SAMPLE_WEIGHT_EQUIVALENCE = (
    "the weighted likelihood equals that of repeated rows (test_sample_weight.py checks the "
    "log posterior and, with weights summing to n and a full batch, whole fits), but this "
    "check's random integer weights change the number of rows, and with it the minibatch "
    "draws, the run length and the data-size factor N / n of a stochastic fit")


@common_checks(_instances(quick=True), SAMPLE_WEIGHT_EQUIVALENCE)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@common_checks(_instances(quick=False), SAMPLE_WEIGHT_EQUIVALENCE, slow=True)
def test_sklearn_compatible_other_pairs(estimator, check):
    check(estimator)


def test_every_named_estimator_is_exported():
    assert {c.__name__ for c in NAMED} <= set(skfbnn.__all__)
    assert len({(c._method, is_regressor(c())) for c in NAMED}) == len(NAMED)
