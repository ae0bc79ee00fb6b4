"""The ``skfbnn`` command: ``methods``, ``bench`` and ``report``.

``skfbnn bench`` cross-validates methods on scikit-learn's bundled diabetes data
(default) or on a UCI data set with its standard splits, and prints a table of
RMSE, test log-likelihood, CRPS, 95% coverage and fit time (mean +- standard
error over folds, original units). ``--task classification`` runs the
out-of-distribution and shift protocols on MNIST-1D and digits, ``--task
bandit`` the Mushroom contextual bandit, ``--task csv`` any CSV file; every task
writes tidy records (``--out``), resumes, and runs its cells in parallel with
``--n-jobs`` or on Dask with ``--scheduler`` (docs/experiments.md).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import math
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

__all__ = ["main", "parse_set", "build_parser", "UsageError"]


class UsageError(Exception):
    """A bad option or input: printed as one line, exit status 2."""


def parse_set(items: Sequence[str]) -> dict:
    """``key=value`` pairs of ``--set``, the values read as Python literals where they are one."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set expects key=value, got {item!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            params[key] = value
    return params


def _split_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _unknown(option: str, name: str, valid: Sequence[str]) -> UsageError:
    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    return UsageError(f"{option}: unknown name {name!r}{hint} Valid: {', '.join(valid)}.")


TASK_BASELINES = {"classification": ("mlp", "mlp_ensemble"),
                  "bandit": ("uniform", "greedy", "oracle")}


def _methods(value: str | None, task: str) -> list[str]:
    from .inference.registry import METHODS

    if value is None:
        return list(TASK_METHODS[task])
    extra = TASK_BASELINES.get(task, ())
    valid = [*METHODS, *extra]
    methods = []
    for name in _split_list(value):
        if name == "all":
            methods += valid
        elif name in valid:
            methods.append(name)
        else:
            raise _unknown("--methods", name, [*valid, "all"])
    if not methods:
        raise UsageError(f"--methods names no method (got {value!r}); see `skfbnn methods`.")
    return list(dict.fromkeys(methods))


def _datasets(value: str | None, task: str, data_home: str | None) -> list[str]:
    from .datasets import UCI_DATASETS
    from .datasets.uci import UCI_ALIASES

    names = []
    for name in _split_list(value) or _split_list(TASK_DATASETS[task]):
        names += list(UCI_DATASETS) if name == "uci" and task == "regression" else [name]
    if not names:
        raise UsageError(f"--dataset names no data set (got {value!r}).")
    valid = {"regression": ["diabetes", "uci", *UCI_DATASETS, *UCI_ALIASES],
             "classification": ["mnist1d", "digits"], "bandit": ["mushroom"]}[task]
    for name in names:
        if name not in valid and not (task == "regression" and _uci_folder(name, data_home)):
            raise _unknown("--dataset", name, valid)
    return list(dict.fromkeys(names))


def _uci_folder(name: str, data_home: str | None) -> bool:
    """Whether the data folder holds a data set of this name in the UCI format."""
    from .datasets import resolve_data_home

    try:
        home = resolve_data_home(data_home)
    except ValueError:
        return False
    return Path(name).name == name and any(
        (folder / "data.txt").is_file() for folder in (home / name, home / "uci" / name))


def _floats(value: str, name: str) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in _split_list(value))
    except ValueError:
        raise UsageError(f"{name} expects comma-separated numbers, got {value!r}") from None
    if not all(math.isfinite(v) for v in out):
        raise UsageError(f"{name} expects finite numbers, got {value!r}")
    return out


def _ints(value: str, name: str) -> list[int]:
    try:
        return [int(v) for v in _split_list(value)]
    except ValueError:
        raise UsageError(f"{name} expects comma-separated integers, got {value!r}") from None


