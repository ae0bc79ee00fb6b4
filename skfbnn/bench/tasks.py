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
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .._validation import validate_parameter_constraints
from .parallel import map_cells
from .records import (
    RecordFileError,
    append_records,
    detail_path,
    drop_records,
    read_records,
    repair_record_file,
)
from .settings import SETTINGS, format_params

__all__ = ["Task", "RegressionTask", "run_task", "resume", "grid_records", "select_params",
           "check_params_used", "check_param_values", "REGRESSION_KEYS"]

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

    def n_records(self, cell: dict) -> int:
        """How many records a finished cell has written (fewer: the run was killed)."""
        return 1

    def own(self, record: dict) -> bool:
        """Whether a record read from a file belongs to this task."""
        return record.get("task", "regression") == self.name

    def key(self, record: dict) -> tuple:
        """The cell of a record (or of a cell dict): its key columns, numbers as floats."""
        return tuple(_norm(record.get(c, "")) for c in self.key_columns)


def _check_columns(task: Task, out: Path) -> None:
    """Refuse a record file whose header lacks the key columns of ``task``."""
    import csv

    with out.open(newline="", encoding="utf-8-sig") as fh:
        header = next(csv.reader(fh), [])
    if not header:
        return
    missing = [c for c in task.key_columns if c not in header]
    if "task" in missing and task.name != "regression":
        raise RecordFileError(f"{str(out)!r} holds records of another task; write each "
                              "task's records to a file of their own (--out).")
    if missing:
        raise RecordFileError(
            f"{str(out)!r} holds records without the columns {missing}, which say which "
            "settings made them (written by an earlier version, or by another task); pass "
            "another --out (skfbnn report still reads this file).")


def resume(task: Task, out: Path, cells: list[dict], log: TextIO) -> set:
    """Make ``out`` and its side files consistent and return the keys of the finished cells.

    A partial last line is cut off (:func:`skfbnn.bench.records.repair_record_file`);
    the records of a cell of this grid that has fewer records than it makes
    (:meth:`Task.n_records`; a run killed between two of its lines) are removed, and
    so are the side rows of every cell of this grid that is not finished, so that
    running the cell again never counts anything twice.
    """
    for path in (out, *(detail_path(out, kind) for kind in task.details)):
        repair_record_file(path)
    if not out.exists():
        done: set = set()
    else:
        _check_columns(task, out)
        expected = {task.key(c): task.n_records(c) for c in cells}
        counts = Counter(task.key(r) for r in read_records([out]) if task.own(r))
        partial = {k for k, n in counts.items() if k in expected and n < expected[k]}
        if partial:
            drop_records(out, lambda r: task.own(r) and task.key(r) in partial)
            print(f"{task.name}: removed the records of {len(partial)} unfinished cell(s) "
                  f"from {out}; they run again", file=log, flush=True)
        done = {k for k, n in counts.items() if k in expected and n >= expected[k]}
    unfinished = {task.key(c) for c in cells} - done
    for kind in task.details:
        side = detail_path(out, kind)
        if side.exists():
            n = drop_records(side, lambda r: task.own(r) and task.key(r) in unfinished)
            if n:
                print(f"{task.name}: removed {n} rows of unfinished cells from {side}",
                      file=log, flush=True)
    return done


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
    """Run the cells of ``task`` that ``out`` does not hold yet; return the grid's records.

    Parameters
    ----------
    task : Task
    out : path or None
        CSV file of records: cells whose key (cell and settings columns) is already
        in it are skipped, each finished cell's side rows and then its records are
        appended. A file left by a killed run is repaired first (:func:`resume`).
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
        The records of this grid's cells in ``out`` after the run (those of earlier
        runs of the same cells included; records of other cells or settings in the
        file are not), or the new ones when ``out`` is None.
    """
    log = sys.stderr if log is None else log
    out = None if out is None else Path(out)
    cells = task.cells()
    done = set() if out is None else resume(task, out, cells, log)
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
            for kind in task.details:  # side rows first: main records mean a finished cell
                append_records(detail_path(out, kind), result.get(kind, []))
            append_records(out, records)
        fresh += records
        line = task.progress(cell, records)
        print(f"[{i + 1}/{len(todo)}] {line}" if counter else line, file=log, flush=True)
    if out is None:
        return fresh
    return grid_records(task, out, cells)


