"""Public estimators."""

from ._ensemble import DeepEnsembleClassifier, DeepEnsembleRegressor
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
from ._variational import BBBClassifier, BBBRegressor

__all__ = [
    "BBBClassifier",
    "BBBRegressor",
    "DeepEnsembleClassifier",
    "DeepEnsembleRegressor",
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
