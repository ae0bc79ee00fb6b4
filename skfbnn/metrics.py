"""Predictive metrics and greater-is-better scorers for probabilistic regressors.

Metrics take ``y`` of shape ``(n,)`` or ``(n, k)`` and average over points and
outputs; scorers call ``estimator.predict(X, return_std=True)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp, ndtr, ndtri

__all__ = [
    "rmse", "gaussian_nll", "mixture_log_likelihood", "moment_matched_log_likelihood",
    "crps_gaussian", "crps_ensemble", "interval_coverage", "interval_width",
    "neg_gaussian_nll_scorer", "neg_crps_scorer", "make_coverage_scorer",
    "make_width_scorer", "expected_calibration_error", "brier_score", "reliability_curve",
    "predictive_entropy", "mutual_information", "ood_auroc"]  # fmt: skip

_LOG_2PI = float(np.log(2.0 * np.pi))


def _finite(a: ArrayLike, name: str, shape: tuple[int, ...] | None = None) -> NDArray:
    """``a`` as float64 with exactly ``shape`` (if given) and only finite values."""
    a = np.asarray(a, dtype=np.float64)
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} must have shape {shape!r}. Got {a.shape!r}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite. Got {a[~np.isfinite(a)].item(0)!r}.")
    return a


def _as_target(y: ArrayLike) -> NDArray[np.float64]:
    y = _finite(y, "y")
    if y.ndim not in (1, 2) or y.size == 0:
        raise ValueError(f"y must be non-empty, shape (n,) or (n, k). Got {y.shape!r}.")
    return y


def _as_std(std: ArrayLike, shape: tuple[int, ...], name: str = "std") -> NDArray:
    """Validate a positive scale; a scalar is broadcast to ``shape``."""
    std = _finite(std, name, None if np.ndim(std) == 0 else shape)
    if not np.all(std > 0):
        raise ValueError(f"{name} must be > 0. Got {float(np.min(std))!r}.")
    return np.broadcast_to(std, shape)


def _check_level(level: float) -> float:
    if not (isinstance(level, (int, float, np.number)) and 0.0 < level < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1. Got {level!r}.")
    return float(level)


def _gaussian_args(y: ArrayLike, mean: ArrayLike, std: ArrayLike) -> tuple:
    y = _as_target(y)
    return y, _finite(mean, "mean", y.shape), _as_std(std, y.shape)


def _as_draws(
    y: NDArray, f_draws: ArrayLike, noise_std: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    f = _finite(f_draws, "f_draws")
    if f.ndim != y.ndim + 1 or f.shape[1:] != y.shape or f.shape[0] < 1:
        raise ValueError(f"f_draws must have shape (S, *{y.shape!r}). Got {f.shape!r}.")
    return f, None if noise_std is None else _draw_noise(noise_std, f)


def _draw_noise(noise_std: ArrayLike, f: NDArray) -> NDArray[np.float64]:
    """Broadcast noise (scalar, (S,), (S, k) or f's shape) to f's shape."""
    s = np.asarray(noise_std, dtype=np.float64)
    n_draws = f.shape[0]
    if s.shape in {(n_draws,), (n_draws,) + f.shape[2:]}:  # per draw (and output)
        shape = (n_draws,) + (1,) * (f.ndim - s.ndim) + s.shape[1:]
        s = np.broadcast_to(s.reshape(shape), f.shape)
    elif s.ndim != 0 and s.shape != f.shape:
        msg = f"noise_std must have shape (), (S,), (S, k) or {f.shape!r}"
        raise ValueError(f"{msg}. Got {s.shape!r}.")
    return _as_std(s, f.shape, "noise_std")


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


def expected_calibration_error(y: ArrayLike, proba: ArrayLike, n_bins: int = 10) -> float:
    """Top-label expected calibration error (Guo et al. 2017).

    Points are grouped into ``n_bins`` equal-width bins of their top predicted
    probability (the confidence); the ECE is the mean over points of
    ``|accuracy - confidence|`` of their bin. ``y`` holds column indices of
    ``proba`` (encode labels first, e.g. with ``np.searchsorted(classes_, y)``).

    Examples
    --------
    >>> proba = [[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.4, 0.6]]
    >>> # bin 0.9: accuracy 1/2; bin 0.6: accuracy 2/2; both 0.4 away from confidence
    >>> round(expected_calibration_error([0, 1, 0, 1], proba), 4)
    0.4
    """
    proba = _finite(proba, "proba")
    y = np.asarray(y)
    if proba.ndim != 2 or y.shape != (len(proba),):
        raise ValueError(f"proba must have shape (n, n_classes) and y shape (n,). Got "
                         f"{proba.shape} and {y.shape}.")
    if not (isinstance(n_bins, (int, np.integer)) and n_bins >= 1):
        raise ValueError(f"n_bins must be a positive integer. Got {n_bins!r}.")
    confidence = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    gap = 0.0
    for b in np.unique(bins):
        inside = bins == b
        gap += abs(correct[inside].mean() - confidence[inside].mean()) * inside.sum()
    return float(gap / len(y))


def _proba_labels(y: ArrayLike, proba: ArrayLike) -> tuple[NDArray, NDArray]:
    """``proba`` as finite float64 ``(n, K)`` rows and ``y`` as column indices ``(n,)``."""
    proba = _finite(proba, "proba")
    y = np.asarray(y)
    if proba.ndim != 2 or y.shape != (len(proba),) or len(proba) == 0:
        raise ValueError(f"proba must have shape (n, n_classes) and y shape (n,), n >= 1. "
                         f"Got {proba.shape} and {y.shape}.")
    if not (np.issubdtype(y.dtype, np.integer) and np.all((y >= 0) & (y < proba.shape[1]))):
        raise ValueError(f"y must hold column indices of proba in [0, {proba.shape[1]}). "
                         f"Got {y[:5].tolist()!r}.")
    return y, proba


def brier_score(y: ArrayLike, proba: ArrayLike) -> float:
    """Multi-class Brier score: mean over points of ``sum_k (p_k - [y = k])**2``.

    The sum runs over all classes (Brier 1950), so it lies in ``[0, 2]``; with two
    classes it is twice scikit-learn's binary ``brier_score_loss``. ``y`` holds
    column indices of ``proba``. Lower is better.

    Examples
    --------
    >>> brier_score([0, 1], [[1.0, 0.0], [0.5, 0.5]])  # (0 + (0.25 + 0.25)) / 2
    0.25
    """
    y, proba = _proba_labels(y, proba)
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def reliability_curve(
    y: ArrayLike, proba: ArrayLike, n_bins: int = 15
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-bin counts, accuracy and mean confidence of the top-label predictions.

    The bins are ``n_bins`` equal-width intervals of the top predicted
    probability, as in :func:`expected_calibration_error` (whose value is
    ``sum(counts * |accuracy - confidence|) / n`` over non-empty bins); empty bins
    have NaN accuracy and confidence. These are the bars of a reliability diagram.

    Examples
    --------
    >>> counts, acc, conf = reliability_curve([0, 1, 0], [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]],
    ...                                       n_bins=2)
    >>> counts.tolist(), acc.tolist(), [round(c, 2) for c in conf.tolist()]
    ([0, 3], [nan, 0.3333333333333333], [nan, 0.8])
    """
    y, proba = _proba_labels(y, proba)
    if not (isinstance(n_bins, (int, np.integer)) and n_bins >= 1):
        raise ValueError(f"n_bins must be a positive integer. Got {n_bins!r}.")
    confidence = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == y).astype(np.float64)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.bincount(bins, correct, minlength=n_bins) / counts
        mean_conf = np.bincount(bins, confidence, minlength=n_bins) / counts
    return counts.astype(np.int64), accuracy, mean_conf


