"""Public estimators: a named pair per registered method, and the generic pair.

The named classes (``SGLDRegressor``, ``SGLDClassifier``, ...) are made from the method
registry (:mod:`._factory`); a method registered later
(:func:`skfbnn.inference.registry.register`) has its pair importable from here too.
"""

from __future__ import annotations

from ..inference.registry import METHODS
from ._factory import estimator_names, estimator_pair
from ._generic import BayesianNetClassifier, BayesianNetRegressor


def _named_estimators() -> dict[str, type]:
    out: dict[str, type] = {}
    for name, spec in METHODS.items():
        if spec.estimator is not None:
            for cls in estimator_pair(name):
                out[cls.__name__] = cls
    return out


globals().update(_named_estimators())

__all__ = [*sorted(_named_estimators()), "BayesianNetClassifier", "BayesianNetRegressor"]


def __getattr__(name: str) -> type:
    """The estimator pair of a method registered after this module was imported."""
    for key, spec in METHODS.items():
        if spec.estimator is not None and name in estimator_names(key):
            regressor, classifier = estimator_pair(key)
            return regressor if name == regressor.__name__ else classifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
