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
import contextlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from .bench.options import (
    TASK_METHODS,
    UsageError,
    check_bench_args,
    datasets_of,
    floats_of,
    ints_of,
    methods_of,
    parse_set,
)

__all__ = ["main", "parse_set", "build_parser", "UsageError", "TASK_METHODS"]


def make_task(args: argparse.Namespace):
    """The benchmark task that the ``bench`` arguments describe."""
    from .bench.csvdata import CSVTask, load_csv
    from .bench.tasks import RegressionTask

    params = parse_set(args.set)
    task = args.task
    common = dict(seed=args.seed, device=args.device, params=params)
    if task == "csv":
        if not args.data or not args.target:
            raise UsageError("--task csv needs --data FILE and --target COLUMN")
        kind = args.target_kind
        methods_of(args.methods, "regression" if kind == "regression" else "classification")
        X, y, _ = load_csv(args.data, args.target)
        if kind == "auto":
            kind = "regression" if y.dtype.kind in "fi" else "classification"
        if kind == "regression":
            return CSVTask(args.data, args.target, methods_of(args.methods, "regression"),
                           n_splits=args.n_splits, **common)
        return _csv_classification(args, X, y, common)
    if task == "regression":
        return RegressionTask(datasets_of(args.dataset, task, args.data_home),
                              methods_of(args.methods, task), data_home=args.data_home,
                              n_splits=args.n_splits, **common)
    if task == "classification":
        from .bench.classification import (
            ALL_CLASSES,
            SHIFTS,
            ClassificationTask,
            check_id_classes,
        )

        shifts = {} if args.no_shift else {
            "noise": floats_of(args.noise_levels, "--noise-levels"),
            "shuffle": floats_of(args.shuffle_levels, "--shuffle-levels"),
            "flip": SHIFTS["flip"]}
        shifts = {k: v for k, v in shifts.items() if v}
        id_classes = (list(ALL_CLASSES) if args.id_classes.strip() == "all"
                      else ints_of(args.id_classes, "--id-classes"))
        try:
            check_id_classes(id_classes)
        except ValueError as exc:
            raise UsageError(f"--id-classes: {exc}") from None
        return ClassificationTask(
            datasets_of(args.dataset, task, args.data_home),
            methods_of(args.methods, task, args.network),
            data_home=args.data_home, n_splits=args.n_splits, shifts=shifts,
            id_classes=id_classes, network=args.network or "mlp", **common)
    from .bench.bandit import BanditTask

    datasets_of(args.dataset, task, args.data_home)
    device = "cpu" if args.device == "auto" else args.device
    return BanditTask(methods_of(args.methods, task), data_home=args.data_home,
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
    return ClassificationTask([name], methods_of(args.methods, "classification"),
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
    from .bench.settings import DETAIL_KEYS, REQUIRED, deduplicate, select_where

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
    text = {"dataset", "method", "shift", "warm_start"}
    for column in REQUIRED[task]:
        bad = [r[column] for r in records if column not in text
               and not isinstance(r[column], float)]
        if bad:
            raise UsageError(f"{', '.join(map(str, files))}: column {column!r} holds text "
                             f"({bad[0]!r}) in {len(bad)} record(s), not numbers.")
    records, repeated = deduplicate(task, records)
    if repeated:
        print(f"skfbnn report: warning: {repeated} record(s) repeat a cell already in the "
              "files (appended twice); each cell is counted once, its last record",
              file=sys.stderr)
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
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'skfbnn[plot]'.") from None
    table = task_summary(task, records)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    if args.plot:
        plot_records(summarize_records(records), Path(args.plot), column=args.column)
    if args.figures:
        loaded = {kind: select_where(deduplicate(task, read_records(paths),
                                                 DETAIL_KEYS[kind])[0], args.where)
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
                       help="folder holding the data sets (or set SKFBNN_DATA_HOME); with "
                            "neither, UCI, MNIST-1D and Mushroom are downloaded once into "
                            "$SKFBNN_DATA or ~/skfbnn_data")
    bench.add_argument("--out", default=None,
                       help="CSV file of records: cells it holds with the same settings are "
                            "skipped, a rerun with another option (--seed, --n-splits, --set, "
                            "...) adds its cells beside them; a partial last line left by a "
                            "killed run is dropped")
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
                     help="classes trained on; the others are out of distribution; 'all': "
                          "all ten classes (MNIST-1D's canonical 4000/1000 split), "
                          "in-distribution metrics only")
    clf.add_argument("--network", default=None, choices=("mlp", "cnn"),
                     help="mlp (default): each method's MLP; cnn: every skfbnn classifier on "
                          "the package's CNN for the data set (CNN1d for MNIST-1D, CNN2d for "
                          "digits) and the baseline cnn_ensemble (five plain CNNs)")
    ban = bench.add_argument_group("bandit task")
    ban.add_argument("--horizon", type=int, default=50000, help="steps (default 50000)")
    ban.add_argument("--p", default="0.5",
                     help="probability that a poisonous mushroom eaten costs -35, or several "
                          "comma-separated (e.g. 0.4,0.5,0.6: a cell each; default 0.5)")
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
    for a bad option or input.

    A ``ValueError`` raised while the cells run (a data set that cannot be loaded, a fit
    refusing its input), and a data set that cannot be downloaded or fails its checksum,
    are one line too, exit status 1; set the environment variable
    ``SKFBNN_DEBUG=1`` to see its traceback.
    """
    import os

    from .datasets import ChecksumError, DownloadError

    args = build_parser().parse_args(argv)
    try:
        with _one_line_warnings():
            return args.func(args)
    except (UsageError, ValueError, DownloadError, ChecksumError) as exc:
        late = not isinstance(exc, UsageError) and args.command == "bench"
        if late and os.environ.get("SKFBNN_DEBUG"):
            raise
        message = " ".join(str(exc).split())
        hint = " (SKFBNN_DEBUG=1 shows the traceback)" if late else ""
        print(f"skfbnn {args.command}: error: {message}{hint}", file=sys.stderr)
        return 1 if late else 2