def predictive_entropy(proba: ArrayLike) -> NDArray[np.float64]:
    """Entropy ``-sum_k p_k log p_k`` (nats) of each row of ``proba``; ``0 log 0 = 0``.

    Examples
    --------
    >>> predictive_entropy([[0.5, 0.5], [1.0, 0.0]]).round(6).tolist()  # log 2, 0
    [0.693147, 0.0]
    """
    proba = _finite(proba, "proba")
    if proba.ndim < 1 or proba.shape[-1] < 1:
        raise ValueError(f"proba must have a class axis last. Got shape {proba.shape}.")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(proba > 0, proba * np.log(proba), 0.0)
    return 0.0 - terms.sum(axis=-1)  # 0.0 - 0.0 is +0.0, where -(0.0) is -0.0


def mutual_information(draw_proba: ArrayLike) -> NDArray[np.float64]:
    """Epistemic part of the predictive entropy from per-draw class probabilities.

    ``draw_proba`` has shape ``(S, n, K)`` (posterior draws or ensemble members);
    the mutual information between the label and the draw is the entropy of the
    mean probabilities minus the mean entropy of each draw's (BALD; Houlsby et al.
    2011), per point, in nats, clipped at 0 against round-off.

    Examples
    --------
    >>> p = [[[1.0, 0.0]], [[0.0, 1.0]]]  # two confident draws that disagree
    >>> mutual_information(p).round(6).tolist()  # log 2 - 0
    [0.693147]
    """
    p = _finite(draw_proba, "draw_proba")
    if p.ndim != 3 or p.shape[0] < 1:
        raise ValueError(f"draw_proba must have shape (n_draws, n, n_classes). Got {p.shape}.")
    mi = predictive_entropy(p.mean(axis=0)) - predictive_entropy(p).mean(axis=0)
    return np.maximum(mi, 0.0)


