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
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "parse_set"]


def parse_set(items: Sequence[str]) -> dict:
    """``key=value`` pairs of ``--set``, the values read as Python literals where they are one."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set expects key=value, got {item!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def _split_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _methods(value: str | None, task: str) -> list[str]:
    from .inference.registry import METHODS

    if not value:
        return list(TASK_METHODS[task])
    methods = []
    for name in _split_list(value):
        if name == "all":
            extra = {"classification": ("mlp", "mlp_ensemble"),
                     "bandit": ("uniform", "greedy", "oracle")}.get(task, ())
            methods += [*METHODS, *extra]
        else:
            methods.append(name)
    return list(dict.fromkeys(methods))


def _datasets(value: str | None, task: str) -> list[str]:
    from .datasets import UCI_DATASETS

    names = []
    for name in _split_list(value) or _split_list(TASK_DATASETS[task]):
        names += list(UCI_DATASETS) if name == "uci" else [name]
    return names


def _floats(value: str, name: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in _split_list(value))
    except ValueError:
        raise SystemExit(f"{name} expects comma-separated numbers, got {value!r}") from None


def make_task(args: argparse.Namespace):
    """The benchmark task that the ``bench`` arguments describe."""
    from .bench.tasks import CSVTask, RegressionTask, load_csv

    params = parse_set(args.set)
    task = args.task
    common = dict(seed=args.seed, device=args.device, params=params)
    if task == "csv":
        if not args.data or not args.target:
            raise SystemExit("--task csv needs --data FILE and --target COLUMN")
        kind = args.target_kind
        if kind == "auto":
            y = load_csv(args.data, args.target)[1]
            kind = "regression" if y.dtype.kind in "fi" else "classification"
        if kind == "regression":
            return CSVTask(args.data, args.target, _methods(args.methods, "regression"),
                           n_splits=args.n_splits, **common)
        from sklearn.model_selection import StratifiedKFold

        from .bench.classification import ClassificationTask

        X, y, _ = load_csv(args.data, args.target)
        y = y.astype(str) if y.dtype.kind not in "iU" else y
        splits = list(StratifiedKFold(args.n_splits or 5, shuffle=True,
                                      random_state=0).split(X, y))
        name = Path(args.data).stem
        return ClassificationTask([name], _methods(args.methods, "classification"),
                                  data={name: (X, y, splits)}, **common)
    if task == "regression":
        return RegressionTask(_datasets(args.dataset, task), _methods(args.methods, task),
                              data_home=args.data_home, n_splits=args.n_splits, **common)
    if task == "classification":
        from .bench.classification import SHIFTS, ClassificationTask

        shifts = {} if args.no_shift else {
            "noise": _floats(args.noise_levels, "--noise-levels"),
            "shuffle": _floats(args.shuffle_levels, "--shuffle-levels"),
            "flip": SHIFTS["flip"]}
        shifts = {k: v for k, v in shifts.items() if v}
        return ClassificationTask(
            _datasets(args.dataset, task), _methods(args.methods, task),
            data_home=args.data_home, n_splits=args.n_splits, shifts=shifts,
            id_classes=[int(c) for c in _floats(args.id_classes, "--id-classes")], **common)
    from .bench.bandit import BanditTask

    dataset = _datasets(args.dataset, task)
    if dataset != ["mushroom"]:
        raise SystemExit(f"--task bandit runs on mushroom only, got --dataset {args.dataset}")
    device = "cpu" if args.device == "auto" else args.device
    return BanditTask(_methods(args.methods, task), data_home=args.data_home,
                      n_seeds=args.n_splits, seed=args.seed, horizon=args.horizon, p=args.p,
                      buffer_size=args.buffer_size, update_every=args.update_every,
                      curve_every=args.curve_every, warm_start=args.warm_start,
                      device=device, params=params)


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench.report import detail_path, read_records, write_report
    from .bench.tasks import run_task

    try:
        task = make_task(args)
    except ValueError as exc:
        raise SystemExit(f"skfbnn bench: {exc}") from None
    out = Path(args.out) if args.out else None
    records = run_task(task, out, n_jobs=args.n_jobs, scheduler=args.scheduler,
                       threads=args.threads, counter=task.name != "regression")
    from .bench.report import task_summary

    order = getattr(task, "methods", ())
    print(task_summary(task.name, records, order))
    report = args.report if args.report is not None else task.name != "regression"
    if report and out is not None:
        details = {kind: read_records([p]) for kind in task.details
                   if (p := detail_path(out, kind)).exists()}
        for path in write_report(out.with_suffix(""), task.name, records, details, order):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .bench.report import (
        plot_records,
        read_records,
        split_record_files,
        summarize_records,
        task_of,
        task_summary,
        write_report,
    )

    files, details = split_record_files([Path(p) for p in args.files])
    if not files:
        raise SystemExit("skfbnn report: no record file among the arguments")
    records = read_records(files)
    try:
        task = task_of(records)
    except ValueError as exc:
        raise SystemExit(f"skfbnn report: {exc}") from None
    table = task_summary(task, records)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    if args.plot:
        if task != "regression":
            raise SystemExit("--plot draws the regression error bars; use --figures STEM")
        plot_records(summarize_records(records), Path(args.plot), column=args.column)
    if args.figures:
        loaded = {kind: read_records(paths) for kind, paths in details.items() if paths}
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
    parser = argparse.ArgumentParser(prog="skfbnn", description=__doc__.splitlines()[0])
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
    report.set_defaults(func=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skfbnn`` command."""
    args = build_parser().parse_args(argv)
    return args.func(args)
