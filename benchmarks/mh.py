"""The Metropolis-Hastings samplers for wide networks (Pezzetti et al. 2024), one subcommand each.

``width``: acceptance and ESS per step of pCN, pCNL and MALA versus the width (the paper's
Figures 1-2). ``--n`` rows of a UCI data set (inputs and targets standardised), one hidden GELU
layer of each width, the NTK scales (sqrt 2, 0.1; readout 1, 0.1), a Gaussian likelihood with
the paper's fixed noise std 0.1, the reparametrised posterior, fixed steps (no adaptation),
compared at an equal noise coefficient ``beta``: pCN and pCNL use ``beta``, MALA
``h = beta^2 / 2``. ESS per step is measured on the predictions at ``--n-test`` held-out rows:
``ess_bulk`` (rank-normalised, all chains) per kept draw, averaged over the points, and the
paper's single-chain autocorrelation ESS per stored draw (``ess_chain``).

``dimension``: acceptance versus dimension on the reference measure itself (a flat likelihood,
so the target is ``N(0, I)``): pCN and pCNL accept every proposal in any dimension, MALA at a
fixed step does not preserve ``N(0, I)``.

``rhat``: R-hat over chains versus the number of steps, and principal-component traces (the
paper's Figures 3-6), at one width, in the setting of ``width``.

``classification``: ``PCNClassifier``'s two class-probability maps (``proba="clip"`` and
``"argmax"``) on the same draws, scikit-learn's bundled data, stratified K-fold.

Usage:
    python benchmarks/mh.py width --widths 64 128 256 512 1024 2048 --n-steps 300 --burnin 100
    python benchmarks/mh.py dimension --beta 0.2 --dims 10 1000 100000 --n-steps 50
    python benchmarks/mh.py rhat --width 512 --n-steps 1000 --burnin 200
    python benchmarks/mh.py classification --folds 3 --hidden-layer-sizes 50 --activation tanh
The pCN / MALA throughput is ``python benchmarks/speed.py mh``.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def samplers() -> dict:
    from skfbnn import MALARegressor, PCNLRegressor, PCNRegressor

    return {"pcn": PCNRegressor, "pcnl": PCNLRegressor, "mala": MALARegressor}


def _data(name: str, n: int, n_test: int, data_home: str | None):
    from skfbnn.datasets import load_uci
    from skfbnn.datasets._fetch import data_home_or_fetch

    X, y = load_uci(name, data_home=data_home_or_fetch(data_home, name), return_X_y=True)
    X, y = X[: n + n_test], y[: n + n_test]
    X = (X - X[:n].mean(0)) / X[:n].std(0)
    y = (y - y[:n].mean()) / y[:n].std()
    return X[:n], y[:n], X[n:]


def _fit(method: str, width: int, beta: float, X, y, args, n_chains: int):
    step = beta**2 / 2 if method == "mala" else beta
    return samplers()[method](
        hidden_layer_sizes=(width,), activation="gelu", noise_std=0.1, normalize_y=False,
        step_size=step, adapt_step_size=False, n_chains=n_chains, n_burnin=args.burnin,
        n_samples=args.n_steps, thinning=1, random_state=args.seed, device="cpu").fit(X, y)


# -- width ---------------------------------------------------------------------------------

def width_one(method, width, beta, X, y, X_test, args) -> dict:
    from skfbnn.diagnostics import ess_bulk, ess_mean

    start = time.perf_counter()
    est = _fit(method, width, beta, X, y, args, args.chains)
    seconds = time.perf_counter() - start
    f, _ = est.predict_draws(X_test)
    f = f.reshape(args.chains, args.n_steps, -1)
    ess = np.array([ess_bulk(f[..., i]) for i in range(f.shape[-1])]) / f[..., 0].size
    chain = np.array([[ess_mean(f[c : c + 1, :, i]) for i in range(f.shape[-1])]
                      for c in range(args.chains)]) / args.n_steps
    return {"method": method, "width": width, "beta": beta,
            "step_size": beta**2 / 2 if method == "mala" else beta,
            "acceptance": float(est.diagnostics_["acceptance_rate"].mean()),
            "ess_per_step": float(np.nanmean(ess)), "ess_min": float(np.nanmin(ess)),
            "ess_chain": float(np.nanmean(chain)), "seconds": round(seconds, 1)}


def width_plot(rows, betas, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(betas), figsize=(4 * len(betas), 6.5), squeeze=False)
    for j, beta in enumerate(betas):
        for method in samplers():
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


def cmd_width(args) -> None:
    X, y, X_test = _data(args.dataset, args.n, args.n_test, args.data_home)
    rows = []
    print("| method | width | beta | acceptance | ESS/step (bulk) | min | ESS/step (chain) | s |")
    print("|---|---|---|---|---|---|---|---|")
    for beta in args.betas:
        for method in args.methods:
            for width in args.widths:
                r = width_one(method, width, beta, X, y, X_test, args)
                rows.append(r)
                print(f"| {method} | {width} | {beta} | {r['acceptance']:.3f} | "
                      f"{r['ess_per_step']:.4f} | {r['ess_min']:.4f} | {r['ess_chain']:.4f} "
                      f"| {r['seconds']} |", flush=True)
    Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    width_plot(rows, args.betas, args.figure)


# -- dimension -----------------------------------------------------------------------------

def dimension_acceptance(module, dim: int, step: float, n_steps: int) -> float:
    """Mean acceptance of ``module``'s kernel on ``N(0, I)`` in ``dim`` dimensions."""
    import torch

    from skfbnn.inference.mh.kernel import MHState, evaluate, update

    class Flat:
        """``Phi = 0`` on ``R^D``."""

        step_scale = torch.ones(dim, dtype=torch.float64)

        def potential(self, phi):
            return torch.zeros(phi.shape[0], dtype=phi.dtype)

        def potential_and_grad(self, phi):
            return self.potential(phi), torch.zeros_like(phi)

    gen = torch.Generator().manual_seed(0)
    target = Flat()
    phi = torch.randn(4, dim, generator=gen, dtype=torch.float64)
    pot, grad = evaluate(target, phi, module.PROPOSAL.needs_grad)
    state = MHState(phi, None, pot, grad, torch.tensor(math.log(step), dtype=torch.float64),
                    0, target, torch.float64, module.PROPOSAL.max_step)
    total = 0.0
    for _ in range(n_steps):
        state, info = update(state, {}, gen, proposal=module.PROPOSAL)
        total += float(info.accepted.mean())
    return total / n_steps


