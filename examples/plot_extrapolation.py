"""1-D extrapolation (Wu, Xuan & Lu 2025, section 5.1): posterior bands beside an exact GP.

Twenty noisy observations (noise std 0.5) of ``sin(3 pi x) + 0.3 cos(9 pi x) +
0.5 sin(7 pi x)`` on [-0.75, -0.25] and [0.25, 0.75]. The four samplers run at
their estimator defaults (one hidden layer of 50 tanh units, learned noise,
adaptive preconditioner, 4 chains; functional samplers: scaled RBF GP prior
fitted to the 20 points, 100 measurement points per step, half training inputs,
half uniform in the input box widened by 10%). The exact GP is scikit-learn's
``GaussianProcessRegressor(ConstantKernel() * RBF() + WhiteKernel(),
normalize_y=True)`` with restarts, the same kind of kernel as the functional
prior. Beside them, two optimisation-based baselines on a 2 x 100 network with
the fixed noise std 0.5 (the figure of the template issue): Bayes by backprop
(N(0, 1) weight prior, 80 prediction draws) and a deep ensemble of 5 members
trained by maximum likelihood on all 20 points; both 5000 full-batch Adam
steps, learning rate 0.01 held for half the run, then cosine-annealed to zero.

Printed per method: RMSE of the predictive mean to the true function in the
data region, and the mean epistemic std in the data region, in the gap
(abs(x) < 0.25) and outside the data (abs(x) > 0.75), with the ratios
gap / data and outside / data.

Usage: python examples/plot_extrapolation.py [--out docs/images/extrapolation.png]
       python examples/plot_extrapolation.py --only ifBDE --set random_function=True
       python examples/plot_extrapolation.py --only "Deep ensemble" ifBDE \
           --set anchored=True prior_std=1.0
       python examples/plot_extrapolation.py --only BBB "Deep ensemble" --defaults
       python examples/plot_extrapolation.py --only "exact GP" ifBDE --data-seed 3
       (``--only``: these models, printed, no figure; ``--set``: parameters of every model
       fitted, values read as Python literals, e.g. ``prior_std=None``; ``--defaults``: BBB
       and the deep ensemble at their estimator defaults; ``--data-seed``: another draw of
       the 20 points)
"""

from __future__ import annotations

import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel  # noqa: E402

from skfbnn import (  # noqa: E402
    BBBRegressor,
    DeepEnsembleRegressor,
    FBNNRegressor,
    FunctionalSGHMCRegressor,
    FunctionalSGLDRegressor,
    IFBDERegressor,
    IFBNNRegressor,
    SGHMCRegressor,
    SGLDRegressor,
)
from skfbnn.datasets import make_oscillation, oscillation_function  # noqa: E402

MODELS = {
    "fSGLD": FunctionalSGLDRegressor(random_state=0),
    "fSGHMC": FunctionalSGHMCRegressor(random_state=0),
    "SGLD": SGLDRegressor(random_state=0),
    "SGHMC": SGHMCRegressor(random_state=0),
}
OPTIMISED = dict(
    hidden_layer_sizes=(100, 100), activation="tanh", noise_std=0.5, normalize_y=False,
    random_state=0, n_iter=5000, batch_size=20, learning_rate=0.01, lr_schedule="cosine",
)
MODELS["BBB"] = BBBRegressor(**OPTIMISED, prior_std=1.0, n_mc=1, n_samples=80)
MODELS["Deep ensemble"] = DeepEnsembleRegressor(**OPTIMISED, n_estimators=5, prior_std=None,
                                               validation_fraction=0.0)
MODELS["fBNN"] = FBNNRegressor(random_state=0)
MODELS["ifBNN"] = IFBNNRegressor(random_state=0)
MODELS["ifBDE"] = IFBDERegressor(random_state=0)


