"""Any CSV file as a benchmark data set: the loader and the regression task on it.

The loader refuses what it cannot read without guessing: a missing, blank, NaN or
infinite cell (in a numeric column, a text column or the target), two columns of
one name, a column without a name, rows of another length. Each refusal is a
``ValueError`` naming the file, the column and the first offending lines. A UTF-8
byte-order mark is stripped, and rows whose every cell is blank are skipped.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .settings import file_digest
from .tasks import RegressionTask

__all__ = ["load_csv", "CSVTask", "MISSING"]

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "?", "-", "inf", "+inf", "-inf",
                     "infinity", "+infinity", "-infinity"})
"""Cell values (lowercase) that mean a missing or non-finite number in a numeric column."""


def _lines(lines: list[int], limit: int = 5) -> str:
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return ", ".join(map(str, lines[:limit])) + more


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _read(path: Path) -> tuple[list[str], list[int], list[list[str]]]:
    """Header, file line numbers and rows (cells stripped; all-blank rows skipped)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")  # a BOM is not part of the first name
    except UnicodeDecodeError as exc:
        raise ValueError(f"{str(path)!r} is not UTF-8 text (byte {exc.start}).") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader, [])]
        lines, rows = [], []
        for row in reader:
            if any(cell.strip() for cell in row):
                lines.append(reader.line_num)
                rows.append([cell.strip() for cell in row])
    except csv.Error as exc:
        raise ValueError(f"{str(path)!r} is not a CSV file ({exc}).") from None
    return header, lines, rows


def _check_header(path: Path, header: list[str], target: str) -> None:
    blank = [j + 1 for j, h in enumerate(header) if not h]
    if blank:
        raise ValueError(f"{str(path)!r}: the header gives column(s) {blank} no name.")
    twice = {h: [j + 1 for j, g in enumerate(header) if g == h] for h in header
             if header.count(h) > 1}
    if twice:
        where = "; ".join(f"{h!r} at columns {cols}" for h, cols in twice.items())
        raise ValueError(f"{str(path)!r}: duplicate column names ({where}); rename them.")
    if target not in header:
        raise ValueError(f"target must be a column of {str(path)!r}, one of {header}. "
                         f"Got {target!r}.")


def _column(path: Path, name: str, values: list[str], lines: list[int],
            what: str = "column") -> np.ndarray:
    """A column as floats, or as strings when it holds text; refusing missing values."""
    numbers = [_number(v) for v in values]
    bad_text = [i for i, (v, x) in enumerate(zip(values, numbers, strict=True))
                if x is None and v.lower() not in MISSING]
    if not bad_text:  # a numeric column, perhaps with missing or non-finite cells
        bad = [lines[i] for i, x in enumerate(numbers) if x is None or not math.isfinite(x)]
        if bad:
            kinds = sorted({values[i] or "blank" for i, x in enumerate(numbers)
                            if x is None or not math.isfinite(x)})
            raise ValueError(
                f"{str(path)!r}: numeric {what} {name!r} has missing or non-finite cells "
                f"({', '.join(kinds)}) on lines {_lines(bad)}; fill or drop those rows.")
        return np.array(numbers, dtype=np.float64)
    blank = [lines[i] for i, v in enumerate(values) if not v]
    if blank:
        raise ValueError(f"{str(path)!r}: {what} {name!r} has blank cells on lines "
                         f"{_lines(blank)}; fill or drop those rows.")
    return np.array(values, dtype=str)


def load_csv(path: str | Path, target: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features and target of a CSV file with a header row.

    Columns whose every value is a finite number are numeric features; a column of
    text is one-hot encoded (one column per distinct value, in sorted order). The
    target is returned as floats when every value is a number, else as strings.

    Parameters
    ----------
    path : str or path
        A UTF-8 CSV file (a byte-order mark is stripped) with a header row and at
        least two rows of data.
    target : str
        The name of the target column.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    feature_names : list of str

    Raises
    ------
    ValueError
        Naming the file, the column and the first offending lines: a blank, NaN or
        infinite cell (a number column with ``NA``, ``?`` or ``-`` too), a blank text
        cell, duplicate or empty column names, a row of another length, fewer than
        two rows, no feature column.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"data must be an existing CSV file. Got {str(path)!r}.")
    header, lines, body = _read(path)
    if len(body) < 2:
        raise ValueError(f"{str(path)!r} must hold a header row and at least two rows; "
                         f"it has {len(body)}.")
    _check_header(path, header, target)
    bad = [line for line, r in zip(lines, body, strict=True) if len(r) != len(header)]
    if bad:
        raise ValueError(f"{str(path)!r}: lines {_lines(bad)} do not have {len(header)} "
                         "fields.")
    blocks, names = [], []
    for j, name in enumerate(header):
        if name == target:
            continue
        column = _column(path, name, [r[j] for r in body], lines)
        if column.dtype.kind == "f":
            blocks.append(column[:, None])
            names.append(name)
        else:
            categories = sorted(set(column.tolist()))
            blocks.append((column[:, None] == np.array(categories)[None, :]).astype(np.float64))
            names += [f"{name}={c}" for c in categories]
    if not blocks:
        raise ValueError(f"{str(path)!r} has no feature column besides {target!r}.")
    y = _column(path, target, [r[header.index(target)] for r in body], lines, what="target")
    return np.hstack(blocks), y, names


def class_labels(y: np.ndarray) -> np.ndarray:
    """Class labels of a CSV target: integral numbers as ints, other numbers and text as
    strings."""
    if y.dtype.kind == "f":
        return y.astype(np.int64) if np.all(y == np.round(y)) else y.astype(str)
    return y


class CSVTask(RegressionTask):
    """Regression on any CSV file: ``n_splits``-fold cross-validation (default 5,
    shuffled, seed 0) of the column ``target`` on the other columns; the data set
    is named after the file, and the records' ``data`` setting is
    ``target@<SHA-256 prefix of the file>``."""

    def __init__(self, path: str | Path, target: str, methods: Sequence[str], *,
                 n_splits: int | None = None, **kwargs: Any):
        from sklearn.model_selection import KFold

        X, y, _ = load_csv(path, target)
        if y.dtype.kind not in "fi":
            raise ValueError(f"{str(path)!r}: target {target!r} holds text, so it cannot be a "
                             "regression target; for class labels use --target-kind "
                             "classification.")
        n = 5 if n_splits is None else n_splits
        if not (isinstance(n, int) and 2 <= n <= len(y)):
            raise ValueError(f"{str(path)!r} has {len(y)} rows: {n}-fold cross-validation "
                             f"needs n_splits (--n-splits) in [2, {len(y)}]. Got {n!r}.")
        name = Path(path).stem
        splits = list(KFold(n, shuffle=True, random_state=0).split(X))
        super().__init__([name], methods, n_splits=n, data={name: (X, y, splits)},
                         source=f"{target}@{file_digest(path)}", **kwargs)
