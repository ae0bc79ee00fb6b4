"""SGLD against exact oracles: golden step and the discretised stationary law."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn import SGLDRegressor
from skfbnn.inference.sgmcmc import sgld
from skfbnn.inference.types import BayesProblem

from .._harness import (
    SIGMA,
    TAU,
    linear_problem,
    moment_z_scores,
    sgld_stationary_cov,
    stacked_weights,
    z_critical,
)


def _fit(X, y, step_size, n_burnin, n_samples, thinning=5, seed=0):
    """Full-batch SGLD on Bayesian linear regression through the public estimator."""
    return SGLDRegressor(
        hidden_layer_sizes=(), activation="identity", noise_std=SIGMA, normalize_y=False,
        prior_std=TAU, batch_size=len(X), step_size=step_size, schedule="constant", n_chains=8,
        preconditioner="identity", min_epochs=0,
        n_burnin=n_burnin, n_samples=n_samples, thinning=thinning, dtype="float64",
        device="cpu", random_state=seed,
    ).fit(X, y)


def test_golden_step():
    """One step equals theta + eps * grad + sqrt(2 eps T) * xi with the same noise."""
    problem = BayesProblem(
        forward=lambda p, x: p["w"].unsqueeze(1).expand(-1, x.shape[0], -1),
        log_likelihood=lambda f, y, p: -0.5 * ((y - f) ** 2).sum((1, 2)),
        log_prior=lambda p, f_m, m: -0.5 * (p["w"] ** 2).sum(-1),
        n_data=4,
    )
    transform = sgld.build(problem, step_size=lambda t: 0.01, temperature=0.5)
    theta = torch.tensor([[0.3], [-1.0]], dtype=torch.float64)
    x, y = torch.zeros(2, 1, dtype=torch.float64), torch.ones(2, 1, dtype=torch.float64)
    state, info = transform.update(
        transform.init({"w": theta}), {"x": x, "y": y}, torch.Generator().manual_seed(3)
    )
    xi = torch.randn((2, 1), generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    grad = 4 / 2 * 2 * (1 - theta) - theta  # (N/n) * sum over the 2 points + prior
    expected = theta + 0.01 * grad + (2 * 0.01 * 0.5) ** 0.5 * xi
    torch.testing.assert_close(state.params["w"], expected, rtol=1e-12, atol=1e-12)
    assert state.step == 1 and torch.isfinite(info.log_post).all()


def test_sgld_matches_discrete_lyapunov_law():
    """Sample mean and covariance equal the exact stationary law of full-batch SGLD."""
    X, y, mu, precision = linear_problem()
    h = 0.2 / np.linalg.eigvalsh(precision).max()  # per-step size in log-posterior units
    est = _fit(X, y, step_size=h * len(X), n_burnin=300, n_samples=600)
    z = moment_z_scores(stacked_weights(est), mu, sgld_stationary_cov(precision, h))
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z


@pytest.mark.slow
def test_sgld_bias_vanishes_as_step_shrinks():
    """The stationary variance exceeds the posterior's by O(h); the sampler follows it.

    At h = 0.5/lambda_max the Lyapunov variance of the stiffest direction is far
    from the posterior one and the samples side with Lyapunov; at h/8 the gap
    shrinks about 8-fold and the samples match the posterior itself.
    """
    X, y, mu, precision = linear_problem()
    lam_max = np.linalg.eigvalsh(precision).max()
    posterior = np.linalg.inv(precision)
    gaps = []
    for h in (0.5 / lam_max, 0.5 / lam_max / 8):
        est = _fit(X, y, step_size=h * len(X), n_burnin=2000, n_samples=2000,
                   thinning=max(5, int(0.5 / (h * lam_max))))
        draws = stacked_weights(est)
        lyap = sgld_stationary_cov(precision, h)
        gaps.append(np.abs(lyap - posterior).max() / np.abs(posterior).max())
        z = moment_z_scores(draws, mu, lyap)
        assert np.abs(z).max() < z_critical(len(z)), z
    assert gaps[1] < gaps[0] / 5
    z_post = moment_z_scores(draws, mu, posterior)
    assert np.abs(z_post).max() < z_critical(len(z_post)), z_post
