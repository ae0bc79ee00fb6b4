"""Predictive metrics and greater-is-better scorers for probabilistic regressors.

Metrics take ``y`` of shape ``(n,)`` or ``(n, k)`` and average over points and
outputs; scorers call ``estimator.predict(X, return_std=True)``.
"""

from __future__ import annotations

from .classification import (
    brier_score,
    expected_calibration_error,
    mutual_information,
    ood_auroc,
    predictive_entropy,
    reliability_curve,
)
from .regression import (
    crps_ensemble,
    crps_gaussian,
    gaussian_nll,
    interval_coverage,
    interval_width,
    mixture_log_likelihood,
    moment_matched_log_likelihood,
    rmse,
)
from .scorers import (
    make_coverage_scorer,
    make_width_scorer,
    neg_crps_scorer,
    neg_gaussian_nll_scorer,
)

__all__ = [
    "rmse",
    "gaussian_nll",
    "mixture_log_likelihood",
    "moment_matched_log_likelihood",
    "crps_gaussian",
    "crps_ensemble",
    "interval_coverage",
    "interval_width",
    "neg_gaussian_nll_scorer",
    "neg_crps_scorer",
    "make_coverage_scorer",
    "make_width_scorer",
    "expected_calibration_error",
    "brier_score",
    "reliability_curve",
    "predictive_entropy",
    "mutual_information",
    "ood_auroc",
]
