"""Benchmark tasks and the loop that runs their cells.

A *task* (regression, classification, bandit, a CSV file) is a picklable object
that lists its *cells* (one fit: a method on a data set for one split or seed)
and runs one cell into tidy records (one row per method x dataset x split x
metric set). :func:`run_task` skips the cells whose records a CSV file already
holds, runs the others (serially, on joblib workers or on Dask, see
:mod:`skfbnn.bench.parallel`), appends each cell's records as it finishes and
prints a progress line per cell.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .parallel import map_cells
from .report import append_records, detail_path, read_records

__all__ = ["Task", "RegressionTask", "CSVTask", "run_task", "load_csv", "select_params",
           "REGRESSION_KEYS"]

REGRESSION_KEYS = ("dataset", "method", "split")


def _norm(value: Any) -> Any:
    """A key value as it reads back from a CSV file (numbers as floats)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


class Task(ABC):
    """Base of the benchmark tasks.

    Subclasses set ``name`` and ``key_columns`` (the columns that identify a
    cell in its records) and implement :meth:`cells`, :meth:`run_cell` and
    :meth:`progress`; ``details`` names the side files their cells write
    (:data:`skfbnn.bench.report.DETAIL_KINDS`).
    """

    name = "task"
    key_columns: tuple[str, ...] = REGRESSION_KEYS
    details: tuple[str, ...] = ()

    @abstractmethod
    def cells(self) -> list[dict]:
        """The cells of the grid, each a dict holding at least the key columns."""

    @abstractmethod
    def run_cell(self, cell: dict) -> dict[str, list[dict]]:
        """``{"records": [...], <detail kind>: [...]}`` of one cell."""

    def progress(self, cell: dict, records: list[dict]) -> str:
        """One progress line for a finished cell."""
        return " ".join(str(cell[c]) for c in self.key_columns)

    def own(self, record: dict) -> bool:
        """Whether a record read from a file belongs to this task."""
        return record.get("task", "regression") == self.name

    def key(self, record: dict) -> tuple:
        return tuple(_norm(record[c]) for c in self.key_columns)


def run_task(
    task: Task,
    out: Path | None = None,
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    threads: int = 1,
    log: TextIO | None = None,
    counter: bool = True,
) -> list[dict]:
    """Run the cells of ``task`` that ``out`` does not hold yet; return the records.

    Parameters
    ----------
    task : Task
    out : path or None
        CSV file of records: cells whose key is already in it are skipped, each
        finished cell's records are appended (side files next to it first).
        None keeps the records in memory only.
    n_jobs, scheduler, threads
        As in :func:`skfbnn.bench.parallel.map_cells`.
    log : text stream, default=sys.stderr
        Where the progress lines go.
    counter : bool, default=True
        Prefix each progress line with ``[i/n]`` (cells run of cells to run).

    Returns
    -------
    records : list of dict
        Every record of this task in ``out`` after the run (those of earlier
        runs included), or the new ones when ``out`` is None.
    """
    log = sys.stderr if log is None else log
    out = None if out is None else Path(out)
    done = set()
    if out is not None and out.exists():
        done = {task.key(r) for r in read_records([out]) if task.own(r)}
    cells = task.cells()
    todo = [c for c in cells if task.key(c) not in done]
    if counter and len(todo) < len(cells):
        print(f"{task.name}: {len(cells) - len(todo)} of {len(cells)} cells already in "
              f"{out}, skipped", file=log, flush=True)
    fresh = []
    results = map_cells(task.run_cell, todo, n_jobs=n_jobs, scheduler=scheduler,
                        threads=threads)
    for i, (cell, result) in enumerate(zip(todo, results, strict=True)):
        records = result["records"]
        if out is not None:
            for kind in task.details:
                append_records(detail_path(out, kind), result.get(kind, []))
            append_records(out, records)
        fresh += records
        line = task.progress(cell, records)
        print(f"[{i + 1}/{len(todo)}] {line}" if counter else line, file=log, flush=True)
    if out is None:
        return fresh
    return [r for r in read_records([out]) if task.own(r)] if out.exists() else []


