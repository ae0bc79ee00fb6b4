"""Errors and warning categories raised by the estimators (scikit-learn's convention).

Catch or filter them by class, e.g.
``warnings.filterwarnings("error", category=SamplerDivergenceWarning)`` turns a
suspicious fit into an exception.
"""

from __future__ import annotations

from .inference.run import SamplerDivergenceError

__all__ = ["SamplerDivergenceError", "SamplerDivergenceWarning", "ConstantTargetWarning"]


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