def cmd_dimension(args) -> None:
    from skfbnn.inference.mh import mala, pcn, pcnl

    print("| beta | D | pCN | pCNL | MALA |")
    print("|---|---|---|---|---|")
    for beta in args.beta:
        for dim in args.dims:
            rates = [dimension_acceptance(pcn, dim, beta, args.n_steps),
                     dimension_acceptance(pcnl, dim, beta, args.n_steps),
                     dimension_acceptance(mala, dim, beta**2 / 2, args.n_steps)]
            print(f"| {beta} | {dim} | " + " | ".join(f"{r:.3f}" for r in rates) + " |",
                  flush=True)


# -- rhat ----------------------------------------------------------------------------------

def cmd_rhat(args) -> None:
    from skfbnn.diagnostics import split_rhat

    X, y, X_test = _data(args.dataset, args.n, args.n_test, args.data_home)
    checkpoints = np.linspace(args.n_steps // 4, args.n_steps, 4).astype(int)
    results = {}
    print("| method | acceptance | " + " | ".join(f"R-hat @ {t}" for t in checkpoints) + " |")
    print("|---|---|" + "---|" * len(checkpoints))
    for method in samplers():
        est = _fit(method, args.width, args.beta, X, y, args, args.chains)
        f, _ = est.predict_draws(X_test)
        f = f.reshape(args.chains, args.n_steps, -1)
        rhat = [float(np.nanmax(split_rhat(f[:, :t]))) for t in checkpoints]
        results[method] = f
        acc = est.diagnostics_["acceptance_rate"].mean()
        print(f"| {method} | {acc:.3f} | " + " | ".join(f"{r:.3f}" for r in rhat) + " |",
              flush=True)
    rhat_plot(results, args)


def rhat_plot(results, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 2, figsize=(10, 2.6 * len(results)), squeeze=False)
    for row, (method, f) in enumerate(results.items()):
        flat = f.reshape(-1, f.shape[-1])
        _, _, vt = np.linalg.svd(flat - flat.mean(0), full_matrices=False)
        pcs = (f - flat.mean(0)) @ vt[:2].T  # (chains, steps, 2)
        for k in range(2):
            for c in range(f.shape[0]):
                axes[row, k].plot(pcs[c, :, k], lw=0.6)
            axes[row, k].set_title(f"{method}: PC {k + 1} (width {args.width}, "
                                   f"beta {args.beta})")
            axes[row, k].set_xlabel("step after burn-in")
    fig.tight_layout()
    fig.savefig(args.figure, dpi=100)


# -- classification ------------------------------------------------------------------------

def cmd_classification(args) -> None:
    from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
    from sklearn.metrics import accuracy_score, log_loss
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    from skfbnn import PCNClassifier
    from skfbnn.metrics import expected_calibration_error

    loaders = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer,
               "digits": load_digits}
    network = {k: v for k, v in (("hidden_layer_sizes", args.hidden_layer_sizes),
                                 ("activation", args.activation)) if v is not None}
    if "hidden_layer_sizes" in network:
        network["hidden_layer_sizes"] = tuple(network["hidden_layer_sizes"])
    print("| data set | proba | accuracy | log loss | ECE |")
    print("|---|---|---|---|---|")
    for name in args.datasets:
        X, y = loaders[name](return_X_y=True)
        scores = {"clip": [], "argmax": []}
        folds = StratifiedKFold(args.folds, shuffle=True, random_state=0).split(X, y)
        for k, (train, test) in enumerate(folds):
            scaler = StandardScaler().fit(X[train])
            Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
            for proba in scores:
                est = PCNClassifier(proba=proba, random_state=k, device="cpu", **network)
                p = est.fit(Xtr, y[train]).predict_proba(Xte)
                scores[proba].append((accuracy_score(y[test], est.classes_[p.argmax(1)]),
                                      log_loss(y[test], p, labels=est.classes_),
                                      expected_calibration_error(y[test], p)))
        for proba, rows in scores.items():
            a = np.array(rows)
            mean, se = a.mean(0), a.std(0, ddof=1) / np.sqrt(len(a))
            cells = " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, se, strict=True))
            print(f"| {name} | {proba} | {cells} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def wide(p, n_steps, burnin, chains, figure):
        p.add_argument("--dataset", default="kin8nm")
        p.add_argument("--data-home", default=None,
                       help="folder of the UCI data sets "
                        "(default: $SKFBNN_DATA_HOME, else fetched)")
        p.add_argument("--n", type=int, default=256)
        p.add_argument("--n-test", type=int, default=32)
        p.add_argument("--n-steps", type=int, default=n_steps, help="kept steps per chain")
        p.add_argument("--burnin", type=int, default=burnin)
        p.add_argument("--chains", type=int, default=chains)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--figure", default=str(ROOT / "docs" / "images" / figure))

    p = sub.add_parser("width", help="acceptance and ESS per step versus the width")
    wide(p, 400, 100, 2, "mh_width.png")
    p.add_argument("--widths", type=int, nargs="+", default=[64, 256, 1024, 2048])
    p.add_argument("--betas", type=float, nargs="+", default=[0.2, 0.1, 0.01])
    p.add_argument("--methods", nargs="+", default=["pcn", "pcnl", "mala"])
    p.add_argument("--csv", default=str(ROOT / "benchmarks" / "results" / "mh" / "width.csv"))
    p.set_defaults(func=cmd_width)

    p = sub.add_parser("dimension", help="acceptance versus dimension on N(0, I)")
    p.add_argument("--beta", type=float, nargs="+", default=[0.2, 0.1])
    p.add_argument("--dims", type=int, nargs="+", default=[10, 1000, 100000, 1000000])
    p.add_argument("--n-steps", type=int, default=100)
    p.set_defaults(func=cmd_dimension)

    p = sub.add_parser("rhat", help="R-hat versus steps and principal-component traces")
    wide(p, 1000, 200, 4, "mh_rhat.png")
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--beta", type=float, default=0.1)
    p.set_defaults(func=cmd_rhat, seed=0)

    p = sub.add_parser("classification", help="PCNClassifier's two probability maps")
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--datasets", nargs="+", default=["iris", "wine", "breast_cancer", "digits"])
    p.add_argument("--hidden-layer-sizes", nargs="+", type=int, default=None)
    p.add_argument("--activation", default=None)
    p.set_defaults(func=cmd_classification)

    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
