"""Errors and warning categories raised by the estimators (scikit-learn's convention).

This module is the ground floor of the package: it imports nothing from skfbnn, so every
layer (the driver, the priors, the estimators) raises the same classes.

Catch or filter them by class, e.g.
``warnings.filterwarnings("error", category=SamplerDivergenceWarning)`` turns a
suspicious fit into an exception; ``except DivergenceError`` catches a diverged sampler
and a diverged optimisation alike.
"""

from __future__ import annotations

__all__ = [
    "DivergenceError",
    "SamplerDivergenceError",
    "OptimisationDivergenceError",
    "SamplerDivergenceWarning",
    "ConstantTargetWarning",
    "NoiseOnlyFitWarning",
    "PoorFitWarning",
    "DataScaleWarning",
    "divergence_message",
    "divergence_error",
]


class DivergenceError(RuntimeError):
    """A fit produced NaN, infinite or absurd values.

    The message says what was measured and lists the likely causes in order: the
    inputs' or targets' scale, outliers, the step size.
    """


class SamplerDivergenceError(DivergenceError):
    """A sampler (SG-MCMC or Metropolis-Hastings) diverged."""


class OptimisationDivergenceError(SamplerDivergenceError):
    """An optimisation (variational inference, ensemble members) diverged.

    A subclass of :class:`SamplerDivergenceError` so that code written against that
    older, single class keeps catching every divergence.
    """


def divergence_message(what: str, measured: str, step_name: str) -> str:
    """The message of a :class:`DivergenceError`: what diverged, what was measured, and
    the likely causes in order.

    Examples
    --------
    >>> print(divergence_message("sampler", "a chain's log posterior fell 100-fold",
    ...                          "step_size"))  # doctest: +NORMALIZE_WHITESPACE
    The sampler diverged: a chain's log posterior fell 100-fold. Likely causes, in order:
    inputs far from unit scale (standardise X, e.g. with StandardScaler); outliers in X or y;
    a step size too large for this problem (reduce step_size).
    """
    return (
        f"The {what} diverged: {measured}. Likely causes, in order: inputs far from unit "
        "scale (standardise X, e.g. with StandardScaler); outliers in X or y; a step size "
        f"too large for this problem (reduce {step_name})."
    )


def divergence_error(step_name: str, measured: str) -> DivergenceError:
    """The :class:`DivergenceError` of a run whose step parameter is ``step_name``:
    ``step_size`` (a sampler) or ``learning_rate`` (an optimisation).

    Examples
    --------
    >>> type(divergence_error("learning_rate", "the objective is NaN")).__name__
    'OptimisationDivergenceError'
    """
    if step_name == "step_size":
        return SamplerDivergenceError(divergence_message("sampler", measured, step_name))
    return OptimisationDivergenceError(divergence_message("optimisation", measured, step_name))


class SamplerDivergenceWarning(UserWarning):
    """Some posterior draws (or ensemble members) escaped to implausible values.

    Issued when the posterior predictive at the training inputs is far wider
    than the targets but not so wide that the fit is unusable (which raises
    :class:`SamplerDivergenceError`), and when an optimisation's objective fell well
    below its best during the run. The message lists the likely causes in order: the
    data's scale (when :class:`DataScaleWarning` found it far from unit scale), then the
    step (``step_size`` or ``learning_rate``, with its multiple of the default).
    """


class ConstantTargetWarning(UserWarning):
    """A regression target column has (numerically) zero variance.

    Such a column is not learned: it is predicted as its constant value, with
    zero epistemic spread and the fixed ``noise_std`` (zero when the noise is
    learned) as predictive standard deviation.
    """


class PoorFitWarning(UserWarning):
    """A fit ends no better than a trivial predictor on its own training rows.

    A regressor whose predictive mean fits the training targets worse than their mean
    (a negative training R^2), or a classifier whose training accuracy is at chance (no
    better than always predicting the most frequent class). The message lists the likely
    causes in order: the data's scale (see :class:`DataScaleWarning`), a step too large
    (named, with its multiple of the default), a run too short.
    """


class NoiseOnlyFitWarning(PoorFitWarning):
    """A regressor's learned observation noise exceeds the spread of the targets.

    The fit then explains ``y`` as noise, worse than predicting the mean of ``y``:
    with Bayes by backprop on little data, the factorised ``q`` stays at the weight
    prior and the noise absorbs the prior's functions; a step too large does the same.
    A fixed ``noise_std``, a smaller network, more data or a smaller step avoid it.
    """


class DataScaleWarning(UserWarning):
    """Inputs, or targets with ``normalize_y=False``, are far from unit scale.

    Every estimator here assumes inputs of about unit scale (its weight prior, its
    initialisation, the NTK parameterisation of the Metropolis-Hastings samplers), and
    the regressors' priors and noise prior assume standardised targets. The message names
    the columns and their scale; standardise ``X`` (e.g. with
    ``sklearn.preprocessing.StandardScaler`` in a pipeline) and keep ``normalize_y=True``.
    """
