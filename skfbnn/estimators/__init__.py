"""Public estimators."""

from ._ensemble import DeepEnsembleClassifier, DeepEnsembleRegressor
from ._fsghmc import FunctionalSGHMCClassifier, FunctionalSGHMCRegressor
from ._fsgld import FunctionalSGLDClassifier, FunctionalSGLDRegressor
from ._generic import BayesianNetClassifier, BayesianNetRegressor
from ._sghmc import SGHMCClassifier, SGHMCRegressor
from ._sgld import SGLDClassifier, SGLDRegressor
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