def check_bench_args(args: argparse.Namespace) -> None:
    """Refuse a bad ``bench`` option before anything is loaded or fitted."""
    task = args.task
    n = args.n_splits
    what = "--n-seeds" if task == "bandit" else "--n-splits"
    if n is not None and n < 1:
        raise UsageError(f"{what} must be a positive int. Got {n}.")
    kfold = task == "csv" or (task == "regression" and "diabetes" in (
        _split_list(args.dataset) or ["diabetes"]))
    if n == 1 and kfold:
        raise UsageError("--n-splits must be at least 2 for k-fold cross-validation "
                         "(diabetes and CSV files). Got 1.")
    if not (args.n_jobs >= 1 or args.n_jobs == -1):
        raise UsageError(f"--n-jobs must be a positive int or -1. Got {args.n_jobs}.")
    if args.threads < 1:
        raise UsageError(f"--threads must be a positive int. Got {args.threads}.")
    for option in ("horizon", "buffer_size", "update_every", "curve_every"):
        if getattr(args, option) < 1:
            raise UsageError(f"--{option.replace('_', '-')} must be a positive int. Got "
                             f"{getattr(args, option)}.")
    if not 0 <= args.p <= 1:
        raise UsageError(f"--p must lie in [0, 1]. Got {args.p}.")
    if task != "csv":
        for option in ("data", "target"):
            if getattr(args, option) is not None:
                raise UsageError(
                    f"--{option} is read by --task csv only (--task {task} would ignore it); "
                    "use --task csv --data FILE --target COLUMN [--target-kind "
                    "classification].")
    elif args.dataset is not None:
        raise UsageError("--task csv reads --data FILE; --dataset would be ignored.")
    _check_device(args.device)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)


def _check_device(device: str) -> None:
    from .device import resolve_device

    try:
        resolve_device(device)
    except (ValueError, RuntimeError) as exc:
        raise UsageError(f"--device: {exc}") from None


def check_scheduler(address: str, timeout: float = 3.0) -> None:
    """Refuse a ``--scheduler`` that is neither ``local`` nor a reachable address, within
    ``timeout`` seconds (instead of Dask's own 30)."""
    import importlib.util
    import socket
    from urllib.parse import urlsplit

    needs = UsageError("--scheduler needs dask.distributed: pip install 'skfbnn[dask]'.")
    if address == "local":
        if importlib.util.find_spec("distributed") is None:
            raise needs
        return
    url = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = url.port
    except ValueError:
        port = None
    if url.scheme not in ("tcp", "tls") or not url.hostname or port is None:
        raise UsageError(f"--scheduler must be 'local' or a scheduler address such as "
                         f"tcp://host:8786. Got {address!r}.")
    try:
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(f"--scheduler {address}: cannot reach the scheduler "
                         f"({exc.strerror or exc}).") from None
    if importlib.util.find_spec("distributed") is None:
        raise needs


def make_task(args: argparse.Namespace):
    """The benchmark task that the ``bench`` arguments describe."""
    from .bench.tasks import CSVTask, RegressionTask, load_csv

    params = parse_set(args.set)
    task = args.task
    common = dict(seed=args.seed, device=args.device, params=params)
    if task == "csv":
        if not args.data or not args.target:
            raise UsageError("--task csv needs --data FILE and --target COLUMN")
        kind = args.target_kind
        methods = _methods(args.methods, "regression" if kind != "classification"
                           else "classification")
        X, y, _ = load_csv(args.data, args.target)
        if kind == "auto":
            kind = "regression" if y.dtype.kind in "fi" else "classification"
        if kind == "regression":
            return CSVTask(args.data, args.target, methods, n_splits=args.n_splits, **common)
        return _csv_classification(args, X, y, common)
    if task == "regression":
        return RegressionTask(_datasets(args.dataset, task, args.data_home),
                              _methods(args.methods, task), data_home=args.data_home,
                              n_splits=args.n_splits, **common)
    if task == "classification":
        from .bench.classification import SHIFTS, ClassificationTask, check_id_classes

        shifts = {} if args.no_shift else {
            "noise": _floats(args.noise_levels, "--noise-levels"),
            "shuffle": _floats(args.shuffle_levels, "--shuffle-levels"),
            "flip": SHIFTS["flip"]}
        shifts = {k: v for k, v in shifts.items() if v}
        id_classes = _ints(args.id_classes, "--id-classes")
        try:
            check_id_classes(id_classes)
        except ValueError as exc:
            raise UsageError(f"--id-classes: {exc}") from None
        return ClassificationTask(
            _datasets(args.dataset, task, args.data_home), _methods(args.methods, task),
            data_home=args.data_home, n_splits=args.n_splits, shifts=shifts,
            id_classes=id_classes, **common)
    from .bench.bandit import BanditTask

    _datasets(args.dataset, task, args.data_home)
    device = "cpu" if args.device == "auto" else args.device
    return BanditTask(_methods(args.methods, task), data_home=args.data_home,
                      n_seeds=args.n_splits, seed=args.seed, horizon=args.horizon, p=args.p,
                      buffer_size=args.buffer_size, update_every=args.update_every,
                      curve_every=args.curve_every, warm_start=args.warm_start,
                      device=device, params=params)


