"""Exact oracles on a user's module that is not an MLP: fixed features held as buffers
followed by ``nn.Linear``, a model linear in its parameters.

With features ``phi(x) = cos(x P)`` (``P`` a fixed buffer) and the readout's bias, the
model is Bayesian linear regression on ``[phi(x), 1]``: full-batch SGLD and SGHMC have
the exact stationary laws of ``tests/inference/_harness.py``, and Bayes by backprop's
mean-field optimum has the posterior mean as its means and ``1 / Lambda_ii`` as its
variances. The module goes through the generic path (``functional_call`` + ``vmap``);
its buffer is never sampled.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from skfbnn import BBBRegressor, SGHMCRegressor, SGLDRegressor

from ..inference._harness import (
    SIGMA,
    TAU,
    moment_z_scores,
    sghmc_stationary_cov,
    sgld_stationary_cov,
    z_critical,
)

PROJECTION = np.array([[1.0, -0.5, 0.3], [0.4, 0.8, -1.2]])


class FixedFeatures(nn.Module):
    """``Linear(cos(x P))``: linear in its parameters, ``P`` a buffer."""

    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.register_buffer("projection", torch.as_tensor(PROJECTION[:n_features_in]))
        self.readout = nn.Linear(PROJECTION.shape[1], n_outputs)

    def forward(self, x):
        return self.readout(torch.cos(x @ self.projection))


def _posterior(X, y, sigma, tau):
    Phi = np.column_stack([np.cos(X @ PROJECTION), np.ones(len(X))])
    precision = np.eye(Phi.shape[1]) / tau**2 + Phi.T @ Phi / sigma**2
    mu = np.linalg.solve(precision, Phi.T @ y / sigma**2)
    return mu, precision


def _data(n, sigma, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.cos(X @ PROJECTION) @ np.array([1.0, -0.5, 0.7]) + 0.3 + sigma * rng.normal(size=n)
    return X, y


def _stacked(tensors) -> np.ndarray:
    w = tensors["readout.weight"][..., 0, :].cpu().numpy()
    b = tensors["readout.bias"].cpu().numpy()
    return np.concatenate([w, b], axis=-1)


MODEL = dict(network=FixedFeatures, noise_std=SIGMA, normalize_y=False, prior_std=TAU,
             device="cpu")
FULL_BATCH = dict(schedule="constant", preconditioner="identity", min_epochs=0, n_chains=8,
                  dtype="float64")


def test_sgld_on_fixed_features_matches_the_discrete_lyapunov_law():
    X, y = _data(30, SIGMA)
    mu, precision = _posterior(X, y, SIGMA, TAU)
    h = 0.2 / np.linalg.eigvalsh(precision).max()
    est = SGLDRegressor(**MODEL, **FULL_BATCH, batch_size=len(X), step_size=h * len(X),
                        n_burnin=300, n_samples=600, thinning=5, random_state=0).fit(X, y)
    assert set(est.posterior_.draws) == {"readout.weight", "readout.bias"}
    z = moment_z_scores(_stacked(est.posterior_.draws), mu, sgld_stationary_cov(precision, h))
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z


def test_sghmc_on_fixed_features_matches_its_lyapunov_law():
    X, y = _data(30, SIGMA)
    mu, precision = _posterior(X, y, SIGMA, TAU)
    alpha, eta = 0.2, 0.05 / np.linalg.eigvalsh(precision).max()
    est = SGHMCRegressor(**MODEL, **FULL_BATCH, batch_size=len(X), step_size=eta * len(X),
                         friction=alpha, n_leapfrog=None, n_burnin=400, n_samples=600,
                         thinning=5, random_state=1).fit(X, y)
    z = moment_z_scores(_stacked(est.posterior_.draws), mu,
                        sghmc_stationary_cov(precision, eta, alpha))
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z


@pytest.mark.slow  # 20 000 Adam steps at the defaults: about 75 s on one core
def test_bbb_on_fixed_features_reaches_the_mean_field_optimum():
    """The bounds of ``tests/inference/vi/test_bbb.py`` (the final iterate's optimisation
    error at the defaults, about 2-4x the largest measured there), on 12 noisy rows."""
    sigma = 2.0
    X, y = _data(12, sigma)
    mu, precision = _posterior(X, y, sigma, TAU)
    mf_sd = 1 / np.sqrt(np.diag(precision))
    est = BBBRegressor(**{**MODEL, "noise_std": sigma}, random_state=0).fit(X, y)
    mean_err = (_stacked(est.posterior_.mean)[0] - mu) / mf_sd
    log_sd_err = np.log(_stacked(est.posterior_.std)[0] / mf_sd)
    assert np.abs(mean_err).max() < 0.08, mean_err
    assert np.abs(log_sd_err).max() < 0.045, log_sd_err
