"""Choose the defaults of fBNN, ifBNN and ifBDE on validation data only.

Protocol of ``tune_vi_ensemble.py``: the *training* rows of a standard UCI split are split
80/20 (fixed permutation) into fit / validation rows; test rows are never read. Each
candidate (a small grid over the method's regulariser and learning rate; everything else at
its default) is scored by the validation log-likelihood of the predictive mixture; RMSE, 95%
coverage and fit time are kept. Records are appended to a CSV (resumable); the summary ranks
the candidates per data set and split and picks the best mean rank among the candidates
never more than 1 nat behind the best.

``--grid random_function`` compares ifBDE with and without its randomised-function term
(everything else at the defaults) beside the deep ensemble, the reference.
``--grid anchored`` compares ifBDE and the deep ensemble with and without anchored members
(each member's weight penalty centred at its own prior draw); ``--grid anchored_scale``
does so at the weight-prior scales 0.3 and 3 (the default is 1); ``--grid prior_scale``
compares the weight-prior scales 1 and 3 of ifBDE and the deep ensemble; ``--grid ntk_scale``
runs ifBDE with the weight prior 3 and its members' NTK scaled by 1 (the plain empirical NTK),
0.5, 0.25 and 0.1, and by 1 with ``beta=3``, to be held against the ``prior_scale`` rows.
``--grid w2_interval`` runs ifBDE or ifBNN with the covariance part of the W2 regulariser
evaluated at every step and at every 2nd, 4th and 8th (the gradient of the last evaluation
reused in between). ``--grid barycenter_iter`` runs ifBDE with its barycenter as one
fixed-point map from the members' average covariance (0, the default) and after 3 maps
without gradient (converged to about 1e-8: what the tolerance of 1e-4 used before gave).

Usage: python benchmarks/tune_functional_vi.py --data-home ../shared/data/uci \
           [--methods ifbnn fbnn ifbde] [--datasets yacht bostonHousing energy] [--splits 0]
       python benchmarks/tune_functional_vi.py --data-home ../shared/data/uci \
           --grid random_function --methods ifbde ensemble --splits 0 1 \
           --datasets yacht bostonHousing energy concrete wine-quality-red \
           --out benchmarks/results/tuning_ifbde_random_function.csv
       python benchmarks/tune_functional_vi.py --data-home ../shared/data/uci \
           --grid anchored --methods ifbde ensemble --splits 0 1 \
           --out benchmarks/results/tuning_anchored.csv
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from tune_vi_ensemble import tuning_parser

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.report import append_record, read_records
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split


def _grid(**axes) -> list[dict]:
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


GRID = {
    "ifbnn": _grid(beta=(0.1, 1.0), w2_reduction=("sum", "mean"), learning_rate=(3e-3,)),
    "fbnn": _grid(prior_nugget=(1e-2,), kl_scale=("batch", "full"), learning_rate=(3e-3,)),
    "ifbde": _grid(beta=(0.1, 1.0), w2_reduction=("sum", "mean")),
}
RANDOM_FUNCTION_GRID = {
    "ifbde": _grid(random_function=(False, True)),
    "ensemble": [{}],
}
ANCHORED_GRID = {
    "ifbde": _grid(anchored=(False, True)),
    "ensemble": _grid(anchored=(False, True)),
}
ANCHORED_SCALE_GRID = {
    "ifbde": _grid(anchored=(False, True), prior_std=(0.3, 3.0)),
    "ensemble": _grid(anchored=(False, True), prior_std=(0.3, 3.0)),
}
PRIOR_SCALE_GRID = {
    "ifbde": _grid(prior_std=(1.0, 3.0)),
    "ensemble": _grid(prior_std=(1.0, 3.0)),
}
NTK_SCALE_GRID = {
    "ifbde": [*_grid(prior_std=(3.0,), ntk_scale=(1.0, 0.5, 0.25, 0.1)),
              {"prior_std": 3.0, "ntk_scale": 1.0, "beta": 3.0}],
}
W2_INTERVAL_GRID = {
    "ifbde": _grid(w2_interval=(1, 2, 4, 8)),
    "ifbnn": _grid(w2_interval=(1, 2, 4, 8)),
}
BARYCENTER_ITER_GRID = {"ifbde": _grid(barycenter_iter=(0, 3))}
GRIDS = {"default": GRID, "random_function": RANDOM_FUNCTION_GRID, "anchored": ANCHORED_GRID,
         "anchored_scale": ANCHORED_SCALE_GRID, "prior_scale": PRIOR_SCALE_GRID,
         "ntk_scale": NTK_SCALE_GRID, "w2_interval": W2_INTERVAL_GRID,
         "barycenter_iter": BARYCENTER_ITER_GRID}
DATASETS = ("yacht", "bostonHousing", "energy")


def _key(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def validate(dataset: str, method: str, split: int, data_home: str, params: dict) -> dict:
    """Fit on 80% of ``split``'s training rows, score on the other 20%."""
    X, _, y, _ = load_uci_split(dataset, split, data_home=data_home)  # test part unused
    order = np.random.default_rng(split).permutation(len(X))
    n_fit = int(0.8 * len(X))
    fit, val = order[:n_fit], order[n_fit:]
    pipe = make_regression_pipeline(method, random_state=split, device="cpu", **params)
    try:
        scores, error = evaluate_split(pipe, X[fit], y[fit], X[val], y[val]), ""
    except Exception as exc:  # a diverging candidate is recorded, not fatal
        scores, error = {"test_ll": -np.inf}, type(exc).__name__
    return {"dataset": dataset, "method": method, "split": split, "params": _key(params),
            "val_rmse": scores.get("rmse", np.nan), "val_ll": scores["test_ll"],
            "val_coverage95": scores.get("coverage95", np.nan),
            "fit_time": scores.get("fit_time", np.nan), "error": error}