def _csv_classification(args, X, y, common):
    from sklearn.model_selection import StratifiedKFold

    from .bench.classification import ClassificationTask
    from .bench.csvdata import class_labels
    from .bench.settings import file_digest

    y = class_labels(y)
    n = args.n_splits or 5
    smallest = min(np.unique(y, return_counts=True)[1])
    if smallest < n:
        raise UsageError(f"--n-splits {n}: the rarest class of {args.target!r} has "
                         f"{smallest} row(s); stratified {n}-fold cross-validation needs "
                         f"{n} of each class (use fewer splits).")
    splits = list(StratifiedKFold(n, shuffle=True, random_state=0).split(X, y))
    name = Path(args.data).stem
    return ClassificationTask([name], _methods(args.methods, "classification"),
                              data={name: (X, y, splits)},
                              source=f"{args.target}@{file_digest(args.data)}", **common)


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench.records import RecordFileError
    from .bench.report import task_summary, write_report
    from .bench.tasks import grid_records, run_task

    check_bench_args(args)
    try:
        task = make_task(args)
        cells = task.cells()  # loads the data: a missing or bad data set stops here
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not cells:
        raise UsageError("the grid has no cell to run.")
    out = Path(args.out) if args.out else None
    if out is not None and out.is_dir():
        raise UsageError(f"--out {out} is a folder; give a CSV file name.")
    try:
        records = run_task(task, out, n_jobs=args.n_jobs, scheduler=args.scheduler,
                           threads=args.threads, counter=task.name != "regression")
    except RecordFileError as exc:
        raise UsageError(str(exc)) from None
    order = getattr(task, "methods", ())
    print(task_summary(task.name, records, order))
    report = args.report if args.report is not None else task.name != "regression"
    if report and out is not None:
        from .bench.records import detail_path

        details = {kind: grid_records(task, p, cells) for kind in task.details
                   if (p := detail_path(out, kind)).exists()}
        for path in write_report(out.with_suffix(""), task.name, records, details, order):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import importlib.util

    from .bench.report import (
        COLUMNS,
        check_one_setting,
        plot_records,
        read_records,
        split_record_files,
        summarize_records,
        task_of,
        task_summary,
        write_report,
    )
    from .bench.settings import REQUIRED, select_where

    files, details = split_record_files([Path(p) for p in args.files])
    if not files:
        raise UsageError("no record file among the arguments")
    records = read_records(files)
    if not records:
        raise UsageError(f"{', '.join(map(str, files))}: no records (an empty file?).")
    task = task_of(records)
    missing = [c for c in REQUIRED.get(task, ()) if not all(c in r for r in records)]
    if task not in REQUIRED or missing:
        raise UsageError(f"{', '.join(map(str, files))}: not records of skfbnn bench "
                         f"(task {task!r}; missing the columns {missing}).")
    if args.where:
        records = select_where(records, args.where)
        if not records:
            raise UsageError(f"no record has {' and '.join(args.where)}.")
    if args.plot or args.figures:
        check_one_setting(task, records)
    if args.plot:
        if task != "regression":
            raise UsageError("--plot draws the regression error bars; use --figures STEM")
        if args.column not in COLUMNS:
            raise UsageError(f"--column must be one of {', '.join(COLUMNS)}. Got "
                             f"{args.column!r}.")
        if importlib.util.find_spec("matplotlib") is None:
            raise UsageError("--plot needs matplotlib: pip install 'skfbnn[plot]'.")
    table = task_summary(task, records)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    if args.plot:
        plot_records(summarize_records(records), Path(args.plot), column=args.column)
    if args.figures:
        loaded = {kind: select_where(read_records(paths), args.where)
                  for kind, paths in details.items() if paths}
        for path in write_report(Path(args.figures), task, records, loaded,
                                 column=args.column):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from .inference.registry import METHODS

    for name, spec in METHODS.items():
        print(f"{name:8s} family={spec.family:12s} prior={spec.prior:8s} "
              f"posterior={spec.posterior:10s} update={spec.module.__name__}")
    return 0


