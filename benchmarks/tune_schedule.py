"""Compare the constant and decaying step-size schedules on validation data only.

Same protocol as ``tune_defaults.py`` (split 0's training rows split 80/20 into
fit / validation rows; test rows never read), default step sizes, six data sets.
Appends to a CSV and prints the validation log-likelihood per schedule.

Usage: python benchmarks/tune_schedule.py --data-home ../shared/data/uci \
           --out benchmarks/results/tuning_schedule.csv [--n-jobs 1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from joblib import Parallel, delayed
from tune_defaults import DATASETS, one  # noqa: E402  (same folder)

from skfbnn.bench.report import append_record, read_records

METHODS = ("sgld", "fsgld", "sghmc", "fsghmc")
SCHEDULES = ("constant", "decay")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--out", default="benchmarks/results/tuning_schedule.csv")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["dataset"], r["method"], r["schedule"]) for r in read_records([out])}
    jobs = [(d, m, s) for m in METHODS for d in DATASETS for s in SCHEDULES
            if (d, m, s) not in done]
    for rec in Parallel(n_jobs=args.n_jobs, return_as="generator")(
        delayed(one)(d, m, None, args.data_home, schedule=s) for d, m, s in jobs
    ):
        append_record(out, rec)
        print(rec, flush=True)
    records = read_records([out])
    for m in METHODS:
        row = {s: [r["val_ll"] for r in records if r["method"] == m and r["schedule"] == s]
               for s in SCHEDULES}
        wins = sum(
            d > c for c, d in zip(row["constant"], row["decay"], strict=True)
        )
        print(m, {s: round(sum(v) / len(v), 3) for s, v in row.items()},
              f"decay better on {wins} of {len(row['decay'])}")


if __name__ == "__main__":
    main()
