"""Calibration, scoring and out-of-distribution metrics of class probabilities."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import _finite

__all__ = ["expected_calibration_error", "brier_score", "reliability_curve",
           "predictive_entropy", "mutual_information", "ood_auroc"]


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