def ood_auroc(score_in: ArrayLike, score_out: ArrayLike) -> float:
    """Area under the ROC curve for telling out-of-distribution points by a score.

    The out-of-distribution points are the positive class and a higher score
    (e.g. :func:`predictive_entropy` or :func:`mutual_information`) means "more
    likely out": the AUROC is the probability that an out point scores above an
    in point, ties counting one half (the Mann-Whitney statistic, the same as
    ``sklearn.metrics.roc_auc_score``). 0.5 is chance, 1 perfect separation.

    Examples
    --------
    >>> ood_auroc([0.1, 0.2, 0.3], [0.25, 0.4])  # 5 of the 6 pairs ordered
    0.8333333333333334
    """
    a = _finite(score_in, "score_in").ravel()
    b = _finite(score_out, "score_out").ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError(f"score_in and score_out must be non-empty. Got sizes {a.size}, "
                         f"{b.size}.")
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([a, b]))  # average ranks: ties count one half
    u = ranks[a.size:].sum() - b.size * (b.size + 1) / 2.0
    return float(u / (a.size * b.size))


def _predict_mean_std(estimator: Any, X: Any, y: ArrayLike) -> tuple[NDArray, ...]:
    mean, std = estimator.predict(X, return_std=True)
    y, mean, std = (np.asarray(a, dtype=np.float64) for a in (y, mean, std))
    if y.ndim == 2 and y.shape[1] == 1 and mean.ndim == 1:  # (n, 1) vs (n,)
        y = y[:, 0]
    elif y.ndim == 1 and mean.ndim == 2 and mean.shape[1] == 1:
        mean, std = mean[:, 0], std.reshape(mean.shape)[:, 0]
    return y, mean, std


def neg_gaussian_nll_scorer(estimator: Any, X: Any, y: ArrayLike) -> float:
    """Scorer: minus :func:`gaussian_nll` of the predictive mean and std.

    Examples
    --------
    >>> class Est:  # predicts N(0, 1) everywhere
    ...     predict = staticmethod(lambda X, return_std=False: ([0.0], [1.0]))
    >>> round(neg_gaussian_nll_scorer(Est(), [[0.0]], [0.0]), 6)
    -0.918939
    """
    y, mean, std = _predict_mean_std(estimator, X, y)
    return -gaussian_nll(y, mean, std)


def neg_crps_scorer(estimator: Any, X: Any, y: ArrayLike) -> float:
    """Scorer: minus :func:`crps_gaussian` of the predictive mean and std.

    Examples
    --------
    >>> class Est:  # predicts N(0, 1) everywhere
    ...     predict = staticmethod(lambda X, return_std=False: ([0.0], [1.0]))
    >>> round(neg_crps_scorer(Est(), [[0.0]], [0.0]), 6)
    -0.233695
    """
    y, mean, std = _predict_mean_std(estimator, X, y)
    return -crps_gaussian(y, mean, std)


class _IntervalScorer:
    """Picklable scorer for interval coverage (``width=False``) or -width."""

    def __init__(self, level: float, width: bool) -> None:
        self.level, self.width = _check_level(level), width
        self.__name__ = f"{'neg_width' if width else 'coverage'}_scorer_{self.level:g}"

    def __call__(self, estimator: Any, X: Any, y: ArrayLike) -> float:
        y, mean, std = _predict_mean_std(estimator, X, y)
        if self.width:
            return -interval_width(std, self.level)
        return interval_coverage(y, mean, std, self.level)

    def __repr__(self) -> str:
        kind = "width" if self.width else "coverage"
        return f"make_{kind}_scorer(level={self.level!r})"


def make_coverage_scorer(level: float = 0.95) -> _IntervalScorer:
    """Scorer returning the empirical coverage of the central ``level`` interval.

    Examples
    --------
    >>> make_coverage_scorer(0.9)
    make_coverage_scorer(level=0.9)
    """
    return _IntervalScorer(level, width=False)


def make_width_scorer(level: float = 0.95) -> _IntervalScorer:
    """Scorer returning the NEGATIVE mean width of the central ``level`` interval.

    Examples
    --------
    >>> make_width_scorer(0.9).__name__
    'neg_width_scorer_0.9'
    """
    return _IntervalScorer(level, width=True)