class ExactGP:
    """scikit-learn's exact GP (best marginal likelihood over three noise starts) with the
    estimators' ``predict`` / ``predict_std(kind="epistemic")`` interface."""

    diagnostics_: dict = {}

    def fit(self, X, y):
        fits = []
        for noise in (1.0, 0.1, 0.01):
            kernel = ConstantKernel() * RBF() + WhiteKernel(noise)
            gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=2,
                                          random_state=0).fit(X, y)
            fits.append((gp.log_marginal_likelihood_value_, gp))
        self.gp_ = max(fits, key=lambda f: f[0])[1]
        return self

    def predict(self, X):
        return self.gp_.predict(X)

    def predict_std(self, X, kind="epistemic"):
        total = self.gp_.predict(X, return_std=True)[1]
        noise = self.gp_.kernel_.k2.noise_level * self.gp_._y_train_std**2
        return np.sqrt(np.maximum(total**2 - noise, 0.0))


def parse(item: str):
    """``name=value`` with the value read as a Python literal when it is one."""
    import ast

    name, _, text = item.partition("=")
    try:
        return name, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return name, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/images/extrapolation.png")
    parser.add_argument("--only", nargs="*", help="fit only these models (no figure)")
    parser.add_argument("--set", nargs="*", help="parameter=value for every model fitted")
    parser.add_argument("--defaults", action="store_true",
                        help="BBB and the deep ensemble at their estimator defaults instead of "
                             "the template issue's 2 x 100 set-up")
    parser.add_argument("--data-seed", type=int, default=0,
                        help="seed of the 20 noisy points (the figure: 0)")
    args = parser.parse_args()
    if args.defaults:
        MODELS["BBB"] = BBBRegressor(random_state=0)
        MODELS["Deep ensemble"] = DeepEnsembleRegressor(random_state=0)
    X, y = make_oscillation(20, noise_std=0.5, random_state=args.data_seed)
    grid = np.linspace(-1, 1, 400)[:, None]
    x = grid.ravel()
    data = ((np.abs(x) >= 0.25) & (np.abs(x) <= 0.75))
    regions = {"gap": np.abs(x) < 0.25, "outside": np.abs(x) > 0.75}
    models = {"exact GP": ExactGP(), **MODELS}
    if args.only:
        models = {k: v for k, v in models.items() if k in args.only}
    fig, axes = plt.subplots(5, 2, figsize=(9, 14), sharex=True, sharey=True)
    for ax, (name, model) in zip(axes.ravel()[: len(models)], models.items(), strict=True):
        if args.set:
            model.set_params(**dict(parse(kv) for kv in args.set))
        start = time.perf_counter()
        model.fit(X, y)
        mean = model.predict(grid)
        std = model.predict_std(grid, kind="epistemic")
        elapsed = time.perf_counter() - start
        ax.plot(grid, oscillation_function(x), color="green", label="truth")
        ax.plot(grid, mean, color="C0", label="posterior mean")
        for k, alpha in ((1, 0.35), (2, 0.15)):
            ax.fill_between(x, mean - k * std, mean + k * std, color="C0", alpha=alpha, lw=0)
        ax.scatter(X, y, color="black", s=12, zorder=3)
        rmse = float(np.sqrt(np.mean((mean[data] - oscillation_function(x[data])) ** 2)))
        in_data = std[data].mean()
        ratios = {k: std[r].mean() / in_data for k, r in regions.items()}
        ax.set_title(f"{name}: RMSE {rmse:.2f}, std gap/out x{ratios['gap']:.1f}/"
                     f"x{ratios['outside']:.1f}", fontsize=10)
        ax.set_ylim(-4, 4)
        r_hat = model.diagnostics_.get("max_r_hat")
        print(f"{name}: {elapsed:.1f} s, RMSE to truth in the data region {rmse:.2f}, "
              f"epistemic std data {in_data:.2f} gap {std[regions['gap']].mean():.2f} "
              f"outside {std[regions['outside']].mean():.2f} (ratios {ratios['gap']:.2f}, "
              f"{ratios['outside']:.2f})"
              + ("" if r_hat is None else f", max R-hat {r_hat:.2f}"), flush=True)
    if args.only:
        return
    axes[0, 0].legend(loc="lower left", fontsize=8)
    fig.suptitle("1-D extrapolation: mean and +-1, 2 epistemic std")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
