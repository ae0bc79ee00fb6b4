"""Gaussian-process priors on function values: the only module importing gpytorch.

A :class:`GPPrior` holds ``n_out`` independent latent GPs (a gpytorch kernel
with ``batch_shape=[n_out]``), optionally fits their hyperparameters by exact
marginal likelihood, and returns prior means and covariances in float64.
"""

from __future__ import annotations

import copy
import warnings

import gpytorch
import torch
from torch import Tensor

__all__ = ["KERNELS", "GPPrior", "make_kernel", "median_lengthscale"]

KERNELS = ("rbf", "matern12", "matern32", "matern52", "linear", "periodic")
_MAX_FIT_POINTS = 1000


def median_lengthscale(X: Tensor) -> Tensor:
    """Per-feature median absolute pairwise distance times ``sqrt(d)`` (fBNN's rule)."""
    Xs = X[: min(len(X), 500)]
    diff = (Xs.unsqueeze(0) - Xs.unsqueeze(1)).abs().reshape(-1, X.shape[1])
    med = diff.median(0).values * X.shape[1] ** 0.5
    return torch.where(med < 1e-6, torch.ones_like(med), med)


def make_kernel(
    kernel: None | str | gpytorch.kernels.Kernel, X: Tensor, n_out: int
) -> gpytorch.kernels.Kernel:
    """Build the prior kernel from the ``kernel`` parameter.

    ``None`` and ``"rbf"`` give ``ScaleKernel(RBFKernel(ard_num_dims=d))`` with
    median-heuristic lengthscales; the Matérn strings likewise; ``"linear"``
    and ``"periodic"`` the corresponding gpytorch kernels. A kernel instance
    is deep-copied, so the user's object is never modified.
    """
    if isinstance(kernel, gpytorch.kernels.Kernel):
        return copy.deepcopy(kernel)
    d = X.shape[1]
    batch = torch.Size([n_out])
    name = "rbf" if kernel is None else kernel
    if name == "linear":
        return gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.LinearKernel(batch_shape=batch), batch_shape=batch
        )
    if name == "rbf":
        base = gpytorch.kernels.RBFKernel(ard_num_dims=d, batch_shape=batch)
    elif name.startswith("matern"):
        nu = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}[name]
        base = gpytorch.kernels.MaternKernel(nu=nu, ard_num_dims=d, batch_shape=batch)
    else:  # periodic
        base = gpytorch.kernels.PeriodicKernel(ard_num_dims=d, batch_shape=batch)
    base.lengthscale = median_lengthscale(X).to(base.lengthscale)
    return gpytorch.kernels.ScaleKernel(base, batch_shape=batch)


class _ExactGP(gpytorch.models.ExactGP):
    def __init__(self, X, Y, likelihood, kernel, mean):
        super().__init__(X, Y, likelihood)
        self.covar_module = kernel
        self.mean_module = mean

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(
            self.mean_module(x), self.covar_module(x)
        )


class GPPrior:
    """``n_out`` independent GP priors with a shared input space.

    Parameters
    ----------
    kernel : gpytorch kernel
        Covariance function (batch shape ``[n_out]`` or broadcastable).
    n_out : int
        Number of latent functions (outputs, or classes).
    constant_mean : bool
        Learn a constant mean per latent function (else zero mean).
    """

    def __init__(self, kernel: gpytorch.kernels.Kernel, n_out: int, constant_mean: bool):
        self.kernel = kernel.double()
        self.n_out = n_out
        self.mean = torch.zeros(n_out, dtype=torch.float64)
        self.constant_mean = constant_mean
        self.noise_std = torch.full((n_out,), float("nan"), dtype=torch.float64)

    def to(self, device: torch.device) -> GPPrior:
        """Move the kernel and mean to ``device`` (float64 stays float64)."""
        self.kernel = self.kernel.to(device)
        self.mean = self.mean.to(device)
        self.noise_std = self.noise_std.to(device)
        return self

    def fit(
        self,
        X: Tensor,
        y: Tensor,
        n_iter: int,
        gen: torch.Generator,
        *,
        classification: bool = False,
        learning_rate: float = 0.05,
    ) -> GPPrior:
        """Fit kernel, mean and noise by exact marginal likelihood (Adam).

        Uses at most 1000 random training points (one marginal-likelihood
        step on 2000 points took 1.2 s on one CPU core, on 1000 about 0.15 s).
        For classification, ``y`` holds integer labels and the GP is fitted to
        the Dirichlet-transformed targets of Milios et al. (2018)
        (``DirichletClassificationLikelihood``).
        With ``n_iter=0`` the hyperparameters stay as they are.
        """
        if n_iter <= 0:
            return self
        device = self.mean.device
        if len(X) > _MAX_FIT_POINTS:
            idx = torch.randperm(len(X), generator=gen, device=gen.device)
            idx = idx[:_MAX_FIT_POINTS].to(X.device)
            X, y = X[idx], y[idx]
        X = X.to(device, torch.float64)
        batch = torch.Size([self.n_out])
        if classification:
            likelihood = gpytorch.likelihoods.DirichletClassificationLikelihood(
                y.to(device).long(), learn_additional_noise=True, dtype=torch.float64
            )
            targets = likelihood.transformed_targets
        else:
            likelihood = gpytorch.likelihoods.GaussianLikelihood(batch_shape=batch)
            likelihood.noise = 0.1
            targets = y.to(device, torch.float64).T.contiguous()
        mean = (
            gpytorch.means.ConstantMean(batch_shape=batch)
            if self.constant_mean
            else gpytorch.means.ZeroMean(batch_shape=batch)
        )
        inputs = X.expand(self.n_out, *X.shape)
        model = _ExactGP(inputs, targets, likelihood, self.kernel, mean).to(device).double()
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
        optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
        model.train()
        with _exact_settings(), warnings.catch_warnings():
            warnings.simplefilter("ignore", gpytorch.utils.warnings.NumericalWarning)
            for _ in range(n_iter):
                optimizer.zero_grad()
                loss = -mll(model(inputs), targets).sum()
                loss.backward()
                optimizer.step()
        self.kernel = model.covar_module
        for p in self.kernel.parameters():
            p.requires_grad_(False)
        if self.constant_mean:
            self.mean = model.mean_module.constant.detach().reshape(self.n_out).clone()
        if not classification:
            self.noise_std = likelihood.noise.detach().reshape(-1).sqrt().expand(
                self.n_out
            ).clone()
        return self

    @torch.no_grad()
    def mean_cov(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Prior mean ``(..., n_out, M)`` and covariance ``(..., n_out, M, M)``.

        ``X`` has shape ``(..., M, d)``.
        """
        X = X.to(self.mean.device, torch.float64).unsqueeze(-3)
        with _exact_settings():
            K = self.kernel(X).to_dense()
        K = K.expand(*K.shape[:-3], self.n_out, *K.shape[-2:])
        mean = self.mean.unsqueeze(-1).expand(*K.shape[:-1])
        return mean, K


def _exact_settings():
    """Exact Cholesky maths for every size we use (no CG, no fast approximations)."""
    return gpytorch.settings.max_cholesky_size(100_000)
