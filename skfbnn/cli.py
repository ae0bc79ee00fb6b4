"""The ``skfbnn`` command: ``methods``, ``bench`` and ``report``.

``skfbnn bench`` cross-validates methods on scikit-learn's bundled diabetes data
(default) or on a UCI data set with its standard splits, and prints a table of
RMSE, test log-likelihood, CRPS, 95% coverage and fit time (mean +- standard
error over folds, original units).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _parse_set(items: Sequence[str]) -> dict:
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


def _load(dataset: str, data_home: str | None, n_splits: int | None):
    from sklearn.model_selection import KFold

    if dataset == "diabetes":
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
        cv = KFold(n_splits or 5, shuffle=True, random_state=0)
        return X, y, list(cv.split(X))
    from .datasets import UCISplits, load_uci

    X, y = load_uci(dataset, data_home=data_home, return_X_y=True)
    return X, y, list(UCISplits(dataset, data_home=data_home, n_splits=n_splits).split(X))


def _done(path: Path | None) -> set[tuple[str, str, int]]:
    from .bench.report import read_records

    if path is None or not path.exists():
        return set()
    return {(r["dataset"], r["method"], int(r["split"])) for r in read_records([path])}


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench.configs import make_regression_pipeline
    from .bench.report import append_record, markdown_table, summarize_records
    from .bench.runner import evaluate_split

    params = _parse_set(args.set)
    X, y, splits = _load(args.dataset, args.data_home, args.n_splits)
    out = Path(args.out) if args.out else None
    done, records = _done(out), []
    for method in args.methods.split(","):
        for k, (train, test) in enumerate(splits):
            if (args.dataset, method, k) in done:
                continue
            pipe = make_regression_pipeline(method, random_state=args.seed + k,
                                            device=args.device, **params)
            record = {"dataset": args.dataset, "method": method, "split": k,
                      **evaluate_split(pipe, X[train], y[train], X[test], y[test])}
            records.append(record)
            if out is not None:
                append_record(out, record)
            print(f"{args.dataset} {method} split {k}: rmse {record['rmse']:.3f} "
                  f"test_ll {record['test_ll']:.3f} fit {record['fit_time']:.1f}s",
                  file=sys.stderr, flush=True)
    if out is not None:
        from .bench.report import read_records

        records = read_records([out])
    print(markdown_table(summarize_records(records)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .bench.report import markdown_table, plot_records, read_records, summarize_records

    summary = summarize_records(read_records([Path(p) for p in args.files]))
    table = markdown_table(summary)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    if args.plot:
        plot_records(summary, Path(args.plot), column=args.column)
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from .inference.registry import METHODS

    for name, spec in METHODS.items():
        print(f"{name:8s} family={spec.family:12s} prior={spec.prior:8s} "
              f"posterior={spec.posterior:10s} update={spec.module.__name__}")
    return 0


DEFAULT_METHODS = ("sgld", "fsgld", "sghmc", "fsghmc", "bbb", "ensemble")
"""What ``skfbnn bench`` compares by default: one of each family and prior."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``skfbnn`` command."""
    parser = argparse.ArgumentParser(prog="skfbnn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("methods", help="list the registered inference methods").set_defaults(
        func=cmd_methods
    )
    bench = sub.add_parser("bench", help="cross-validate methods and print a table")
    bench.add_argument("--dataset", default="diabetes",
                       help="'diabetes' (bundled with scikit-learn, 5-fold CV) or a UCI name")
    bench.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                       help="comma-separated registry keys (see `skfbnn methods`)")
    bench.add_argument("--n-splits", type=int, default=None,
                       help="number of folds/splits (default: 5 for diabetes, all for UCI)")
    bench.add_argument("--data-home", default=None,
                       help="folder holding the UCI data sets (or set SKFBNN_DATA_HOME)")
    bench.add_argument("--out", default=None, help="CSV file; existing records are skipped")
    bench.add_argument("--device", default="auto")
    bench.add_argument("--seed", type=int, default=0,
                       help="split k is fitted with random_state=SEED + k (default 0); another "
                            "seed repeats a grid with independent randomness, the yardstick "
                            "for a paired difference between two methods")
    bench.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                       help="override method hyperparameters, e.g. --set step_size=0.01")
    bench.set_defaults(func=cmd_bench)
    report = sub.add_parser("report", help="summarise benchmark CSV files")
    report.add_argument("files", nargs="+")
    report.add_argument("--markdown", default=None)
    report.add_argument("--plot", default=None)
    report.add_argument("--column", default="test_ll")
    report.set_defaults(func=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``skfbnn`` command."""
    args = build_parser().parse_args(argv)
    return args.func(args)
