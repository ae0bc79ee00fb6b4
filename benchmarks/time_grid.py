"""Time the whole UCI grid of the four samplers as one job (issue 9, goal 4).

Every standard split of the seven UCI sets (protein: its 5), SGLD, fSGLD, SGHMC
and fSGHMC at their defaults, ``--workers`` processes (one torch thread each)
pulling (data set, split) tasks from one queue, longest first (protein, then
kin8nm, then the small sets). Records go to ``<out>/<dataset>.csv`` (the format
of ``skfbnn bench``; finished rows are skipped on a rerun, and the wall time is
then only that of the rest), and the wall time of the run to
``<out>/wall_time.txt``.

Usage: OMP_NUM_THREADS=1 python benchmarks/time_grid.py --data-home ../shared/data/uci \
           --out benchmarks/results/uci_v10
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from skfbnn.bench.configs import make_regression_pipeline  # noqa: E402
from skfbnn.bench.report import append_record, read_records  # noqa: E402
from skfbnn.bench.runner import evaluate_split  # noqa: E402
from skfbnn.datasets import UCISplits, load_uci  # noqa: E402

DATASETS = ("protein-tertiary-structure", "kin8nm", "wine-quality-red", "concrete",
            "energy", "bostonHousing", "yacht")  # longest first
METHODS = ("sgld", "fsgld", "sghmc", "fsghmc")


def _task(args: tuple) -> list[dict]:
    dataset, split, methods, data_home = args
    import torch

    torch.set_num_threads(1)
    X, y = load_uci(dataset, data_home=data_home, return_X_y=True)
    train, test = list(UCISplits(dataset, data_home=data_home).split(X))[split]
    records = []
    for method in methods:
        pipe = make_regression_pipeline(method, random_state=split, device="cpu")
        records.append({"dataset": dataset, "method": method, "split": split,
                        **evaluate_split(pipe, X[train], y[train], X[test], y[test])})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    done = {(r["dataset"], r["method"], int(r["split"]))
            for r in read_records(sorted(out.glob("*.csv")))}
    tasks = []
    for dataset in args.datasets:
        n_splits = UCISplits(dataset, data_home=args.data_home).get_n_splits()
        for split in range(n_splits):
            todo = tuple(m for m in args.methods if (dataset, m, split) not in done)
            if todo:
                tasks.append((dataset, split, todo, args.data_home))
    start = time.perf_counter()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for records in pool.imap_unordered(_task, tasks):
            for record in records:
                append_record(out / f"{record['dataset']}.csv", record)
            r = records[0]
            print(f"{time.perf_counter() - start:7.0f} s  {r['dataset']} split {r['split']}",
                  flush=True)
    wall = time.perf_counter() - start
    line = (f"{len(tasks)} tasks ({sum(len(t[2]) for t in tasks)} fits), {args.workers} "
            f"workers: wall time {wall:.0f} s = {wall / 60:.1f} min\n")
    with open(out / "wall_time.txt", "a") as fh:
        fh.write(line)
    print(line, end="")


if __name__ == "__main__":
    main()
