"""Choose the defaults of Bayes by backprop and the deep ensemble on validation data only.

Same protocol as ``tune_defaults.py``: for each UCI data set but protein, the
*training* rows of a standard split are split 80/20 (fixed permutation) into
fit / validation rows; test rows are never read. Each candidate (a small grid
over the run policy and, for BBB, the prior scale; everything else at its
default) is scored by the validation log-likelihood of the predictive mixture;
RMSE, 95% coverage and fit time are kept too. Records are appended to a CSV
(resumable); the summary ranks the candidates per data set and split and picks
the best mean rank.

Usage: python benchmarks/tune_vi_ensemble.py --data-home ../shared/data/uci \
           --out benchmarks/results/tuning_vi_ensemble.csv [--splits 0 1] [--n-jobs 2]
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from tune_defaults import DATASETS

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.report import append_record, read_records
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split


def _grid(**axes) -> list[dict]:
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


GRID = {
    "ensemble": _grid(learning_rate=(1e-3, 3e-3, 1e-2), n_iter=(2000, 5000),
                      prior_std=(None, 1.0)),
    "bbb": _grid(learning_rate=(3e-3, 1e-2, 3e-2), n_iter=(3000, 10000), prior_std=(0.5, 1.0)),
}
# Not candidates for a default (the estimators have no epoch parameter): runs whose length is a
# fixed number of epochs, "e<k>" = ceil(k * n_fit / batch_size) steps, to test whether the run
# length should scale with the data.
EPOCH_GRID = {
    "ensemble": _grid(learning_rate=(3e-3, 1e-2), n_iter=("e40", "e100", "e250")),
}
KEYS = ("learning_rate", "n_iter", "prior_std")


def _value(v):
    if v in (None, ""):
        return None
    return v if isinstance(v, str) else float(v)


def _key(method: str, params: dict) -> tuple:
    return (method, *(_value(params.get(k)) for k in KEYS))


def _steps(n_iter, n_fit: int, batch_size: int = 64) -> int:
    if isinstance(n_iter, str):  # "e<k>": k epochs
        return int(np.ceil(int(n_iter[1:]) * n_fit / batch_size))
    return n_iter


def validate(dataset: str, method: str, split: int, data_home: str, params: dict) -> dict:
    """Fit on 80% of ``split``'s training rows, score on the other 20%."""
    X, _, y, _ = load_uci_split(dataset, split, data_home=data_home)  # test part unused
    order = np.random.default_rng(split).permutation(len(X))
    n_fit = int(0.8 * len(X))
    fit, val = order[:n_fit], order[n_fit:]
    steps = _steps(params["n_iter"], n_fit)
    pipe = make_regression_pipeline(method, random_state=split, **{**params, "n_iter": steps})
    try:
        scores = evaluate_split(pipe, X[fit], y[fit], X[val], y[val])
        Z = pipe[:-1].transform(X[val])
        split_std = {k: float(pipe[-1].predict_std(Z, kind=k).mean())
                     for k in ("epistemic", "aleatoric")}
        error = ""
    except Exception as exc:  # a diverging candidate is recorded, not fatal
        scores, split_std, error = {"test_ll": -np.inf}, {}, type(exc).__name__
    return {"dataset": dataset, "method": method, "split": split, "n_fit": n_fit,
            **{k: params.get(k, "") for k in KEYS},
            "epochs": steps * 64 / n_fit,
            "val_rmse": scores.get("rmse", np.nan), "val_ll": scores["test_ll"],
            "val_coverage95": scores.get("coverage95", np.nan),
            "epistemic_std": split_std.get("epistemic", np.nan),
            "aleatoric_std": split_std.get("aleatoric", np.nan),
            "fit_time": scores.get("fit_time", np.nan), "error": error}


def summarise(records: list[dict], splits, grid: dict, max_regret: float = 1.0) -> None:
    """Rank the candidates per (data set, split); pick the best mean rank among the safe ones.

    A candidate is *safe* when its validation log-likelihood is never more than
    ``max_regret`` nats below the best candidate's on the same data set and split
    (mean rank alone hides a catastrophically overconfident data set). Ties go to
    the better mean validation log-likelihood.
    """
    for method, candidates in grid.items():
        keys = [_key(method, c) for c in candidates]
        stats = {k: {"rank": [], "ll": [], "regret": [], "cover": []} for k in keys}
        for dataset, split in itertools.product(DATASETS, splits):
            rows = [r for r in records if r["method"] == method and r["dataset"] == dataset
                    and r["split"] == split and _key(method, r) in stats]
            rows.sort(key=lambda r: -r["val_ll"])
            for rank, r in enumerate(rows):
                st = stats[_key(method, r)]
                st["rank"].append(rank + 1)
                st["ll"].append(r["val_ll"])
                st["regret"].append(rows[0]["val_ll"] - r["val_ll"])
                st["cover"].append(r["val_coverage95"])
        print(f"\n{method}: (lr, n_iter, prior_std)  mean rank | mean val LL | worst regret "
              "| mean / min coverage95 | n")
        scored = sorted((k for k in keys if stats[k]["rank"]),
                        key=lambda k: (np.mean(stats[k]["rank"]), -np.mean(stats[k]["ll"])))
        for k in scored:
            st = stats[k]
            print(f"  {k[1:]}  {np.mean(st['rank']):5.2f} | {np.mean(st['ll']):7.3f} | "
                  f"{max(st['regret']):6.2f} | {np.nanmean(st['cover']):.3f} / "
                  f"{np.nanmin(st['cover']):.3f} | {len(st['rank'])}")
        safe = [k for k in scored if max(stats[k]["regret"]) <= max_regret]
        if scored:
            print(f"  best mean rank: {scored[0][1:]}; best mean rank with worst regret <= "
                  f"{max_regret} nat: {safe[0][1:] if safe else None}")


def tuning_parser(doc: str, out: str, splits: list[int], n_jobs: int) -> argparse.ArgumentParser:
    """The arguments every validation-tuning script takes."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--out", default=out)
    parser.add_argument("--splits", type=int, nargs="+", default=splits)
    parser.add_argument("--n-jobs", type=int, default=n_jobs)
    parser.add_argument("--summary-only", action="store_true")
    return parser


def main() -> None:
    parser = tuning_parser(__doc__, "benchmarks/results/tuning_vi_ensemble.csv", [0, 1], 2)
    parser.add_argument("--methods", nargs="+", default=list(GRID))
    args = parser.parse_args()
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["dataset"], r["split"], _key(r["method"], r)) for r in read_records([out])}
    # split by split, so that a time-boxed run has whole splits; slow candidates interleaved
    jobs = [(d, m, s, c) for s in args.splits for m in args.methods
            for c in GRID[m] + EPOCH_GRID.get(m, [])
            for d in DATASETS if (d, s, _key(m, c)) not in done]
    if not args.summary_only:
        for rec in Parallel(n_jobs=args.n_jobs, return_as="generator")(
            delayed(validate)(d, m, s, args.data_home, c) for d, m, s, c in jobs
        ):
            append_record(out, rec)
            print(rec, flush=True)
    records = read_records([out]) if out.exists() else []
    print("\n== candidates for the defaults (fixed n_iter) ==")
    summarise(records, args.splits, GRID)
    print("\n== with the epoch-scaled runs (evidence on the run length only) ==")
    summarise(records, args.splits,
              {m: GRID[m] + EPOCH_GRID[m] for m in EPOCH_GRID})


if __name__ == "__main__":
    main()
