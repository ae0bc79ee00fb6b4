"""Can a mean-field Gaussian carry the posterior's band shape? (1-D example, issue 7 goal 1)

Fits ``FunctionalSGHMCRegressor`` at its defaults to the 20 points of the 1-D extrapolation
example (``examples/plot_extrapolation.py``). For windows of consecutive kept draws of single
chains, it then compares two bands:

- the band of the draws themselves;
- the band of a mean-field Gaussian with the same per-weight means and variances (400 draws);
- the same with every standard deviation scaled by 0.2, so that the band in the data region is
  about the posterior's (a narrower mean-field ``q`` of the same shape).

The second keeps every weight's posterior marginal and drops the correlations between weights,
which is exactly what the weight-space family of BBB, fBNN and ifBNN cannot represent. Printed
per window: RMSE of the mean to the truth in the data region, the mean epistemic std in the
data region, the gap and outside, and the ratios gap / data and outside / data.

``--plot FILE`` also draws the first window of the first chain: its draws' band beside its
mean-field fit with std x 0.2.

Usage: python benchmarks/meanfield_bands.py [--chains 0 1 2] [--window 5] [--plot FILE]
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import torch

from skfbnn import FunctionalSGHMCRegressor
from skfbnn.datasets import make_oscillation, oscillation_function
from skfbnn.posterior import Particles

GRID = np.linspace(-1, 1, 400)
REGIONS = {"data": (np.abs(GRID) >= 0.25) & (np.abs(GRID) <= 0.75),
           "gap": np.abs(GRID) < 0.25, "outside": np.abs(GRID) > 0.75}


def predictive(est, draws: dict) -> tuple[np.ndarray, np.ndarray]:
    """Mean and epistemic std on ``GRID`` of ``est`` with its draws replaced by ``draws``."""
    view = copy.copy(est)
    view.posterior_ = Particles(draws)
    return view.predict(GRID[:, None]), view.predict_std(GRID[:, None], kind="epistemic")


def bands(est, draws: dict) -> str:
    """One table row's cells for ``est`` with its draws replaced by ``draws``."""
    mean, std = predictive(est, draws)
    data = REGIONS["data"]
    rmse = np.sqrt(np.mean((mean[data] - oscillation_function(GRID[data])) ** 2))
    width = {k: std[r].mean() for k, r in REGIONS.items()}
    return (f"{rmse:.2f} | {width['data']:.2f} / {width['gap']:.2f} / {width['outside']:.2f} | "
            f"{width['gap'] / width['data']:.2f} | {width['outside'] / width['data']:.2f}")


def mean_field(draws: dict, n: int, gen: torch.Generator, scale: float = 1.0) -> dict:
    """``n`` draws of the Gaussian with the draws' per-entry means and ``scale`` times their
    standard deviations."""
    out = {}
    for k, v in draws.items():
        noise = torch.randn(v.shape[0], n, *v.shape[2:], generator=gen, dtype=v.dtype)
        out[k] = v.mean(1, keepdim=True) + scale * v.std(1, keepdim=True) * noise
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--window", type=int, default=5, help="consecutive kept draws")
    parser.add_argument("--plot", help="write the figure of the first window here")
    args = parser.parse_args()
    X, y = make_oscillation(20, noise_std=0.5, random_state=0)
    est = FunctionalSGHMCRegressor(random_state=0).fit(X, y)
    draws = est.posterior_.draws
    n_kept = est.posterior_.shape[1]
    gen = torch.Generator().manual_seed(0)
    print("| draws | RMSE | epistemic std data / gap / outside | gap / data | outside / data |")
    print("|---|---|---|---|---|")
    print(f"| all chains, fSGHMC | {bands(est, draws)} |")
    for c in args.chains:
        for start in range(0, n_kept - args.window + 1, args.window * 2):
            window = {k: v[c:c + 1, start:start + args.window] for k, v in draws.items()}
            label = f"chain {c}, draws {start}-{start + args.window - 1}"
            print(f"| {label} | {bands(est, window)} |")
            print(f"| {label}: mean-field fit | {bands(est, mean_field(window, 400, gen))} |")
            print(f"| {label}: mean-field fit, std x 0.2 | "
                  f"{bands(est, mean_field(window, 400, gen, 0.2))} |")
    if args.plot:
        window = {k: v[args.chains[0]:args.chains[0] + 1, :args.window] for k, v in draws.items()}
        plot(est, X, y, {"posterior draws (one chain, 5 consecutive)": window,
                         "mean-field Gaussian of those draws, std x 0.2":
                         mean_field(window, 400, gen, 0.2)}, args.plot)


def plot(est, X, y, panels: dict, path: str) -> None:
    """One panel per set of draws: truth, data, mean and +-2 epistemic std."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(9, 3.4), sharey=True)
    for ax, (title, draws) in zip(axes, panels.items(), strict=True):
        mean, std = predictive(est, draws)
        ax.fill_between(GRID, mean - 2 * std, mean + 2 * std, color="C0", alpha=0.25, lw=0)
        ax.plot(GRID, oscillation_function(GRID), color="green", label="truth")
        ax.plot(GRID, mean, color="C0", label="mean")
        ax.scatter(X.ravel(), y, color="black", s=10, zorder=3)
        ax.set_title(title, fontsize=9)
        ax.set_ylim(-4, 4)
    axes[0].legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
