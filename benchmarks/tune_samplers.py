"""Compare sampler settings on validation rows only (issue: samplers good out of the box).

For each data set, the *training* rows of standard splits 0 and 1 (``--splits``)
are split 80/20 (fixed permutation) into fit / validation rows; test rows are
never read. Each named configuration (a method and its parameters, JSON) is
fitted and scored on the validation rows: mixture log-likelihood, RMSE, 95%
coverage, fit time, max R-hat. Split ``k`` is fitted with ``random_state=k``; a
configuration's ``"seed": s`` makes it ``s + k`` (the same configuration again with
independent randomness: the yardstick for a difference between two configurations).
The configuration ``{"method": "exact_gp"}`` is scikit-learn's exact GP, the anchor
the samplers are compared with. Records are
appended to a CSV (one row per data set, split and configuration; finished rows
are skipped on a rerun) and a summary (mean over splits, then over data sets,
per configuration) is printed.

Usage: python benchmarks/tune_samplers.py --data-home ../shared/data/uci \
           --out benchmarks/results/tuning_samplers.csv \
           --config 'sghmc_pre:{"method": "sghmc", "preconditioner": "adaptive"}' ...
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.report import append_record, read_records
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split

DATASETS = ("bostonHousing", "concrete", "energy", "kin8nm", "wine-quality-red", "yacht")


def validation_rows(dataset: str, split: int, data_home: str):
    """Fit and validation rows from the training part of a standard split."""
    X, _, y, _ = load_uci_split(dataset, split, data_home=data_home)  # test part unused
    perm = np.random.default_rng(split).permutation(len(X))
    cut = int(0.8 * len(X))
    return X[perm[:cut]], y[perm[:cut]], X[perm[cut:]], y[perm[cut:]]


def exact_gp(X, y, X_test, y_test, restarts: int = 2) -> dict:
    """scikit-learn's exact GP (constant x ARD RBF + white noise), the best marginal
    likelihood over three noise initialisations with ``restarts`` random restarts each:
    the anchor."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X)
    Xs, Xt = scaler.transform(X), scaler.transform(X_test)
    start = time.perf_counter()
    fits = []
    for noise in (1.0, 0.1, 0.01):
        kernel = ConstantKernel() * RBF(np.ones(X.shape[1])) + WhiteKernel(noise)
        with warnings.catch_warnings():  # convergence warnings on tiny subsets
            warnings.simplefilter("ignore")
            gp = GaussianProcessRegressor(kernel, normalize_y=True,
                                          n_restarts_optimizer=restarts,
                                          random_state=0).fit(Xs, y)
        fits.append((gp.log_marginal_likelihood_value_, gp))
    gp = max(fits, key=lambda f: f[0])[1]
    mean, std = gp.predict(Xt, return_std=True)
    z = (y_test - mean) / std
    return {"test_ll": float(np.mean(-0.5 * z**2 - np.log(std) - 0.5 * np.log(2 * np.pi))),
            "rmse": float(np.sqrt(np.mean((y_test - mean) ** 2))),
            "coverage95": float(np.mean(np.abs(z) < 1.959964)),
            "fit_time": time.perf_counter() - start, "max_r_hat": np.nan}


def score(name: str, config: dict, dataset: str, split: int, data_home: str) -> dict:
    """One configuration on one data set's validation rows."""
    params = dict(config)
    method = params.pop("method")
    seed = params.pop("seed", 0)
    Xf, yf, Xv, yv = validation_rows(dataset, split, data_home)
    try:
        if method == "exact_gp":
            rec = exact_gp(Xf, yf, Xv, yv)
        else:
            pipe = make_regression_pipeline(method, random_state=seed + split, device="cpu",
                                            **params)
            rec = evaluate_split(pipe, Xf, yf, Xv, yv)
    except Exception as exc:  # a diverging candidate is recorded, not fatal
        rec = {"rmse": np.nan, "test_ll": -np.inf, "coverage95": np.nan,
               "fit_time": np.nan, "max_r_hat": np.nan, "error": type(exc).__name__}
    return {"config": name, "dataset": dataset, "split": split,
            "val_ll": rec["test_ll"], "val_rmse": rec["rmse"],
            "coverage95": rec["coverage95"], "fit_time": rec["fit_time"],
            "max_r_hat": rec["max_r_hat"], "error": rec.get("error", ""),
            "params": json.dumps(config, sort_keys=True)}


def summary(records: list[dict], names: list[str]) -> None:
    """Per configuration: mean validation LL per data set and overall."""
    datasets = sorted({r["dataset"] for r in records})
    print("config".ljust(24) + "".join(d[:10].rjust(11) for d in datasets) + "   mean  cov  time")
    for name in names:
        rows = [r for r in records if r["config"] == name]
        per = [np.mean([r["val_ll"] for r in rows if r["dataset"] == d] or [np.nan])
               for d in datasets]
        cov = np.mean([r["coverage95"] for r in rows])
        t = np.mean([r["fit_time"] for r in rows])
        print(name.ljust(24) + "".join(f"{v:11.3f}" for v in per)
              + f" {np.nanmean(per):7.3f} {cov:4.2f} {t:5.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--out", default="benchmarks/results/tuning_samplers.csv")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--splits", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--config", action="append", required=True,
                        help="name:JSON, e.g. 'sghmc:{\"method\": \"sghmc\"}'")
    args = parser.parse_args()
    configs = dict(c.split(":", 1) for c in args.config)
    configs = {name: json.loads(text) for name, text in configs.items()}
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["config"], r["dataset"], int(r["split"])) for r in read_records([out])}
    for name, config in configs.items():
        for dataset in args.datasets:
            for split in args.splits:
                if (name, dataset, split) in done:
                    continue
                rec = score(name, config, dataset, split, args.data_home)
                append_record(out, rec)
                print({k: rec[k] for k in ("config", "dataset", "split", "val_ll",
                                            "val_rmse", "coverage95", "fit_time")}, flush=True)
    records = [r for r in read_records([out]) if r["dataset"] in args.datasets]
    summary(records, list(configs))


if __name__ == "__main__":
    main()
