"""The UCI regression grid: every method at its current defaults on every standard split.

Each record is what ``skfbnn bench --dataset D --methods M --seed S`` computes for one split
(the same pipeline, ``skfbnn.bench.configs.make_regression_pipeline``, and the same scoring,
``skfbnn.bench.runner.evaluate_split``; split ``k`` fitted with ``random_state = S + k``). This
script only schedules the fits: ``--workers`` processes (``--threads`` torch threads each,
default one, which a fit uses as ``skfbnn.device.FIT_THREADS`` says) take
(method, data set, split) tasks from one queue, the largest data sets first, and the parent
appends every finished record to ``<out>/<method>.csv`` (one writer per file). A rerun skips the
records already there, so an interrupted grid resumes. The wall time of the run is printed.

With ``--seed 0`` (the grid) the records go to ``benchmarks/results/uci/<method>.csv``; with
another seed, to ``benchmarks/results/seeds/<method>-seed<S>.csv`` (the seeds experiment).
Then ``python benchmarks/uci_overview.py`` writes the table and the figure. The exact GP column
is ``benchmarks/exact_gp_uci.py`` (its own protocol: several starts, five data sets).

With ``--count-warnings`` each record also holds ``n_warnings`` and ``warnings`` (the
distinct ``Category: message`` of every warning the fit and the scoring raised, ``|``-joined),
and the records go to ``benchmarks/results/warnings/<method>.csv``; ``--warnings-table``
prints the data set x method table of counts from those records (the docs' table).

Usage:
    python benchmarks/uci.py --data-home ../shared/data/uci                  # the whole grid
    python benchmarks/uci.py --data-home ../shared/data/uci --methods ifbnn --datasets yacht
    python benchmarks/uci.py --data-home ../shared/data/uci --methods ensemble ifbde --seed 1000
    python benchmarks/uci.py ... --methods sghmc --set prior_std=ard --out /tmp/ard   # a variant
    python benchmarks/uci.py --data-home ../shared/data/uci --splits 0 --count-warnings
    python benchmarks/uci.py --warnings-table
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import multiprocessing as mp  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

from skfbnn.cli import parse_set  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("sgld", "fsgld", "sghmc", "fsghmc", "pcn", "pcnl", "mala", "bbb", "fbnn", "ifbnn",
           "ensemble", "ifbde")
DATASETS = ("protein-tertiary-structure", "kin8nm", "wine-quality-red", "concrete", "energy",
            "bostonHousing", "yacht")  # largest first


@functools.lru_cache(maxsize=2)
def _data(dataset: str, data_home: str | None):
    from skfbnn.datasets import UCISplits, load_uci
    from skfbnn.datasets._fetch import data_home_or_fetch

    data_home = data_home_or_fetch(data_home, dataset)  # none given: download once
    X, y = load_uci(dataset, data_home=data_home, return_X_y=True)
    return X, y, list(UCISplits(dataset, data_home=data_home).split(X))


def _fit(task: tuple) -> dict:
    """One (method, data set, split) record, as ``skfbnn bench`` writes it."""
    method, dataset, split, seed, params, data_home, device, count_warnings, threads = task
    import torch

    from skfbnn.bench.configs import make_regression_pipeline
    from skfbnn.bench.runner import evaluate_split

    torch.set_num_threads(threads)
    X, y, splits = _data(dataset, data_home)
    train, test = splits[split]
    pipe = make_regression_pipeline(method, random_state=seed + split, device=device, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        record = evaluate_split(pipe, X[train], y[train], X[test], y[test])
    record = {"dataset": dataset, "method": method, "split": split, **record}
    if count_warnings:
        seen = dict.fromkeys(f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught)
        record.update(n_warnings=len(caught), warnings="|".join(seen))
    else:
        for w in caught:  # the grid shows them as a plain run would
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return record


def warnings_table(folder: Path) -> str:
    """The method x data set table of warning counts in ``folder``'s records (markdown).

    Each cell is the number of warnings of the split(s) run (``+``-joined), ``–`` where none
    was run; below the table, every distinct warning seen.
    """
    from skfbnn.bench.report import read_records

    records = read_records(sorted(folder.glob("*.csv")))
    short = {"bostonHousing": "Boston", "protein-tertiary-structure": "protein",
             "wine-quality-red": "wine"}
    datasets = DATASETS[::-1]  # smallest first
    rows = ["| method | " + " | ".join(short.get(d, d) for d in datasets) + " |",
            "|---" * (len(datasets) + 1) + "|"]
    for method in METHODS:
        mine = [r for r in records if r["method"] == method]
        if mine:
            cells = ["+".join(str(int(r["n_warnings"])) for r in mine if r["dataset"] == d)
                     or "–" for d in datasets]
            rows.append(f"| {method} | " + " | ".join(cells) + " |")
    splits = sorted({int(r["split"]) for r in records})
    seen = sorted({w for r in records for w in str(r["warnings"]).split("|")
                   if w and w != "nan"})
    return "\n".join(rows + ["", f"{len(records)} fits, split(s) {splits}; warnings seen: "
                             + ("; ".join(seen) if seen else "none") + "."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None,
                        help="folder of the UCI data sets "
                        "(default: $SKFBNN_DATA_HOME, else fetched)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--splits", nargs="+", type=int, default=None,
                        help="split indices to run (default: every standard split)")
    parser.add_argument("--count-warnings", action="store_true",
                        help="record the warnings of each fit (into results/warnings)")
    parser.add_argument("--warnings-table", action="store_true",
                        help="print the table of warning counts from the records and stop")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override hyperparameters of every method (a variant, not the grid)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads per worker; a fit with large steps uses them "
                             "(skfbnn.device.FIT_THREADS)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the record files (default: results/uci, or "
                             "results/seeds for a seed other than 0)")
    args = parser.parse_args()
    from skfbnn.bench.report import append_record, read_records
    from skfbnn.datasets import UCISplits
    from skfbnn.datasets._fetch import data_home_or_fetch

    if args.warnings_table:
        print(warnings_table(args.out or RESULTS / "warnings"))
        return
    out = args.out or RESULTS / ("warnings" if args.count_warnings
                                 else "uci" if args.seed == 0 else "seeds")
    suffix = "" if args.seed == 0 else f"-seed{args.seed}"
    files = {m: out / f"{m}{suffix}.csv" for m in args.methods}
    params = parse_set(args.set)
    tasks = []
    for dataset in sorted(args.datasets, key=lambda d: DATASETS.index(d)
                          if d in DATASETS else len(DATASETS)):
        n_splits = UCISplits(
            dataset, data_home=data_home_or_fetch(args.data_home, dataset)).get_n_splits()
        for method in args.methods:
            done = ({int(r["split"]) for r in read_records([files[method]])
                     if r["dataset"] == dataset and r["method"] == method}
                    if files[method].exists() else set())
            wanted = range(n_splits) if args.splits is None else args.splits
            tasks += [(method, dataset, k, args.seed, params, args.data_home, args.device,
                       args.count_warnings, args.threads)
                      for k in wanted if k not in done]
    print(f"{len(tasks)} fits to run, {args.workers} workers, records into {out}", flush=True)
    start = time.perf_counter()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for record in pool.imap_unordered(_fit, tasks):
            append_record(files[record["method"]], record)
            print(f"{time.perf_counter() - start:7.0f} s  {record['dataset']} "
                  f"{record['method']} split {record['split']}: test_ll "
                  f"{record['test_ll']:.3f}, fit {record['fit_time']:.1f} s"
                  + (f", {record['n_warnings']} warnings" if args.count_warnings else ""),
                  flush=True)
    wall = time.perf_counter() - start
    print(f"{len(tasks)} fits, {args.workers} workers: wall time {wall:.0f} s = "
          f"{wall / 60:.1f} min")
    if args.seed == 0 and args.out is None and not args.count_warnings:
        print("table and figure: python benchmarks/uci_overview.py --markdown "
              "benchmarks/results/uci/summary.md --plot docs/images/uci_overview.png")


if __name__ == "__main__":
    main()
