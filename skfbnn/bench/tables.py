"""Mean +- standard error over groups of records, and the Markdown tables of it: the
building blocks every task's summary uses (:mod:`skfbnn.bench.report`,
:mod:`skfbnn.bench.bandit_summary`, :mod:`skfbnn.bench.classification`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

__all__ = ["summarize", "format_cell", "format_summary", "plain_value"]


def summarize(
    records: Sequence[dict], by: Sequence[str], columns: Sequence[str]
) -> dict[tuple, dict[str, tuple[float, float, int]]]:
    """``{group: {column: (mean, standard error, n)}}`` over the finite values.

    Groups are the distinct values of the ``by`` columns; the standard error is
    the sample standard deviation over ``sqrt(n)`` (NaN for one value; mean NaN
    when a group has no finite value of a column).

    Examples
    --------
    >>> rows = [{"m": "a", "x": 1.0}, {"m": "a", "x": 3.0}, {"m": "a", "x": float("nan")}]
    >>> summarize(rows, ["m"], ["x"])[("a",)]["x"]
    (2.0, 1.0, 2)
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        groups[tuple(r[c] for c in by)].append(r)
    out = {}
    for key, rows in groups.items():
        out[key] = {}
        for col in columns:
            values = np.array([r.get(col, np.nan) for r in rows], dtype=float)
            values = values[np.isfinite(values)]
            n = len(values)
            mean = values.mean() if n else np.nan
            se = values.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
            out[key][col] = (float(mean), float(se), n)
    return out


def format_cell(mean: float, se: float, digits: int = 3) -> str:
    """``'mean ± se'``, ``'mean'`` without a standard error, ``'n/a'`` without a mean.

    Examples
    --------
    >>> format_cell(0.51234, 0.0123), format_cell(-1e-5, float("nan")), format_cell(float("nan"), 0)
    ('0.512 ± 0.012', '0.000', 'n/a')
    """
    if not np.isfinite(mean):
        return "n/a"
    text = f"{mean:.{digits}f}"
    if text.startswith("-") and float(text) == 0:  # no "-0.000"
        text = text[1:]
    if not np.isfinite(se):
        return text
    return f"{text} ± {se:.{digits}f}"


def format_summary(
    summary: dict, by: Sequence[str], columns: Sequence[str], count: str = "n",
    digits: int = 3, order: Sequence | None = None,
) -> str:
    """A Markdown table of :func:`summarize`'s output, one row per group (sorted, or in
    ``order`` of the groups' last key), the count of the first column after the keys."""
    head = "| " + " | ".join([*by, count, *columns]) + " |"
    lines = [head, "|" + "---|" * (len(by) + 1 + len(columns))]
    rank = {v: i for i, v in enumerate(order or ())}

    def sort_key(key):
        return (*map(str, key[:-1]), rank.get(key[-1], len(rank)), str(key[-1]))

    for key in sorted(summary, key=sort_key):
        cols = summary[key]
        n = max(cols[c][2] for c in columns) if columns else 0
        cells = [format_cell(*cols[c][:2], digits=digits) for c in columns]
        lines.append("| " + " | ".join([*map(plain_value, key), str(n), *cells]) + " |")
    return "\n".join(lines)


def plain_value(value) -> str:
    """A key value as written in a table: integral floats without the ``.0``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
