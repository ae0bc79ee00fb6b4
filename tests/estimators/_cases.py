"""The estimators under test and a factory with tiny sampling budgets."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import skfbnn
from skfbnn.estimators import estimator_pair
from skfbnn.inference.registry import METHODS

from ..conftest import FAST, FAST_ENSEMBLE, FAST_FUNCTIONAL, FAST_MH, FAST_OPTIMISATION


def _pairs(*families: str) -> tuple[list, list]:
    """The named regressors and classifiers of the registered methods of ``families``,
    in registry order: the case lists derive from the registry."""
    pairs = [estimator_pair(name) for name, spec in METHODS.items()
             if spec.family in families and spec.estimator is not None]
    return [r for r, _ in pairs], [c for _, c in pairs]


SAMPLER_REGRESSORS, SAMPLER_CLASSIFIERS = _pairs("sgmcmc")
OPTIMISER_REGRESSORS, OPTIMISER_CLASSIFIERS = _pairs("vi", "ensemble")
MH_REGRESSORS, MH_CLASSIFIERS = _pairs("mh")
NAMED_REGRESSORS = [*SAMPLER_REGRESSORS, *OPTIMISER_REGRESSORS]
NAMED_CLASSIFIERS = [*SAMPLER_CLASSIFIERS, *OPTIMISER_CLASSIFIERS]
REGRESSORS = [*NAMED_REGRESSORS, skfbnn.BayesianNetRegressor]
CLASSIFIERS = [*NAMED_CLASSIFIERS, skfbnn.BayesianNetClassifier]
ALL = [*REGRESSORS, *CLASSIFIERS]
SAMPLERS = [*SAMPLER_REGRESSORS, skfbnn.BayesianNetRegressor,
            *SAMPLER_CLASSIFIERS, skfbnn.BayesianNetClassifier]
OPTIMISERS = [*OPTIMISER_REGRESSORS, *OPTIMISER_CLASSIFIERS]

GENERIC_METHOD = "fsghmc"
FUNCTIONAL_PRIOR = dict(prior_fit_iter=5, n_measurement_points=10)
"""The GP prior's settings in the API tests of the functional optimisers."""


def method_of(cls) -> str:
    return GENERIC_METHOD if cls._generic else cls._method


def is_functional(cls) -> bool:
    return METHODS[method_of(cls)].prior == "function"


def family_of(cls) -> str:
    return METHODS[method_of(cls)].family


def step_name(cls) -> str:
    """The step-size parameter: ``step_size`` (samplers) or ``learning_rate``."""
    return "step_size" if family_of(cls) == "sgmcmc" else "learning_rate"


def budget(cls) -> dict:
    """Tiny run-policy settings for the API tests."""
    prior = FUNCTIONAL_PRIOR if is_functional(cls) else {}
    if family_of(cls) == "vi":
        return dict(FAST_OPTIMISATION, **prior)
    if family_of(cls) == "ensemble":
        return dict(FAST_ENSEMBLE, **prior)
    if family_of(cls) == "mh":
        return dict(FAST_MH)
    return dict(FAST_FUNCTIONAL if is_functional(cls) else FAST)


def n_draws(cls) -> int:
    """Parameter sets used for prediction under :func:`budget`."""
    b = budget(cls)
    if family_of(cls) == "vi":
        return b["n_samples"]
    if family_of(cls) == "ensemble":
        return b["n_estimators"]
    return b["n_chains"] * b["n_samples"]


def make(cls, **kwargs):
    """``cls`` on the CPU with seed 0 and a tiny budget; ``kwargs`` override.

    For the generic estimators, keyword arguments that are not constructor
    parameters (the method's hyperparameters) go into ``method_params``.
    """
    tiny = budget(cls)
    direct = dict(random_state=0, device="cpu")
    if cls._generic:
        own = set(cls().get_params())
        extra = {k: v for k, v in kwargs.items() if k not in own}
        direct.update({k: v for k, v in kwargs.items() if k in own})
        return cls(method=GENERIC_METHOD, method_params={**tiny, **extra}, **direct)
    return cls(**{**direct, **tiny, **kwargs})


def ids(classes):
    return [c.__name__ for c in classes]


_CACHE: dict = {}


def fitted(cls, X, y, **kwargs):
    """``make(cls, **kwargs).fit(X, y)``, cached for tests that only read it.

    Tests that use it must not mutate the estimator (no ``fit``/``set_params``).
    """
    key = (cls, repr(sorted(kwargs.items())), X.dtype.str, X.shape, X.tobytes(),
           y.dtype.str, y.shape, y.tobytes())
    if key not in _CACHE:
        _CACHE[key] = make(cls, **kwargs).fit(X, y)
    return _CACHE[key]


def sine_data(n=40, seed=0):
    """``n`` rows of 2 uniform features and ``sin(3 x0) + 0.1 noise``: a tiny regression set."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    return X, np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=n)


def common_checks(instances, sample_weight_reason: str, slow: bool = False):
    """scikit-learn's ``parametrize_with_checks`` over ``instances``, with its one expected
    failure (strict): the random-integer sample-weight equivalence check, for
    ``sample_weight_reason``; marked slow with ``slow``."""
    expected = {"check_sample_weight_equivalence_on_dense_data": sample_weight_reason}
    parametrize = parametrize_with_checks(list(instances), xfail_strict=True,
                                          expected_failed_checks=lambda est: expected)
    return (lambda test: pytest.mark.slow(parametrize(test))) if slow else parametrize
