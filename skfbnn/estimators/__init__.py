"""Public estimators."""

from ._generic import BayesianNetClassifier, BayesianNetRegressor
from ._sgmcmc import (
    FunctionalSGHMCClassifier,
    FunctionalSGHMCRegressor,
    FunctionalSGLDClassifier,
    FunctionalSGLDRegressor,
    SGHMCClassifier,
    SGHMCRegressor,
    SGLDClassifier,
    SGLDRegressor,
)

__all__ = [
    "BayesianNetClassifier",
    "BayesianNetRegressor",
    "FunctionalSGHMCClassifier",
    "FunctionalSGHMCRegressor",
    "FunctionalSGLDClassifier",
    "FunctionalSGLDRegressor",
    "SGHMCClassifier",
    "SGHMCRegressor",
    "SGLDClassifier",
    "SGLDRegressor",
]
