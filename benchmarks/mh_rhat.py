"""R-hat over chains versus the number of steps, and principal-component traces (paper
Figs 3-6), for pCN, pCNL and MALA at one width.

Same setting as ``mh_width.py`` (``--n`` standardised UCI rows, one hidden GELU layer,
noise std 0.1, reparametrised posterior, fixed equal noise coefficient ``beta``; MALA with
``h = beta^2 / 2``), ``--chains`` chains, every step kept. The R-hat is the library's
rank-normalised split R-hat of the predictions at ``--n-test`` held-out rows, its maximum
over the points, computed on the first ``t`` steps after burn-in for growing ``t``. The
traces are the projections of the predictions onto their first two principal components
(computed from all chains' draws together), one line per chain.

Usage: python benchmarks/mh_rhat.py --width 512 --n-steps 1000
"""

from __future__ import annotations

import argparse

import numpy as np
from mh_width import SAMPLERS, _data  # sibling script

from skfbnn.diagnostics import split_rhat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kin8nm")
    parser.add_argument("--data-home", default="../shared/data/uci")
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--n-test", type=int, default=32)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--n-steps", type=int, default=1000)
    parser.add_argument("--burnin", type=int, default=200)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--figure", default="docs/figures/mh_rhat.png")
    args = parser.parse_args()
    X, y, X_test = _data(args.dataset, args.n, args.n_test, args.data_home)
    checkpoints = np.linspace(args.n_steps // 4, args.n_steps, 4).astype(int)
    results = {}
    print("| method | acceptance | " + " | ".join(f"R-hat @ {t}" for t in checkpoints) + " |")
    print("|---|---|" + "---|" * len(checkpoints))
    for method, cls in SAMPLERS.items():
        step = args.beta**2 / 2 if method == "mala" else args.beta
        est = cls(hidden_layer_sizes=(args.width,), activation="gelu", noise_std=0.1,
                  normalize_y=False, step_size=step, adapt_step_size=False,
                  n_chains=args.chains, n_burnin=args.burnin, n_samples=args.n_steps,
                  thinning=1, random_state=0, device="cpu").fit(X, y)
        f, _ = est.predict_draws(X_test)
        f = f.reshape(args.chains, args.n_steps, -1)
        rhat = [float(np.nanmax(split_rhat(f[:, :t]))) for t in checkpoints]
        results[method] = f
        acc = est.diagnostics_["acceptance_rate"].mean()
        print(f"| {method} | {acc:.3f} | " + " | ".join(f"{r:.3f}" for r in rhat) + " |",
              flush=True)
    _plot(results, args)


def _plot(results, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 2, figsize=(10, 2.6 * len(results)), squeeze=False)
    for row, (method, f) in enumerate(results.items()):
        flat = f.reshape(-1, f.shape[-1])
        centred = flat - flat.mean(0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        pcs = (f - flat.mean(0)) @ vt[:2].T  # (chains, steps, 2)
        for k in range(2):
            for c in range(f.shape[0]):
                axes[row, k].plot(pcs[c, :, k], lw=0.6)
            axes[row, k].set_title(f"{method}: PC {k + 1} (width {args.width}, "
                                   f"beta {args.beta})")
            axes[row, k].set_xlabel("step after burn-in")
    fig.tight_layout()
    fig.savefig(args.figure, dpi=100)


if __name__ == "__main__":
    main()
