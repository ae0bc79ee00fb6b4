"""1-D extrapolation (Wu, Xuan & Lu 2025, section 5.1): posterior bands of six methods.

Twenty noisy observations of ``sin(3 pi x) + 0.3 cos(9 pi x) + 0.5 sin(7 pi x)``
on [-0.75, -0.25] and [0.25, 0.75]; a 2 x 100 tanh network; the functional
samplers use a GP prior with an RBF kernel pre-trained on the 20 points and
80 measurement points per step (40 training inputs, 40 uniform on [-1, 1]).
2000 burn-in steps, then 40 draws 100 steps apart, in each of 2 chains; step size
1e-3 per datum, decayed by 0.9 nine times over the run (the paper's schedule shape).

Beside the four samplers, two optimisation-based baselines on the same network,
the same N(0, 1) weight prior (BBB) and the same fixed noise std 0.5: Bayes by
backprop (mean-field Gaussian VI, closed-form KL, one Monte-Carlo weight draw
per step) and a deep ensemble of 5 members trained by maximum likelihood (no
weight prior, all 20 points: no held-out rows; with a fixed noise there are no
variance heads, so the members' spread is all the epistemic std). Both: 5000
full-batch Adam steps (batch of all 20 points), learning rate 0.01 held for
half the run and then cosine-annealed to zero; BBB predicts with 80 weight
draws, as many as the samplers keep (2 x 40).

Usage: python examples/plot_extrapolation.py [--out docs/images/extrapolation.png]
"""

from __future__ import annotations

import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from skfbnn import (  # noqa: E402
    BBBRegressor,
    DeepEnsembleRegressor,
    FunctionalSGHMCRegressor,
    FunctionalSGLDRegressor,
    SGHMCRegressor,
    SGLDRegressor,
)
from skfbnn.datasets import make_oscillation, oscillation_function  # noqa: E402

COMMON = dict(
    hidden_layer_sizes=(100, 100), activation="tanh", n_chains=2, n_burnin=2000,
    n_samples=40, thinning=100, noise_std=0.5, normalize_y=False, random_state=0,
    step_size=1e-3, schedule="decay",
)
FUNCTIONAL = dict(n_measurement_points=80, measurement_train_fraction=0.5,
                  measurement_margin=1 / 6, prior_fit_iter=100)
MODELS = {
    "fSGLD": FunctionalSGLDRegressor(**COMMON, **FUNCTIONAL),
    "fSGHMC": FunctionalSGHMCRegressor(**{**COMMON, "step_size": 1e-4}, **FUNCTIONAL),
    "SGLD": SGLDRegressor(**COMMON),
    "SGHMC": SGHMCRegressor(**{**COMMON, "step_size": 1e-4}),
}
OPTIMISED = dict(
    hidden_layer_sizes=(100, 100), activation="tanh", noise_std=0.5, normalize_y=False,
    random_state=0, n_iter=5000, batch_size=20, learning_rate=0.01, lr_schedule="cosine",
)
MODELS["BBB"] = BBBRegressor(**OPTIMISED, prior_std=1.0, n_mc=1, n_samples=80)
MODELS["Deep ensemble"] = DeepEnsembleRegressor(**OPTIMISED, n_estimators=5, prior_std=None,
                                               validation_fraction=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/images/extrapolation.png")
    args = parser.parse_args()
    X, y = make_oscillation(20, noise_std=0.5, random_state=0)
    grid = np.linspace(-1, 1, 300)[:, None]
    fig, axes = plt.subplots(3, 2, figsize=(9, 9), sharex=True, sharey=True)
    for ax, (name, model) in zip(axes.ravel(), MODELS.items(), strict=True):
        start = time.perf_counter()
        model.fit(X, y)
        mean = model.predict(grid)
        std = model.predict_std(grid, kind="epistemic")
        elapsed = time.perf_counter() - start
        ax.plot(grid, oscillation_function(grid.ravel()), color="green", label="truth")
        ax.plot(grid, mean, color="C0", label="posterior mean")
        for k, alpha in ((1, 0.35), (2, 0.15)):
            ax.fill_between(grid.ravel(), mean - k * std, mean + k * std, color="C0",
                            alpha=alpha, lw=0)
        ax.scatter(X, y, color="black", s=12, zorder=3)
        r_hat = model.diagnostics_.get("max_r_hat")
        r_hat_text = "no R-hat" if r_hat is None else f"max R-hat {r_hat:.2f}"
        ax.set_title(f"{name}  ({elapsed:.0f} s, {r_hat_text})", fontsize=10)
        ax.set_ylim(-4, 4)
        print(f"{name}: {elapsed:.1f} s, mean epistemic std in the gap "
              f"{std[(np.abs(grid.ravel()) < 0.25)].mean():.2f}, outside "
              f"{std[np.abs(grid.ravel()) > 0.75].mean():.2f}, "
              + ("max R-hat n/a" if r_hat is None else f"max R-hat {r_hat:.2f}"))
    axes[0, 0].legend(loc="lower left", fontsize=8)
    fig.suptitle("1-D extrapolation: mean and +-1, 2 epistemic std")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