def grid_records(task: Task, path: Path, cells: list[dict] | None = None) -> list[dict]:
    """The records of ``path`` (a record or side file) that belong to the cells of ``task``."""
    keys = {task.key(c) for c in (task.cells() if cells is None else cells)}
    if not Path(path).exists():
        return []
    return [r for r in read_records([path]) if task.own(r) and task.key(r) in keys]


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


def check_param_values(params: dict, methods: Sequence[str], task: str) -> None:
    """Raise ValueError for an override whose value breaks the parameter's constraints in
    the estimator of a registry method (before anything is fitted)."""
    from ..estimators import BayesianNetClassifier, BayesianNetRegressor
    from ..estimators._params import method_params

    generic = BayesianNetRegressor if task == "regression" else BayesianNetClassifier
    for method in methods:
        constraints = dict(generic._parameter_constraints)
        constraints.update({p.name: p.constraints for p in method_params(method, task)})
        given = select_params(method, params, set(constraints))
        try:
            validate_parameter_constraints(
                {k: constraints[k] for k in given}, given, caller_name=f"--set ({method})")
        except (ValueError, TypeError) as exc:
            raise ValueError(str(exc)) from None


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
    (:func:`skfbnn.bench.runner.evaluate_split`), and the settings of their cell
    (:data:`skfbnn.bench.settings.SETTINGS`).
    """

    name = "regression"
    key_columns = (*REGRESSION_KEYS, *SETTINGS["regression"])

    def __init__(self, datasets: Sequence[str], methods: Sequence[str], *,
                 data_home: str | None = None, n_splits: int | None = None, seed: int = 0,
                 device: str = "auto", params: dict | None = None, data: dict | None = None,
                 source: str = "builtin"):
        self.datasets = list(datasets)
        self.methods = list(methods)
        self.data_home = data_home
        self.n_splits = n_splits
        self.seed = seed
        self.device = device
        self.params = dict(params or {})
        self._data = dict(data or {})  # name -> (X, y, splits), e.g. from a CSV file
        self._source = source if self._data else "builtin"
        self._given = set(self._data)  # k-fold splits made by the caller
        if n_splits is not None and not (isinstance(n_splits, int) and n_splits >= 1):
            raise ValueError(f"n_splits must be a positive int. Got {n_splits!r}.")
        if n_splits == 1 and "diabetes" in self.datasets:
            raise ValueError("n_splits must be at least 2 for k-fold cross-validation "
                             "(diabetes). Got 1.")
        valid = {m: bayes_params(m, "regression") for m in self.methods}
        check_params_used(self.params, self.methods, valid)
        check_param_values(self.params, self.methods, "regression")
        self._valid = valid

    def data(self, dataset: str):
        if dataset not in self._data:
            self._data[dataset] = _load_regression(dataset, self.data_home, self.n_splits)
        return self._data[dataset]

    def settings(self, dataset: str, method: str) -> dict:
        """The setting columns of the cells of ``method`` on ``dataset``."""
        kfold = dataset == "diabetes" or dataset in self._given
        params = select_params(method, self.params, self._valid[method])
        return {"seed": self.seed,
                "folds": f"{len(self.data(dataset)[2])}-fold" if kfold else "standard",
                "data": self._source, "params": format_params(params)}

    def cells(self) -> list[dict]:
        return [{"dataset": d, "method": m, "split": k, **self.settings(d, m)}
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
        record = {**cell, **evaluate_split(pipe, X[train], y[train], X[test], y[test])}
        return {"records": [record]}

    def progress(self, cell: dict, records: list[dict]) -> str:
        r = records[0]
        return (f"{r['dataset']} {r['method']} split {r['split']}: rmse {r['rmse']:.3f} "
                f"test_ll {r['test_ll']:.3f} fit {r['fit_time']:.1f}s")


def __getattr__(name: str):
    """``CSVTask`` and ``load_csv`` live in :mod:`skfbnn.bench.csvdata` (CSVTask is a
    RegressionTask); importable from here as before."""
    if name in ("CSVTask", "load_csv"):
        from . import csvdata

        return getattr(csvdata, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
