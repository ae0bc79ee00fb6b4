"""GP hyperparameter pre-fit: L-BFGS (``GPPrior.fit``) against the former 100 Adam steps.

For each UCI set (training rows of split 0, inputs and target standardised with their own
statistics, at most 1000 rows: the first 1000 of a seeded permutation, the same for both
fits) fits the default prior (scaled ARD RBF kernel with median-heuristic lengthscales,
constant mean, Gaussian noise starting at variance 0.1) twice:

* ``adam``: what ``GPPrior.fit`` did before issue 9, 100 Adam steps (learning rate 0.05) on
  gpytorch's ``ExactMarginalLogLikelihood`` over the raw hyperparameters;
* ``lbfgs``: ``GPPrior.fit`` with ``prior_fit_iter=100`` (scipy's L-BFGS-B, at most 100
  iterations, stopping once converged).

and prints the final negative log marginal likelihood per data point (lower is better), computed
independently of both fits, with the fit time (one torch thread).

Usage: python benchmarks/bench_gp_prefit.py [--data-home shared/data/uci] [--datasets ...]
"""

from __future__ import annotations

import argparse
import math
import time

import gpytorch
import numpy as np
import torch

from skfbnn.datasets import load_uci_split
from skfbnn.priors.gp import GPPrior, make_kernel

DATASETS = ("yacht", "energy", "bostonHousing", "concrete", "wine-quality-red")
F64 = torch.float64


def standardised(name: str, data_home: str | None) -> tuple[torch.Tensor, torch.Tensor]:
    """At most 1000 standardised training rows of split 0, targets as a column."""
    X, _, y, _ = load_uci_split(name, 0, data_home=data_home)
    std = X.std(0)
    X = torch.tensor((X - X.mean(0)) / np.where(std > 0, std, 1.0), dtype=F64)
    y = torch.tensor((y - y.mean()) / y.std(), dtype=F64).unsqueeze(-1)
    if len(X) > 1000:
        idx = torch.randperm(len(X), generator=torch.Generator().manual_seed(0))[:1000]
        X, y = X[idx], y[idx]
    return X, y


def neg_mll_per_point(gp: GPPrior, X: torch.Tensor, y: torch.Tensor) -> float:
    """``-log N(y; m, K + s^2 I) / n`` by a plain float64 Cholesky, summed over outputs."""
    mean, K = gp.mean_cov(X)
    C = K + (gp.noise_std**2)[:, None, None] * torch.eye(len(X), dtype=F64)
    chol = torch.linalg.cholesky(C)
    r = (y.T - mean).unsqueeze(-1)
    white = torch.linalg.solve_triangular(chol, r, upper=False).squeeze(-1)
    logdet = 2 * chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    nll = 0.5 * (white.pow(2).sum(-1) + logdet + len(X) * math.log(2 * math.pi))
    return float(nll.sum()) / len(X)


def adam_fit(X: torch.Tensor, y: torch.Tensor, n_steps: int = 100) -> GPPrior:
    """The former pre-fit: Adam on gpytorch's exact marginal likelihood."""
    batch = torch.Size([1])
    gp = GPPrior(make_kernel(None, X, 1), 1, constant_mean=True)
    likelihood = gpytorch.likelihoods.GaussianLikelihood(batch_shape=batch).double()
    likelihood.noise = 0.1

    class ExactGP(gpytorch.models.ExactGP):
        def __init__(self):
            super().__init__(X.expand(1, *X.shape), y.T, likelihood)
            self.covar_module = gp.kernel
            self.mean_module = gpytorch.means.ConstantMean(batch_shape=batch).double()

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(
                self.mean_module(x), self.covar_module(x)
            )

    model = ExactGP()
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    with gpytorch.settings.max_cholesky_size(100_000):
        for _ in range(n_steps):
            optimizer.zero_grad()
            (-mll(model(*model.train_inputs), y.T).sum()).backward()
            optimizer.step()
    gp.mean = model.mean_module.constant.detach().reshape(1)
    gp.noise_std = likelihood.noise.detach().reshape(1).sqrt()
    return gp


def lbfgs_fit(X: torch.Tensor, y: torch.Tensor) -> GPPrior:
    """The current pre-fit with the estimators' default ``prior_fit_iter=100``."""
    gp = GPPrior(make_kernel(None, X, 1), 1, constant_mean=True)
    return gp.fit(X, y, 100, torch.Generator().manual_seed(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None,
                        help="folder of the UCI data sets (default: $SKFBNN_DATA_HOME)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    adam_fit(*standardised(args.datasets[0], args.data_home), n_steps=1)  # warm-up imports
    print(f"torch {torch.__version__}, gpytorch {gpytorch.__version__}, one thread; "
          "negative log marginal likelihood per point (lower is better), fit seconds")
    print(f"{'dataset':18s} {'n':>5s} {'adam x100':>10s} {'s':>6s} {'lbfgs':>10s} {'s':>6s}")
    for name in args.datasets:
        X, y = standardised(name, args.data_home)
        row = []
        for fit in (adam_fit, lbfgs_fit):
            start = time.perf_counter()
            gp = fit(X, y)
            row.append((neg_mll_per_point(gp, X, y), time.perf_counter() - start))
        print(f"{name:18s} {len(X):5d} {row[0][0]:10.4f} {row[0][1]:6.2f} "
              f"{row[1][0]:10.4f} {row[1][1]:6.2f}", flush=True)


if __name__ == "__main__":
    main()