# ----------------------------------------------------------------- parameters
def select_params(method: str, params: dict, valid: set[str]) -> dict:
    """The ``--set`` overrides that apply to ``method``.

    A key ``name`` applies to every method that has a parameter ``name``
    (``valid``); ``method.name`` only to that method, and wins over ``name``.

    Examples
    --------
    >>> select_params("sgld", {"n_iter": 5, "sgld.step_size": 0.1, "bbb.n_iter": 3},
    ...               {"step_size", "n_burnin"})
    {'step_size': 0.1}
    """
    general = {k: v for k, v in params.items() if "." not in k and k in valid}
    own = {k.rpartition(".")[2]: v for k, v in params.items()
           if k.rpartition(".")[0] == method and k.rpartition(".")[2] in valid}
    return {**general, **own}  # a method's own value wins


def check_params_used(params: dict, methods: Sequence[str], valid: dict[str, set[str]]) -> None:
    """Raise ValueError for an override that applies to none of ``methods``."""
    for key in params:
        target, dot, name = key.rpartition(".")
        targets = [target] if dot else list(methods)
        if dot and target not in methods:
            raise ValueError(f"--set {key}: method {target!r} is not among the methods "
                             f"{list(methods)}.")
        if not any(name in valid[m] for m in targets):
            raise ValueError(f"--set {key}: no parameter {name!r} in "
                             f"{' or '.join(targets)}.")


def bayes_params(method: str, task: str) -> set[str]:
    """Parameter names of the estimator of a registered method: the generic estimator's
    own and the method's (``method_params``)."""
    from ..estimators import BayesianNetClassifier, BayesianNetRegressor
    from ..estimators._params import method_params

    generic = BayesianNetRegressor if task == "regression" else BayesianNetClassifier
    own = set(generic().get_params()) - {"method", "method_params"}
    return own | {p.name for p in method_params(method, task)}


# ----------------------------------------------------------------- regression
def _load_regression(dataset: str, data_home: str | None, n_splits: int | None):
    from sklearn.model_selection import KFold

    if dataset == "diabetes":
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
        cv = KFold(n_splits or 5, shuffle=True, random_state=0)
        return X, y, list(cv.split(X))
    from ..datasets import UCISplits, load_uci
    from ..datasets._fetch import data_home_or_fetch

    data_home = data_home_or_fetch(data_home, dataset)  # no folder given: download once
    X, y = load_uci(dataset, data_home=data_home, return_X_y=True)
    return X, y, list(UCISplits(dataset, data_home=data_home, n_splits=n_splits).split(X))


