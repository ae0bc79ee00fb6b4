"""Greater-is-better scorers for ``cross_val_score`` and ``GridSearchCV``: they call
``estimator.predict(X, return_std=True)``."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import _check_level
from .regression import crps_gaussian, gaussian_nll, interval_coverage, interval_width

__all__ = ["neg_gaussian_nll_scorer", "neg_crps_scorer", "make_coverage_scorer",
           "make_width_scorer"]


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
