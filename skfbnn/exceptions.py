"""Errors and warning categories raised by the estimators (scikit-learn's convention).

Catch or filter them by class, e.g.
``warnings.filterwarnings("error", category=SamplerDivergenceWarning)`` turns a
suspicious fit into an exception.
"""

from __future__ import annotations

from .inference.run import SamplerDivergenceError

__all__ = ["SamplerDivergenceError", "SamplerDivergenceWarning", "ConstantTargetWarning",
           "NoiseOnlyFitWarning"]


class SamplerDivergenceWarning(UserWarning):
    """Some posterior draws (or ensemble members) escaped to implausible values.

    Issued when the posterior predictive at the training inputs is far wider
    than the targets but not so wide that the fit is unusable (which raises
    :class:`SamplerDivergenceError`). The usual remedy is a smaller step size
    (``step_size`` or ``learning_rate``).
    """


class ConstantTargetWarning(UserWarning):
    """A regression target column has (numerically) zero variance.

    Such a column is not learned: it is predicted as its constant value, with
    zero epistemic spread and the fixed ``noise_std`` (zero when the noise is
    learned) as predictive standard deviation.
    """


class NoiseOnlyFitWarning(UserWarning):
    """A regressor's learned observation noise exceeds the spread of the targets.

    The fit then explains ``y`` as noise, worse than predicting the mean of ``y``:
    with Bayes by backprop on little data, the factorised ``q`` stays at the weight
    prior and the noise absorbs the prior's functions. A fixed ``noise_std``, a
    smaller network or more data avoid it.
    """
