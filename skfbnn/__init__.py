"""skfbnn: scikit-learn estimators for Bayesian neural networks with functional priors.

Every registered inference method (``skfbnn methods``) has a regressor and a classifier
here, e.g. :class:`SGLDRegressor` and :class:`SGLDClassifier`, plus the generic
:class:`BayesianNetRegressor` and :class:`BayesianNetClassifier` that take the method by
name.
"""

from . import estimators as _estimators
from .estimators import *  # noqa: F403  (the names derive from the method registry)
from .exceptions import (
    ConstantTargetWarning,
    DataScaleWarning,
    DivergenceError,
    NoiseOnlyFitWarning,
    OptimisationDivergenceError,
    PoorFitWarning,
    SamplerDivergenceError,
    SamplerDivergenceWarning,
)

__version__ = "0.1.0"

__all__ = [
    *_estimators.__all__,
    "DivergenceError",
    "SamplerDivergenceError",
    "OptimisationDivergenceError",
    "SamplerDivergenceWarning",
    "ConstantTargetWarning",
    "NoiseOnlyFitWarning",
    "PoorFitWarning",
    "DataScaleWarning",
    "__version__",
]
