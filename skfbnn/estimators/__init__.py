"""Public estimators."""

from ._ensemble import DeepEnsembleClassifier, DeepEnsembleRegressor
from ._fbnn import FBNNClassifier, FBNNRegressor
from ._fsghmc import FunctionalSGHMCClassifier, FunctionalSGHMCRegressor
from ._fsgld import FunctionalSGLDClassifier, FunctionalSGLDRegressor
from ._generic import BayesianNetClassifier, BayesianNetRegressor
from ._ifbde import IFBDEClassifier, IFBDERegressor
from ._ifbnn import IFBNNClassifier, IFBNNRegressor
from ._mala import MALAClassifier, MALARegressor
from ._pcn import PCNClassifier, PCNRegressor
from ._pcnl import PCNLClassifier, PCNLRegressor
from ._sghmc import SGHMCClassifier, SGHMCRegressor
from ._sgld import SGLDClassifier, SGLDRegressor
from ._variational import BBBClassifier, BBBRegressor

__all__ = [
    "BBBClassifier",
    "BBBRegressor",
    "DeepEnsembleClassifier",
    "DeepEnsembleRegressor",
    "FBNNClassifier",
    "FBNNRegressor",
    "IFBDEClassifier",
    "IFBDERegressor",
    "IFBNNClassifier",
    "IFBNNRegressor",
    "BayesianNetClassifier",
    "BayesianNetRegressor",
    "FunctionalSGHMCClassifier",
    "FunctionalSGHMCRegressor",
    "FunctionalSGLDClassifier",
    "FunctionalSGLDRegressor",
    "MALAClassifier",
    "MALARegressor",
    "PCNClassifier",
    "PCNRegressor",
    "PCNLClassifier",
    "PCNLRegressor",
    "SGHMCClassifier",
    "SGHMCRegressor",
    "SGLDClassifier",
    "SGLDRegressor",
]
