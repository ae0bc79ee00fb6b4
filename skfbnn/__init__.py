"""skfbnn: scikit-learn estimators for Bayesian neural networks with functional priors."""

from .estimators import (
    BayesianNetClassifier,
    BayesianNetRegressor,
    BBBClassifier,
    BBBRegressor,
    DeepEnsembleClassifier,
    DeepEnsembleRegressor,
    FunctionalSGHMCClassifier,
    FunctionalSGHMCRegressor,
    FunctionalSGLDClassifier,
    FunctionalSGLDRegressor,
    MALAClassifier,
    MALARegressor,
    PCNClassifier,
    PCNLClassifier,
    PCNLRegressor,
    PCNRegressor,
    SGHMCClassifier,
    SGHMCRegressor,
    SGLDClassifier,
    SGLDRegressor,
)
from .exceptions import ConstantTargetWarning, SamplerDivergenceError, SamplerDivergenceWarning

__version__ = "0.1.0"

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
    "SamplerDivergenceError",
    "SamplerDivergenceWarning",
    "ConstantTargetWarning",
    "__version__",
]
