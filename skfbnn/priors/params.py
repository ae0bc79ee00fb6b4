"""The prior parameters an estimator shows, one table per kind of prior.

A registry entry (:class:`skfbnn.inference.registry.MethodSpec`) names its prior kind
and may replace the kind's table by its own (``prior_hyper``); the estimators show the
table's entries as constructor parameters.
"""

from __future__ import annotations

from numbers import Integral, Real

from .._hyper import param
from .._validation import HasMethods, Interval, StrOptions
from .gp import KERNELS

__all__ = ["WEIGHT", "LEARNED_WEIGHT", "FUNCTION", "FUNCTIONAL_SAMPLER", "PRIOR_PARAMS",
           "AUTO_MEASUREMENT_POINTS", "measurement_points"]

AUTO_MEASUREMENT_POINTS = 100
"""``n_measurement_points="auto"``: this many, or the number of training rows if fewer."""

WEIGHT = (
    param("prior_std", 1.0, [Interval(Real, 0, None, closed="neither")], "float",
          "Standard deviation of the isotropic Gaussian weight prior."),
)
"""An isotropic Gaussian prior on the weights."""

LEARNED_WEIGHT = (
    param("prior_std", "learn",
          [StrOptions({"learn", "ard"}), Interval(Real, 0, None, closed="neither")],
          "float, 'learn' or 'ard'",
          "Standard deviation of the isotropic Gaussian weight prior. 'learn': one "
          "prior precision per layer's weights and per layer's biases, with a "
          "Gamma(2, 2) hyperprior (standardised units), drawn from its conditional "
          "by a Gibbs step every 50 steps from the middle of burn-in on; the learned "
          "scales are in ``diagnostics_['prior_std']``. 'ard': as 'learn', with one "
          "precision per input feature for the first layer's weights (automatic "
          "relevance determination; its scales are ``(n_chains, n_features)``)."),
)
"""A Gaussian weight prior whose scales a sampler may learn (Gibbs steps)."""

FUNCTION = (
    param("kernel", None, [None, StrOptions(set(KERNELS)), HasMethods(["forward"])],
          "None, str or gpytorch kernel",
          f"GP prior covariance: None (scaled ARD RBF), one of {list(KERNELS)}, or "
          "a gpytorch kernel instance (copied, never modified)."),
    param("prior_fit_iter", 100, [Interval(Integral, 0, None, closed="left")], "int",
          "Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP "
          "hyperparameters (positive ones in log scale) on at most 1000 training "
          "points; it stops earlier once converged. 0 keeps them fixed."),
    param("prior_mean", "constant", [StrOptions({"zero", "constant"})], "str",
          "GP prior mean: zero, or a constant fitted with the hyperparameters."),
    param("n_measurement_points", "auto",
          [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")], "int or 'auto'",
          "Size of the measurement set redrawn at every step. 'auto': "
          f"``min({AUTO_MEASUREMENT_POINTS}, n_train)``, so on tiny training sets the "
          "functional prior does not get more points than the likelihood has rows (the "
          "paper uses as many as the training set, up to 1000)."),
    param("measurement_points", None, [None, "array-like", callable],
          "None, array-like or callable",
          "Where the functional prior is enforced beyond the training rows (the part of "
          "each measurement set not drawn from them, so none with "
          "``measurement_train_fraction=1``, ifBDE's default). None: uniform in the training box "
          "widened by ``measurement_margin``, so the predictive returns to the GP prior's "
          "spread inside that box, away from the data; outside it nothing holds the "
          "network to the prior. An array of context points ``(m, n_features)`` (or rows of "
          "``input_shape``), e.g. unlabeled rows or inputs where calibrated uncertainty is "
          "wanted: the prior is enforced there, the uncertainty at inputs far from both "
          "them and the data is the network's own (as in weight space). For images the box "
          "holds noise images, unlike any input; context points do not. A callable "
          "``measurement_points(n, generator) -> array (n, n_features)`` draws the rows "
          "itself from the fit's ``torch.Generator`` (reproducible with ``random_state``), "
          "e.g. perturbed or augmented training rows."),
    param("measurement_train_fraction", 0.5, [Interval(Real, 0, 1, closed="both")], "float",
          "Fraction of the measurement set drawn from the training inputs; the "
          "rest is uniform in the widened training box (or from ``measurement_points``)."),
    param("measurement_margin", 0.1, [Interval(Real, 0, None, closed="left")], "float",
          "Relative widening of the training box on each side."),
    param("prior_nugget", "noise", [StrOptions({"noise"}), Interval(Real, 0, None, closed="left")],
          "'noise' or float",
          "Variance added to the diagonal of the prior covariance at the measurement "
          "points (standardised target units). 'noise' uses the observation-noise "
          "variance of the pre-fitted GP (for classification the Dirichlet GP's "
          "per-class mean noise of the transformed labels), floored at 1% of the prior "
          "variance. A small nugget makes the prior very stiff in low dimensions and needs "
          "a much smaller step_size."),
)
"""A GP prior on function values at measurement sets (hyperparameters pre-fitted)."""

FUNCTIONAL_SAMPLER = (
    *FUNCTION,
    param("measurement_margin", 0.25, [Interval(Real, 0, None, closed="left")], "float",
          "Relative widening of the training box on each side; 0.25 for the functional "
          "samplers (0.1 for the variational methods): on the 1-D example it opens the "
          "band in the gap between two clusters of data wider than 0.1 does, and it scores "
          "the same on the UCI validation rows."),
    param("weight_prior_std", None, [None, Interval(Real, 0, None, closed="neither")],
          "float or None",
          "Optional weak Gaussian weight prior added to the functional prior. "
          "None (the paper's choice) leaves the weight posterior improper."),
)
"""The functional samplers' GP prior: a wider measurement box and an optional weight prior
(an entry repeated later replaces the earlier one)."""

PRIOR_PARAMS = {"weight": WEIGHT, "function": FUNCTION, "ntk": ()}
"""The table of each prior kind, unless a registry entry gives its own."""


def measurement_points(value: int | str, n_train: int) -> int:
    """The measurement-set size: ``value``, or for ``"auto"`` the smaller of
    ``AUTO_MEASUREMENT_POINTS`` and the number of training rows.

    Examples
    --------
    >>> measurement_points("auto", 20), measurement_points("auto", 5000), measurement_points(64, 20)
    (20, 100, 64)
    """
    return min(AUTO_MEASUREMENT_POINTS, n_train) if value == "auto" else value