DEFAULT_METHODS = ("sgld", "fsgld", "sghmc", "fsghmc", "bbb", "ensemble")
"""What ``skfbnn bench`` compares by default: one of each family and prior."""

TASK_METHODS = {
    "regression": DEFAULT_METHODS,
    "csv": DEFAULT_METHODS,
    "classification": ("sgld", "fsgld", "sghmc", "fsghmc", "bbb", "fbnn", "ifbnn", "ensemble",
                       "ifbde", "mlp", "mlp_ensemble"),
    "bandit": ("uniform", "greedy", "oracle", "sgld", "fsgld", "bbb", "fbnn", "ifbnn",
               "ensemble", "ifbde"),
}
"""Default ``--methods`` of each task: the functional methods beside their weight-space
twins, and the plain baselines."""
TASK_DATASETS = {"regression": "diabetes", "classification": "mnist1d,digits",
                 "bandit": "mushroom", "csv": ""}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``skfbnn`` command."""
    parser = _Parser(prog="skfbnn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("methods", help="list the registered inference methods").set_defaults(
        func=cmd_methods
    )
    bench = sub.add_parser("bench", help="run an experiment grid and print a table")
    bench.add_argument("--task", default="regression",
                       choices=("regression", "classification", "bandit", "csv"),
                       help="regression (default): cross-validated regressors; "
                            "classification: in-distribution, OOD and shift metrics on "
                            "MNIST-1D and digits; bandit: the Mushroom contextual bandit; "
                            "csv: any CSV file (--data, --target)")
    bench.add_argument("--dataset", default=None,
                       help="comma-separated; regression: 'diabetes' (bundled with "
                            "scikit-learn, 5-fold CV, the default), a UCI name or 'uci' for all "
                            "seven; classification: mnist1d,digits (default); bandit: mushroom")
    bench.add_argument("--methods", default=None,
                       help="comma-separated registry keys (see `skfbnn methods`), 'all', and "
                            "the baselines mlp, mlp_ensemble (classification) or uniform, "
                            "greedy, oracle (bandit)")
    bench.add_argument("--n-splits", "--n-seeds", dest="n_splits", type=int, default=None,
                       help="number of folds/splits (default: 5 for diabetes and CSV files, "
                            "all for UCI), repetitions (classification, default 5) or seeds "
                            "(bandit, default 3)")
    bench.add_argument("--data-home", default=None,
                       help="folder holding the data sets (or set SKFBNN_DATA_HOME)")
    bench.add_argument("--out", default=None, help="CSV file; existing records are skipped")
    bench.add_argument("--device", default="auto")
    bench.add_argument("--seed", type=int, default=0,
                       help="split k is fitted with random_state=SEED + k (default 0); another "
                            "seed repeats a grid with independent randomness, the yardstick "
                            "for a paired difference between two methods")
    bench.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                       help="override method hyperparameters, e.g. --set step_size=0.01; "
                            "METHOD.KEY=VALUE for one method only")
    scale = bench.add_argument_group("scale-out")
    scale.add_argument("--n-jobs", type=int, default=1,
                       help="cells run in parallel on joblib workers (with --scheduler local: "
                            "the number of Dask workers)")
    scale.add_argument("--scheduler", default=None,
                       help="'local' (a dask.distributed LocalCluster) or the address of a "
                            "Dask scheduler, e.g. tcp://host:8786")
    scale.add_argument("--threads", type=int, default=1,
                       help="torch and BLAS threads per cell (default 1)")
    bench.add_argument("--report", action=argparse.BooleanOptionalAction, default=None,
                       help="write OUT.md and the figures next to --out (default: on for "
                            "classification, bandit and csv, off for regression)")
    csvg = bench.add_argument_group("csv task")
    csvg.add_argument("--data", default=None, help="CSV file with a header row")
    csvg.add_argument("--target", default=None, help="name of the target column")
    csvg.add_argument("--target-kind", default="auto",
                      choices=("auto", "regression", "classification"),
                      help="auto: regression when every target value is a number")
    clf = bench.add_argument_group("classification task")
    clf.add_argument("--no-shift", action="store_true", help="skip the shift protocol")
    clf.add_argument("--noise-levels", default="0.25,0.5,1,2",
                     help="Gaussian-noise strengths (x each feature's training std)")
    clf.add_argument("--shuffle-levels", default="0.25,0.5,1",
                     help="fractions of each row's positions shuffled")
    clf.add_argument("--id-classes", default="0,1,2,3,4",
                     help="classes trained on; the others are out of distribution")
    ban = bench.add_argument_group("bandit task")
    ban.add_argument("--horizon", type=int, default=50000, help="steps (default 50000)")
    ban.add_argument("--p", type=float, default=0.5,
                     help="probability that a poisonous mushroom eaten costs -35 (default 0.5)")
    ban.add_argument("--buffer-size", type=int, default=4096)
    ban.add_argument("--update-every", type=int, default=64)
    ban.add_argument("--curve-every", type=int, default=64)
    ban.add_argument("--warm-start", default="auto", choices=("auto", "on", "off"),
                     help="updates continue from the previous fit (auto: where the "
                          "estimators support it)")
    bench.set_defaults(func=cmd_bench)
    report = sub.add_parser("report", help="summarise benchmark CSV files")
    report.add_argument("files", nargs="+",
                        help="record files (side files *.bins.csv / *.curves.csv next to them "
                             "are found)")
    report.add_argument("--markdown", default=None)
    report.add_argument("--plot", default=None, help="regression: error-bar PNG of --column")
    report.add_argument("--figures", default=None, metavar="STEM",
                        help="write STEM.md and the task's figures STEM_*.png")
    report.add_argument("--column", default="test_ll")
    report.add_argument("--where", nargs="*", default=[], metavar="KEY=VALUE",
                        help="only the records with these values, e.g. --where seed=7 "
                             "(records of different settings are tabled apart)")
    report.set_defaults(func=cmd_report)
    return parser


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and exit status 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


@contextlib.contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Warnings of the record files printed as one line each."""
    previous = warnings.formatwarning
    warnings.formatwarning = lambda message, category, *_, **__: (
        f"{category.__name__}: {message}\n")
    try:
        yield
    finally:
        warnings.formatwarning = previous


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skfbnn`` command: 0 on success, 2 (with one line on stderr)
    for a bad option or input."""
    args = build_parser().parse_args(argv)
    try:
        with _one_line_warnings():
            return args.func(args)
    except (UsageError, ValueError) as exc:
        if not isinstance(exc, UsageError) and args.command != "report":
            raise  # a bench ValueError past the checks is a failure of a fit: keep its trace
        message = " ".join(str(exc).split())
        print(f"skfbnn {args.command}: error: {message}", file=sys.stderr)
        return 2