def summarise(records: list[dict], methods) -> None:
    for method in methods:
        rows = [r for r in records if r["method"] == method]
        cells = sorted({(r["dataset"], int(r["split"])) for r in rows})
        stats: dict[str, dict[str, list]] = {}
        for cell in cells:
            here = sorted((r for r in rows if (r["dataset"], int(r["split"])) == cell),
                          key=lambda r: -float(r["val_ll"]))
            for rank, r in enumerate(here):
                st = stats.setdefault(r["params"], {"rank": [], "ll": [], "regret": [],
                                                    "cover": [], "rmse": []})
                st["rank"].append(rank + 1)
                st["ll"].append(float(r["val_ll"]))
                st["regret"].append(float(here[0]["val_ll"]) - float(r["val_ll"]))
                st["cover"].append(float(r["val_coverage95"]))
                st["rmse"].append(float(r["val_rmse"]))
        print(f"\n{method}: params | mean rank | mean val LL | worst regret | mean coverage | "
              "cells")
        scored = sorted(stats, key=lambda k: (np.mean(stats[k]["rank"]),
                                              -np.mean(stats[k]["ll"])))
        for k in scored:
            st = stats[k]
            print(f"  {k} | {np.mean(st['rank']):.2f} | {np.mean(st['ll']):.3f} | "
                  f"{max(st['regret']):.2f} | {np.nanmean(st['cover']):.3f} | {len(st['rank'])}")
        safe = [k for k in scored if max(stats[k]["regret"]) <= 1.0]
        if scored:
            print(f"  pick: {safe[0] if safe else scored[0]}")


def paired_table(records: list[dict], method: str, against: str) -> None:
    """Markdown rows: each candidate's validation log-likelihood minus that of ``against``
    (a params JSON), mean over the splits both have, per data set, with the coverage."""
    rows = [r for r in records if r["method"] == method]
    base = {(r["dataset"], int(r["split"])): float(r["val_ll"]) for r in rows
            if r["params"] == _key(json.loads(against))}
    datasets = sorted({r["dataset"] for r in rows})
    print(f"\n{method} against {against}: validation log-likelihood difference (mean over "
          "splits) | mean | mean 95% coverage")
    print("| params | " + " | ".join(datasets) + " | mean | coverage |")
    print("|---" * (len(datasets) + 3) + "|")
    for params in sorted({r["params"] for r in rows}):
        cells, means = [], []
        for d in datasets:
            diffs = [float(r["val_ll"]) - base[(d, int(r["split"]))] for r in rows
                     if r["params"] == params and r["dataset"] == d
                     and (d, int(r["split"])) in base]
            cells.append(f"{np.mean(diffs):+.3f}" if diffs else "")
            means += [np.mean(diffs)] if diffs else []
        cover = np.nanmean([float(r["val_coverage95"]) for r in rows if r["params"] == params])
        print(f"| `{params}` | " + " | ".join(cells) + f" | {np.mean(means):+.3f} | {cover:.3f} |")


def main() -> None:
    parser = tuning_parser(__doc__, "benchmarks/results/tuning_functional_vi.csv", [0], 1)
    parser.add_argument("--methods", nargs="+", default=list(GRID))
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--grid", choices=sorted(GRIDS), default="default")
    parser.add_argument("--against", default=None,
                        help="params JSON: also print every candidate's difference to it")
    args = parser.parse_args()
    grid = GRIDS[args.grid]
    out = Path(args.out)
    records = read_records([out]) if out.exists() else []
    if not args.summary_only:
        done = {(r["dataset"], r["method"], int(r["split"]), r["params"]) for r in records}
        jobs = [(d, m, s, p) for m in args.methods for p in grid[m] for d in args.datasets
                for s in args.splits if (d, m, s, _key(p)) not in done]
        for rec in Parallel(n_jobs=args.n_jobs, return_as="generator")(
            delayed(validate)(d, m, s, args.data_home, p) for d, m, s, p in jobs
        ):
            append_record(out, rec)
            print(rec, flush=True)
        records = read_records([out])
    summarise(records, args.methods)
    if args.against:
        for method in args.methods:
            paired_table(records, method, args.against)


if __name__ == "__main__":
    main()
