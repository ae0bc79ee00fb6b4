"""Proper scoring rules and interval metrics of Gaussian and sampled predictives."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp, ndtr, ndtri

from ._checks import _LOG_2PI, _as_draws, _as_std, _as_target, _check_level, _finite, _gaussian_args

__all__ = ["rmse", "gaussian_nll", "mixture_log_likelihood",
           "moment_matched_log_likelihood", "crps_gaussian", "crps_ensemble",
           "interval_coverage", "interval_width"]


def rmse(y: ArrayLike, mean: ArrayLike) -> float:
    """Root mean squared error, pooled over points and outputs.

    Examples
    --------
    >>> round(rmse([0.0, 0.0], [3.0, 4.0]), 4)  # sqrt((9 + 16) / 2)
    3.5355
    """
    y = _as_target(y)
    mean = _finite(mean, "mean", y.shape)
    return float(np.sqrt(np.mean((y - mean) ** 2)))


def gaussian_nll(y: ArrayLike, mean: ArrayLike, std: ArrayLike) -> float:
    """Mean negative log density ``-log N(y; mean, std**2)``.

    Examples
    --------
    >>> round(gaussian_nll([0.0], [0.0], [1.0]), 6)  # 0.5 * log(2 pi)
    0.918939
    """
    y, mean, std = _gaussian_args(y, mean, std)
    z = (y - mean) / std
    return float(np.mean(0.5 * _LOG_2PI + np.log(std) + 0.5 * z**2))


def mixture_log_likelihood(
    y: ArrayLike, f_draws: ArrayLike, noise_std: ArrayLike
) -> float:
    """Mean test log-likelihood of the equal-weight mixture over draws.

    Per point ``logsumexp_s log N(y | f_s, sigma_s**2) - log S``, averaged over
    points and outputs (greater is better). ``f_draws`` (shape ``(S, n)`` or
    ``(S, n, k)``) are posterior draws of the latent function; ``noise_std`` is
    a scalar, one value per draw ``(S,)``, per draw and output ``(S, k)``, or an
    array of ``f_draws``' shape (heteroscedastic).

    Examples
    --------
    >>> f = [[0.0, 1.0], [0.0, 1.0]]  # two identical draws = one Gaussian
    >>> round(mixture_log_likelihood([0.0, 1.0], f, 1.0), 6)
    -0.918939
    """
    y = _as_target(y)
    f, s = _as_draws(y, f_draws, noise_std)
    log_pdf = -0.5 * _LOG_2PI - np.log(s) - 0.5 * ((y - f) / s) ** 2
    per_point = logsumexp(log_pdf, axis=0) - np.log(f.shape[0])
    return float(np.mean(per_point))


def moment_matched_log_likelihood(
    y: ArrayLike, f_draws: ArrayLike, noise_std: ArrayLike
) -> float:
    """Mean log-likelihood under the moment-matched Gaussian of the mixture.

    Mean ``mean_s f_s`` and variance ``var_s f_s + mean_s sigma_s**2``
    (population variance over draws); arguments as in
    :func:`mixture_log_likelihood`.

    Examples
    --------
    >>> round(moment_matched_log_likelihood([0.0], [[-1.0], [1.0]], 1.0), 6)
    -1.265512
    """
    y = _as_target(y)
    f, s = _as_draws(y, f_draws, noise_std)
    var = f.var(axis=0) + np.mean(s**2, axis=0)
    return -gaussian_nll(y, f.mean(axis=0), np.sqrt(var))


def crps_gaussian(y: ArrayLike, mean: ArrayLike, std: ArrayLike) -> float:
    """Mean continuous ranked probability score of Gaussian forecasts.

    Closed form ``std * (z (2 Phi(z) - 1) + 2 phi(z) - 1 / sqrt(pi))`` with
    ``z = (y - mean) / std``. Lower is better.

    Examples
    --------
    >>> round(crps_gaussian([0.0], [0.0], [1.0]), 6)  # (sqrt(2) - 1) / sqrt(pi)
    0.233695
    """
    y, mean, std = _gaussian_args(y, mean, std)
    z = (y - mean) / std
    pdf = np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi)
    crps = std * (z * (2.0 * ndtr(z) - 1.0) + 2.0 * pdf - 1.0 / np.sqrt(np.pi))
    return float(np.mean(crps))


def crps_ensemble(y: ArrayLike, f_draws: ArrayLike) -> float:
    """Mean CRPS of the empirical distribution of samples ``f_draws``.

    Energy form ``E|X - y| - 0.5 E|X - X'|`` with both expectations under the
    empirical distribution (pairs ``s = s'`` included), computed in
    ``O(S log S)`` per point from the sorted draws. Lower is better.

    Examples
    --------
    >>> crps_ensemble([0.0], [[1.0]])  # a single draw: CRPS = |x - y|
    1.0
    """
    y = _as_target(y)
    f, _ = _as_draws(y, f_draws)
    n_draws = f.shape[0]
    abs_err = np.mean(np.abs(f - y), axis=0)
    # sum_{s,s'} |x_s - x_s'| = 2 * sum_i (2 i - S - 1) x_(i), i = 1..S
    weights = np.arange(1 - n_draws, n_draws, 2.0).reshape((-1,) + (1,) * y.ndim)
    spread = np.sum(weights * np.sort(f, axis=0), axis=0) / n_draws**2
    return float(np.mean(abs_err - spread))


def interval_coverage(
    y: ArrayLike, mean: ArrayLike, std: ArrayLike, level: float = 0.95
) -> float:
    """Fraction of ``y`` inside the central ``level`` Gaussian interval.

    Examples
    --------
    >>> y, mean, std = [0.0, 1.0, 5.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    >>> round(interval_coverage(y, mean, std), 4)  # 5.0 lies outside +-1.96
    0.6667
    """
    level = _check_level(level)
    y, mean, std = _gaussian_args(y, mean, std)
    half = ndtri(0.5 + 0.5 * level) * std
    return float(np.mean(np.abs(y - mean) <= half))


def interval_width(std: ArrayLike, level: float = 0.95) -> float:
    """Mean width ``2 * Phi^{-1}((1 + level) / 2) * std`` of central intervals.

    Examples
    --------
    >>> round(interval_width([1.0, 2.0], level=0.95), 4)
    5.8799
    """
    level = _check_level(level)
    if np.size(std) == 0:
        raise ValueError(f"std must be non-empty. Got {std!r}.")
    std = _as_std(std, np.shape(std))
    return float(np.mean(2.0 * ndtri(0.5 + 0.5 * level) * std))
