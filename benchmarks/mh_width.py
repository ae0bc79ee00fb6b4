"""Acceptance rate and ESS per step of pCN, pCNL and MALA versus the width (paper Figs 1-2).

The setting of Pezzetti et al. (2024), sized for a CPU: ``--n`` rows of a UCI data set
(inputs and targets standardised), one hidden GELU layer of each width, the NTK scales
(sqrt 2, 0.1; readout 1, 0.1), a Gaussian likelihood with the paper's fixed noise std 0.1
(in standardised units), the reparametrised posterior, fixed step sizes (no adaptation).
As in the paper the samplers are compared at an equal noise coefficient ``beta``: pCN and
pCNL use ``beta`` itself, MALA ``h = beta^2 / 2`` (so that ``sqrt(2h) = beta``).

ESS per step is measured on the predictions at ``--n-test`` held-out rows: ``ess_bulk``
(rank-normalised, all chains; the library's diagnostics) divided by the number of kept
steps, averaged over the points; the paper's definition (one chain, plain
autocorrelation ESS of random projections, divided by the stored samples) is reported
beside it as ``ess_chain``.

Usage: python benchmarks/mh_width.py --widths 64 256 1024 2048 --n-steps 400
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from skfbnn import MALARegressor, PCNLRegressor, PCNRegressor
from skfbnn.datasets import load_uci
from skfbnn.diagnostics import ess_bulk, ess_mean

SAMPLERS = {"pcn": PCNRegressor, "pcnl": PCNLRegressor, "mala": MALARegressor}


def _data(name: str, n: int, n_test: int, data_home: str):
    X, y = load_uci(name, data_home=data_home, return_X_y=True)
    X, y = X[: n + n_test], y[: n + n_test]
    X = (X - X[:n].mean(0)) / X[:n].std(0)
    y = (y - y[:n].mean()) / y[:n].std()
    return X[:n], y[:n], X[n:]


def run_one(method, width, beta, X, y, X_test, args):
    cls = SAMPLERS[method]
    step = beta**2 / 2 if method == "mala" else beta
    start = time.perf_counter()
    est = cls(hidden_layer_sizes=(width,), activation="gelu", noise_std=0.1,
              normalize_y=False, step_size=step, adapt_step_size=False,
              n_chains=args.chains, n_burnin=args.burnin, n_samples=args.n_steps,
              thinning=1, random_state=args.seed, device="cpu").fit(X, y)
    seconds = time.perf_counter() - start
    f, _ = est.predict_draws(X_test)
    f = f.reshape(args.chains, args.n_steps, -1)
    ess = np.array([ess_bulk(f[..., i]) for i in range(f.shape[-1])]) / f[..., 0].size
    chain = np.array([[ess_mean(f[c : c + 1, :, i]) for i in range(f.shape[-1])]
                      for c in range(args.chains)]) / args.n_steps
    return {"method": method, "width": width, "beta": beta, "step_size": step,
            "acceptance": float(est.diagnostics_["acceptance_rate"].mean()),
            "ess_per_step": float(np.nanmean(ess)), "ess_min": float(np.nanmin(ess)),
            "ess_chain": float(np.nanmean(chain)), "seconds": round(seconds, 1)}


def plot(rows, betas, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(betas), figsize=(4 * len(betas), 6.5), squeeze=False)
    for j, beta in enumerate(betas):
        for method in SAMPLERS:
            sel = sorted((r for r in rows if r["method"] == method and r["beta"] == beta),
                         key=lambda r: r["width"])
            widths = [r["width"] for r in sel]
            axes[0, j].plot(widths, [r["acceptance"] for r in sel], "o-", label=method)
            axes[1, j].plot(widths, [r["ess_per_step"] for r in sel], "o-", label=method)
        axes[0, j].set_title(f"beta = {beta}")
        for i, label in enumerate(("acceptance rate", "ESS per step (bulk)")):
            axes[i, j].set_xscale("log", base=2)
            axes[i, j].set_xlabel("width")
            axes[i, j].set_ylabel(label)
        axes[1, j].set_yscale("log")
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kin8nm")
    parser.add_argument("--data-home", default="../shared/data/uci")
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--n-test", type=int, default=32)
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 256, 1024, 2048])
    parser.add_argument("--betas", type=float, nargs="+", default=[0.2, 0.1, 0.01])
    parser.add_argument("--methods", nargs="+", default=list(SAMPLERS))
    parser.add_argument("--n-steps", type=int, default=400, help="kept steps per chain")
    parser.add_argument("--burnin", type=int, default=100)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", default="benchmarks/results/mh_width.csv")
    parser.add_argument("--figure", default="docs/figures/mh_width.png")
    args = parser.parse_args()
    X, y, X_test = _data(args.dataset, args.n, args.n_test, args.data_home)
    rows = []
    print("| method | width | beta | acceptance | ESS/step (bulk) | min | ESS/step (chain) | s |")
    print("|---|---|---|---|---|---|---|---|")
    for beta in args.betas:
        for method in args.methods:
            for width in args.widths:
                r = run_one(method, width, beta, X, y, X_test, args)
                rows.append(r)
                print(f"| {method} | {width} | {beta} | {r['acceptance']:.3f} | "
                      f"{r['ess_per_step']:.4f} | {r['ess_min']:.4f} | {r['ess_chain']:.4f} "
                      f"| {r['seconds']} |", flush=True)
    Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, args.betas, args.figure)


if __name__ == "__main__":
    main()
