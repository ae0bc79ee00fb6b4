"""Inputs (and, with ``normalize_y=False``, targets) far from unit scale, reported before a
fit runs (:func:`scale_warnings`): every estimator here assumes standardised data."""

from __future__ import annotations

import numpy as np

from ..exceptions import DataScaleWarning
from .checks import SamplerWarning

__all__ = ["SCALE_HIGH", "SCALE_LOW", "scale_warnings"]

SCALE_HIGH = 10.0
"""An input column (or, with ``normalize_y=False``, a target column) whose root mean square
exceeds this is reported with a :class:`~skfbnn.exceptions.DataScaleWarning`; standardised
columns have a root mean square of 1. On 200 rows (the sweep of the bad-inputs page)
inputs scaled by 10 raised the test error of SGLD, Bayes by backprop, pCN and the
deep ensemble 1.6, 2.5, 1.5 and 2.1 times (at 1e6 pCN's was 763 standard deviations of y,
its training R^2 0.98), and targets of standard deviation 13 without ``normalize_y`` that of
Bayes by backprop and pCN 2.1 and 2.7 times."""
SCALE_LOW = 0.1
"""A non-constant column whose standard deviation is below this is reported likewise. In the
same sweep inputs scaled by 0.1 lowered the training R^2 of Bayes by backprop and pCN from
0.98 and 0.99 to 0.77 and 0.76, and by 0.03 pCN's to 0.02; targets of standard deviation
0.013 without ``normalize_y`` lowered SGLD's to 0.20 (0.13 left it at 0.97)."""
MAX_NAMED_COLUMNS = 5


def _columns(columns: list[int]) -> str:
    shown = columns[:MAX_NAMED_COLUMNS]
    more = len(columns) - len(shown)
    return f"{shown}" + (f" and {more} more" if more > 0 else "")


def scale_warnings(X: np.ndarray, y: np.ndarray | None = None
                   ) -> tuple[list[SamplerWarning], tuple[str, ...]]:
    """Inputs ``X`` (and targets ``y``, given only with ``normalize_y=False``) far from unit
    scale: columns whose root mean square exceeds :data:`SCALE_HIGH` or whose standard
    deviation is below :data:`SCALE_LOW` (constant columns aside).

    Returns the ``"scale"`` warnings (:class:`~skfbnn.exceptions.DataScaleWarning`) and a
    short note per finding for the other messages (:class:`~skfbnn.diagnostics.advice.FitAdvice`).

    Examples
    --------
    >>> X = np.c_[np.linspace(-1, 1, 50), 1e6 * np.linspace(-1, 1, 50)]
    >>> found, notes = scale_warnings(X)
    >>> [w.kind for w in found], found[0].extra["large"]
    (['scale'], [1])
    >>> scale_warnings(np.c_[np.linspace(-1, 1, 50)])
    ([], ())
    """
    found, notes = [], []
    for what, data in (("X", X), ("y", y)):
        if data is None:
            continue
        data = np.asarray(data, dtype=np.float64).reshape(len(data), -1)
        rms = np.sqrt(np.mean(data**2, axis=0))
        std = data.std(axis=0)
        n, eps = len(data), np.finfo(np.float64).eps
        constant = std**2 <= n * eps * std**2 + (n * np.abs(data.mean(0)) * eps) ** 2
        large = np.flatnonzero(rms > SCALE_HIGH).tolist()
        small = np.flatnonzero((std < SCALE_LOW) & ~constant & (rms <= SCALE_HIGH)).tolist()
        if not large and not small:
            continue
        parts, short = [], []
        if large:
            peak = np.abs(data[:, large]).max(0)
            bulk = _trimmed_rms(data[:, large])
            outliers = [c for c, b, r in zip(large, bulk, rms[large], strict=True)
                        if b < 0.1 * r]
            parts.append(
                f"{what} column(s) {_columns(large)} have a root mean square of "
                f"{_values(rms[large])} (largest |value| {_values(peak)})"
                + (f"; in column(s) {_columns(outliers)} a few rows hold nearly all of it "
                   "(outlying rows: remove or clip them)" if outliers else ""))
            short.append(f"{what} column(s) {_columns(large)} of root mean square up to "
                         f"{float(rms[large].max()):.3g}")
        if small:
            parts.append(f"{what} column(s) {_columns(small)} vary by a standard deviation "
                         f"of only {_values(std[small])}")
            short.append(f"{what} column(s) {_columns(small)} of standard deviation down to "
                         f"{float(std[small].min()):.3g}")
        if what == "X":
            remedy = (
                "Every estimator here assumes inputs of about unit scale (its weight prior "
                "and initialisation; the NTK parameterisation of pCN, pCNL and MALA): "
                "standardise X, e.g. make_pipeline(StandardScaler(), estimator).")
        else:
            remedy = (
                "With normalize_y=False the network, its priors and the noise prior work on "
                "the targets as given, and they assume targets of about unit scale: use "
                "normalize_y=True (the default), which standardises y and maps the "
                "predictions back.")
        found.append(SamplerWarning(
            "scale",
            "; ".join(parts) + f" (unit scale: a root mean square up to {SCALE_HIGH:g} and a "
            f"standard deviation of at least {SCALE_LOW:g}). " + remedy,
            extra={"what": what, "large": large, "small": small, "rms": rms, "std": std},
            category=DataScaleWarning))
        notes.append(("inputs far from unit scale: " if what == "X" else
                      "targets far from unit scale with normalize_y=False: ")
                     + ", ".join(short))
    return found, tuple(notes)


def _values(a: np.ndarray) -> str:
    shown = [f"{float(v):.3g}" for v in a[:MAX_NAMED_COLUMNS]]
    return ", ".join(shown) + (" ..." if len(a) > MAX_NAMED_COLUMNS else "")


def _trimmed_rms(data: np.ndarray) -> np.ndarray:
    """Root mean square of each column without its largest 1% of rows by magnitude (at
    least one row): far below the whole column's when a few rows hold its scale."""
    n = len(data)
    keep = max(1, n - max(1, n // 100))
    mags = np.sort(np.abs(data), axis=0)[:keep]
    return np.sqrt(np.mean(mags**2, axis=0))
