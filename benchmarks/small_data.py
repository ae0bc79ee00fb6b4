"""Where the functional prior helps: small random subsets of a UCI training set.

For each standard split, ``n`` training rows are drawn at random (seeded by the split) from its
training part; every method at its defaults is fitted on them and scored on the split's whole
test part (original units: RMSE, mixture test log-likelihood, 95% coverage). Functional and
weight-space samplers see the same rows, so their differences are paired over splits. The exact
GP (scikit-learn, the best marginal likelihood over three noise starts) is the reference.

One row per (dataset, n, split, method) is appended to ``--out``
(``benchmarks/results/small_data/records.csv``) as soon as it is done; a rerun skips finished
rows. ``--summary`` prints the table of means and the paired differences, ``--plot FILE`` draws
them against the training size.

Usage:

    OMP_NUM_THREADS=1 python benchmarks/small_data.py --datasets bostonHousing concrete \
        --sizes 20 50 --splits 0 1 2 3 4
    python benchmarks/small_data.py --summary
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.report import append_record, read_records
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split
from skfbnn.datasets._fetch import data_home_or_fetch
from skfbnn.exceptions import SamplerDivergenceError

torch.set_num_threads(1)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "small_data" / "records.csv"
PAIRS = (("fsghmc", "sghmc"), ("fsgld", "sgld"))


def exact_gp(X, y, X_test, y_test, restarts: int = 2) -> dict:
    """scikit-learn's exact GP (constant x ARD RBF + white noise), the best marginal
    likelihood over three noise initialisations with ``restarts`` random restarts each."""
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
            "fit_time": time.perf_counter() - start}


def run(args) -> None:
    done = set()
    if args.out.exists():
        done = {(r["dataset"], int(r["n"]), int(r["split"]), r["method"])
                for r in read_records([args.out])}
    for dataset in args.datasets:
        for n in args.sizes:
            for split in args.splits:
                X, X_test, y, y_test = load_uci_split(
                    dataset, split, data_home=data_home_or_fetch(args.data_home, dataset))
                rows = np.random.default_rng(1000 + split).choice(len(X), n, replace=False)
                for name in args.methods:
                    method = name + args.label
                    if (dataset, n, split, method) in done:
                        continue
                    if name == "exact_gp":
                        rec = exact_gp(X[rows], y[rows], X_test, y_test, restarts=0)
                    else:
                        pipe = make_regression_pipeline(name, random_state=split, device="cpu",
                                                        **json.loads(args.params))
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                rec = evaluate_split(pipe, X[rows], y[rows], X_test, y_test)
                        except SamplerDivergenceError:  # recorded (NaN), not fatal
                            rec = {"rmse": np.nan, "test_ll": np.nan, "coverage95": np.nan,
                                   "fit_time": np.nan}
                    record = {"dataset": dataset, "n": n, "split": split, "method": method,
                              **{k: rec[k] for k in ("rmse", "test_ll", "coverage95",
                                                     "fit_time")}}
                    append_record(args.out, record)
                    print(record, flush=True)


def _mean_se(values) -> str:
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return f"{v.mean():.3f}"
    return f"{v.mean():.3f} ± {v.std(ddof=1) / math.sqrt(len(v)):.3f}"


def summary(path: Path) -> None:
    records = read_records([path])
    by = {}
    for r in records:
        by.setdefault((r["dataset"], int(r["n"]), r["method"]), {})[int(r["split"])] = r
    keys = sorted({(d, n) for d, n, _ in by})
    methods = sorted({m for _, _, m in by})
    print("| data | n | method | splits | RMSE | test LL | coverage95 |")
    print("|---|---|---|---|---|---|---|")
    for d, n in keys:
        for m in methods:
            rows = by.get((d, n, m))
            if rows:
                vals = list(rows.values())
                print(f"| {d} | {n} | {m} | {len(vals)} | {_mean_se([r['rmse'] for r in vals])} "
                      f"| {_mean_se([r['test_ll'] for r in vals])} "
                      f"| {_mean_se([r['coverage95'] for r in vals])} |")
    print("\nPaired differences over the same splits (functional − weight-space), mean ± s.e. (z);"
          " RMSE: negative = functional better; LL: positive = functional better.\n")
    print("| data | n | pair | splits | ΔRMSE | ΔLL |")
    print("|---|---|---|---|---|---|")
    for d, n in keys:
        for f, w in PAIRS:
            a, b = by.get((d, n, f), {}), by.get((d, n, w), {})
            common = sorted(set(a) & set(b))
            if len(common) < 2:
                continue
            cells = []
            for col in ("rmse", "test_ll"):
                diff = np.array([a[s][col] - b[s][col] for s in common], dtype=float)
                se = diff.std(ddof=1) / math.sqrt(len(diff))
                cells.append(f"{diff.mean():+.3f} ± {se:.3f} ({diff.mean() / se:+.1f})")
            print(f"| {d} | {n} | {f} − {w} | {len(common)} | {cells[0]} | {cells[1]} |")


def plot(path: Path, out: Path) -> None:
    """Test RMSE and log-likelihood against the training size, one column per data set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_records([path])
    datasets = sorted({r["dataset"] for r in records})
    methods = sorted({r["method"] for r in records})
    fig, axes = plt.subplots(2, len(datasets), figsize=(4.5 * len(datasets), 7), squeeze=False)
    for j, d in enumerate(datasets):
        for i, col in enumerate(("rmse", "test_ll")):
            ax = axes[i, j]
            sampler_means = []
            for m in methods:
                rows = [r for r in records if r["dataset"] == d and r["method"] == m]
                sizes = sorted({int(r["n"]) for r in rows})
                vals = [np.array([r[col] for r in rows if int(r["n"]) == n], float)
                        for n in sizes]
                mean = [v.mean() for v in vals]
                se = [v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else 0 for v in vals]
                if m != "exact_gp":
                    sampler_means += mean
                style = "--" if m == "exact_gp" else ("-" if m.startswith("f") else ":")
                ax.errorbar(sizes, mean, se, label=m, ls=style, marker="o", ms=3, capsize=2)
            ax.set_xscale("log")
            all_sizes = sorted({int(r["n"]) for r in records if r["dataset"] == d})
            ax.set_xticks(all_sizes, [str(n) for n in all_sizes])
            ax.minorticks_off()
            ax.set_title(f"{d}: test {'RMSE' if col == 'rmse' else 'log-likelihood'}")
            ax.set_xlabel("training rows")
            if col == "test_ll":  # the GP's overconfident small fits would flatten the rest
                span = max(sampler_means) - min(sampler_means)
                ax.set_ylim(min(sampler_means) - 0.3 * span, max(sampler_means) + 0.3 * span)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None,
                    help="folder of the UCI data sets "
                        "(default: $SKFBNN_DATA_HOME, else fetched)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--datasets", nargs="+", default=["bostonHousing", "concrete"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[20, 50])
    ap.add_argument("--splits", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--methods", nargs="+",
                    default=["sghmc", "fsghmc", "sgld", "fsgld", "exact_gp"])
    ap.add_argument("--params", default="{}", help="JSON parameters of every sampler")
    ap.add_argument("--label", default="", help="suffix of the method names in the records")
    ap.add_argument("--summary", action="store_true", help="only print the tables")
    ap.add_argument("--plot", type=Path, help="only draw the figure to this file")
    args = ap.parse_args()
    if args.plot:
        plot(args.out, args.plot)
    elif args.summary:
        summary(args.out)
    else:
        run(args)


if __name__ == "__main__":
    main()
