"""Choose the deep ensemble's defaults with beta-NLL variance heads, on validation rows only.

Same protocol as ``tune_vi_ensemble.py`` (whose ``validate`` it calls): 80/20
split of a standard split's *training* rows, test rows never read, six data
sets (protein excluded), score = validation log-likelihood of the mixture.
The grid crosses the heads' ``nll_beta`` with the run length, learning rate
and the optional weight prior; records go to a CSV, and the summary ranks the
candidates per data set and split (best mean rank first).

Usage: python benchmarks/tune_ensemble_heads.py --data-home ../shared/data/uci \
           --out benchmarks/results/tuning_ensemble_heads.csv --stage 1 --splits 0
       python benchmarks/tune_ensemble_heads.py ... --stage 2 --splits 0 1
       python benchmarks/tune_ensemble_heads.py ... --stage 3 --splits 0 1
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from tune_defaults import DATASETS
from tune_vi_ensemble import tuning_parser, validate

from skfbnn.bench.report import append_record, read_records

AXES = {"nll_beta": (0.0, 0.5, 1.0), "learning_rate": (1e-3, 3e-3, 1e-2),
        "n_iter": (500, 1000, 2000, 4000), "prior_std": (None, 1.0), "min_epochs": (0,)}
# Stage 2 (after stage 1 chose beta and the prior): a minimum number of epochs,
# so that the run length grows with the data set.
EPOCH_AXES = {"nll_beta": (0.5,), "learning_rate": (3e-3, 1e-2), "n_iter": (1000,),
              "prior_std": (1.0,), "min_epochs": (0, 50, 100, 200)}
# Stage 3 (at the chosen defaults): each member holds out rows and keeps its best state.
HOLDOUT_AXES = {"nll_beta": (0.5,), "learning_rate": (3e-3,), "n_iter": (2000,),
                "prior_std": (1.0,), "min_epochs": (100,),
                "validation_fraction": (0.0, 0.1, 0.2)}
KEYS = (*AXES, "validation_fraction")
MISSING = {"min_epochs": 0.0, "validation_fraction": 0.0}  # records made before the axis


def _key(params: dict) -> tuple:
    def value(k):
        v = params.get(k, MISSING.get(k))
        return None if v in (None, "") else float(v)

    return tuple(value(k) for k in KEYS)


def _product(axes: dict) -> list[dict]:
    return [dict(zip(axes, v, strict=True)) for v in itertools.product(*axes.values())]


def candidates(stage: int) -> list[dict]:
    """Stage 1: beta 0.5 over the full grid, beta 0 and 1 at every run length without
    prior; stage 2: the minimum number of epochs; stage 3: held-out rows per member."""
    if stage == 1:
        return [c for c in _product(AXES) if c["nll_beta"] == 0.5 or c["prior_std"] is None]
    return _product(EPOCH_AXES if stage == 2 else HOLDOUT_AXES)


def run_one(dataset: str, split: int, data_home: str, params: dict) -> dict:
    record = validate(dataset, "ensemble", split, data_home, params)
    return {**record, "nll_beta": params["nll_beta"], "min_epochs": params["min_epochs"],
            "validation_fraction": params.get("validation_fraction", 0.0)}


def summarise(records: list[dict], splits) -> None:
    ranks: dict[tuple, list] = {}
    lls: dict[tuple, list] = {}
    cover: dict[tuple, list] = {}
    for dataset, split in itertools.product(DATASETS, splits):
        rows = [r for r in records if r["dataset"] == dataset and r["split"] == split]
        for rank, r in enumerate(sorted(rows, key=lambda r: -r["val_ll"])):
            k = _key(r)
            ranks.setdefault(k, []).append(rank + 1)
            lls.setdefault(k, []).append(r["val_ll"])
            cover.setdefault(k, []).append(r["val_coverage95"])
    print(f"{KEYS} mean rank | mean val LL | mean coverage95 | n")
    for k in sorted(ranks, key=lambda k: np.mean(ranks[k])):
        print(f"  {k}  {np.mean(ranks[k]):5.2f} | {np.mean(lls[k]):7.3f} | "
              f"{np.nanmean(cover[k]):.3f} | {len(ranks[k])}")


def main() -> None:
    parser = tuning_parser(__doc__, "benchmarks/results/tuning_ensemble_heads.csv", [0], 1)
    parser.add_argument("--stage", type=int, choices=(1, 2, 3), default=1)
    args = parser.parse_args()
    out = Path(args.out)
    done = {(r["dataset"], r["split"], _key(r)) for r in read_records([out])} \
        if out.exists() else set()
    jobs = [(d, s, c) for s in args.splits for c in candidates(args.stage) for d in DATASETS
            if (d, s, _key(c)) not in done]
    if not args.summary_only:
        for rec in Parallel(n_jobs=args.n_jobs, return_as="generator")(
            delayed(run_one)(d, s, args.data_home, c) for d, s, c in jobs
        ):
            append_record(out, rec)
            print({k: rec[k] for k in ("dataset", *KEYS, "val_ll", "val_rmse",
                                       "val_coverage95")},
                  flush=True)
    keys = {_key(c) for c in candidates(args.stage)}
    records = [r for r in (read_records([out]) if out.exists() else []) if _key(r) in keys]
    summarise(records, args.splits)


if __name__ == "__main__":
    main()
