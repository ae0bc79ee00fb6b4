"""The estimators under test and a factory with tiny sampling budgets."""

from __future__ import annotations

import skfbnn
from skfbnn.inference.registry import METHODS

from ..conftest import FAST, FAST_FUNCTIONAL

NAMED_REGRESSORS = [
    skfbnn.SGLDRegressor,
    skfbnn.SGHMCRegressor,
    skfbnn.FunctionalSGLDRegressor,
    skfbnn.FunctionalSGHMCRegressor,
]
NAMED_CLASSIFIERS = [
    skfbnn.SGLDClassifier,
    skfbnn.SGHMCClassifier,
    skfbnn.FunctionalSGLDClassifier,
    skfbnn.FunctionalSGHMCClassifier,
]
REGRESSORS = [*NAMED_REGRESSORS, skfbnn.BayesianNetRegressor]
CLASSIFIERS = [*NAMED_CLASSIFIERS, skfbnn.BayesianNetClassifier]
ALL = [*REGRESSORS, *CLASSIFIERS]

GENERIC_METHOD = "fsghmc"


def method_of(cls) -> str:
    return GENERIC_METHOD if cls._generic else cls._method


def is_functional(cls) -> bool:
    return METHODS[method_of(cls)].prior == "function"


def make(cls, **kwargs):
    """``cls`` on the CPU with seed 0 and a tiny budget; ``kwargs`` override.

    For the generic estimators, keyword arguments that are not constructor
    parameters (the method's hyperparameters) go into ``method_params``.
    """
    budget = dict(FAST_FUNCTIONAL if is_functional(cls) else FAST)
    direct = dict(random_state=0, device="cpu")
    if cls._generic:
        own = set(cls().get_params())
        extra = {k: v for k, v in kwargs.items() if k not in own}
        direct.update({k: v for k, v in kwargs.items() if k in own})
        return cls(method=GENERIC_METHOD, method_params={**budget, **extra}, **direct)
    return cls(**{**direct, **budget, **kwargs})


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