class RegressionTask(Task):
    """Cross-validated regression: diabetes (5-fold) or a UCI set with its standard splits.

    Split ``k`` is fitted with ``random_state = seed + k``; records hold RMSE,
    test log-likelihood (mixture and moment-matched), CRPS, 95% coverage, fit
    time and the samplers' convergence diagnostics
    (:func:`skfbnn.bench.runner.evaluate_split`).
    """

    name = "regression"
    key_columns = REGRESSION_KEYS

    def __init__(self, datasets: Sequence[str], methods: Sequence[str], *,
                 data_home: str | None = None, n_splits: int | None = None, seed: int = 0,
                 device: str = "auto", params: dict | None = None, data: dict | None = None):
        self.datasets = list(datasets)
        self.methods = list(methods)
        self.data_home = data_home
        self.n_splits = n_splits
        self.seed = seed
        self.device = device
        self.params = dict(params or {})
        self._data = dict(data or {})  # name -> (X, y, splits), e.g. from a CSV file
        valid = {m: bayes_params(m, "regression") for m in self.methods}
        check_params_used(self.params, self.methods, valid)
        self._valid = valid

    def data(self, dataset: str):
        if dataset not in self._data:
            self._data[dataset] = _load_regression(dataset, self.data_home, self.n_splits)
        return self._data[dataset]

    def cells(self) -> list[dict]:
        return [{"dataset": d, "method": m, "split": k}
                for m in self.methods for d in self.datasets
                for k in range(len(self.data(d)[2]))]

    def run_cell(self, cell: dict) -> dict[str, list[dict]]:
        from .configs import make_regression_pipeline
        from .runner import evaluate_split

        X, y, splits = self.data(cell["dataset"])
        train, test = splits[cell["split"]]
        params = select_params(cell["method"], self.params, self._valid[cell["method"]])
        pipe = make_regression_pipeline(cell["method"], random_state=self.seed + cell["split"],
                                        device=self.device, **params)
        record = {"dataset": cell["dataset"], "method": cell["method"], "split": cell["split"],
                  **evaluate_split(pipe, X[train], y[train], X[test], y[test])}
        return {"records": [record]}

    def progress(self, cell: dict, records: list[dict]) -> str:
        r = records[0]
        return (f"{r['dataset']} {r['method']} split {r['split']}: rmse {r['rmse']:.3f} "
                f"test_ll {r['test_ll']:.3f} fit {r['fit_time']:.1f}s")


# ----------------------------------------------------------------- CSV files
def load_csv(path: str | Path, target: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features and target of a CSV file with a header row.

    Columns whose every value parses as a number are numeric features; the
    others are one-hot encoded (one column per distinct value). The target
    column is returned as floats when every value is a number, else as strings.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    feature_names : list of str
    """
    import csv

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"data must be an existing CSV file. Got {str(path)!r}.")
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    if len(rows) < 3:
        raise ValueError(f"{str(path)!r} must hold a header row and at least two rows.")
    header, body = [h.strip() for h in rows[0]], [r for r in rows[1:] if any(r)]
    if target not in header:
        raise ValueError(f"target must be a column of {str(path)!r}, one of {header}. "
                         f"Got {target!r}.")
    bad = [i + 2 for i, r in enumerate(body) if len(r) != len(header)]
    if bad:
        raise ValueError(f"{str(path)!r}: rows {bad[:5]} do not have {len(header)} fields.")
    columns = {name: [r[j].strip() for r in body] for j, name in enumerate(header)}
    blocks, names = [], []
    for name, values in columns.items():
        if name == target:
            continue
        numbers = _floats(values)
        if numbers is not None:
            blocks.append(numbers[:, None])
            names.append(name)
        else:
            categories = sorted(set(values))
            blocks.append((np.array(values)[:, None] == np.array(categories)[None, :])
                          .astype(np.float64))
            names += [f"{name}={c}" for c in categories]
    if not blocks:
        raise ValueError(f"{str(path)!r} has no feature column besides {target!r}.")
    y = _floats(columns[target])
    return np.hstack(blocks), (np.array(columns[target]) if y is None else y), names


def _floats(values: list[str]) -> np.ndarray | None:
    try:
        out = np.array([float(v) for v in values])
    except ValueError:
        return None
    return out if np.all(np.isfinite(out)) else None


class CSVTask(RegressionTask):
    """Regression on any CSV file: ``n_splits``-fold cross-validation (default 5,
    shuffled, seed 0) of the column ``target`` on the other columns; the data set
    is named after the file."""

    def __init__(self, path: str | Path, target: str, methods: Sequence[str], *,
                 n_splits: int | None = None, **kwargs: Any):
        from sklearn.model_selection import KFold

        X, y, _ = load_csv(path, target)
        if y.dtype.kind not in "fi":
            raise ValueError(f"target {target!r} must be numeric for regression; use "
                             "--task classification --data FILE for class labels.")
        name = Path(path).stem
        splits = list(KFold(n_splits or 5, shuffle=True, random_state=0).split(X))
        super().__init__([name], methods, n_splits=n_splits,
                         data={name: (X, y, splits)}, **kwargs)
