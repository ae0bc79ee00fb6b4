"""Choose the default step sizes on validation data only.

For each UCI data set (protein excluded for cost) the first standard split's
*training* rows are split 80/20 (fixed permutation) into fit / validation rows;
test rows are never read. Every method is fitted with each candidate step size
(all other hyperparameters at their defaults) and scored by the validation
log-likelihood of the draw mixture. Results are appended to a CSV; the chosen
default per method maximises the mean per-dataset rank.

Usage: python benchmarks/tune_defaults.py --data-home ../shared/data/uci \
           --out benchmarks/results/tuning.csv [--n-jobs 2]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.report import append_record, read_records
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split

DATASETS = ("bostonHousing", "concrete", "energy", "kin8nm", "wine-quality-red", "yacht")
GRID = {
    "sgld": (3e-3, 1e-2, 3e-2, 1e-1),
    "fsgld": (3e-3, 1e-2, 3e-2, 1e-1),
    "sghmc": (3e-4, 1e-3, 3e-3, 1e-2),
    "fsghmc": (3e-4, 1e-3, 3e-3, 1e-2),
}


def one(dataset, method, step, data_home, **params):
    X, _, y, _ = load_uci_split(dataset, 0, data_home=data_home)  # test part unused
    perm = np.random.default_rng(0).permutation(len(X))
    cut = int(0.8 * len(X))
    fit, val = perm[:cut], perm[cut:]
    if step is not None:
        params["step_size"] = step
    pipe = make_regression_pipeline(method, random_state=0, **params)
    try:
        rec = evaluate_split(pipe, X[fit], y[fit], X[val], y[val])
    except Exception as exc:  # a diverging candidate is recorded, not fatal
        rec = {"rmse": np.nan, "test_ll": -np.inf, "error": type(exc).__name__}
    return {"dataset": dataset, "method": method, "step_size": step, **params,
            "val_rmse": rec["rmse"], "val_ll": rec["test_ll"],
            "fit_time": rec.get("fit_time", np.nan), "error": rec.get("error", "")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--out", default="benchmarks/results/tuning.csv")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["dataset"], r["method"], float(r["step_size"])) for r in read_records([out])}
    jobs = [(d, m, s) for m, steps in GRID.items() for d in DATASETS for s in steps
            if (d, m, s) not in done]
    for rec in Parallel(n_jobs=args.n_jobs, return_as="generator")(
        delayed(one)(d, m, s, args.data_home) for d, m, s in jobs
    ):
        append_record(out, rec)
        print(rec, flush=True)
    records = read_records([out])
    for method, steps in GRID.items():
        ranks = {s: [] for s in steps}
        for dataset in DATASETS:
            rows = [r for r in records if r["method"] == method and r["dataset"] == dataset
                    and r["step_size"] in steps]
            order = sorted(rows, key=lambda r: -r["val_ll"])
            for rank, r in enumerate(order):
                ranks[r["step_size"]].append(rank + 1)
        best = min(steps, key=lambda s: np.mean(ranks[s]))
        print(method, {s: np.mean(r) for s, r in ranks.items()}, "-> default", best)


if __name__ == "__main__":
    main()
