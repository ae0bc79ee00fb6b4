"""SGHMC against the exact stationary law of its discretised linear recursion."""

from __future__ import annotations

import numpy as np
import torch

from skfbnn import SGHMCRegressor
from skfbnn.inference.sgmcmc import sghmc, sgld
from skfbnn.inference.types import BayesProblem

from .._harness import (
    SIGMA,
    TAU,
    linear_problem,
    moment_z_scores,
    sghmc_stationary_cov,
    stacked_weights,
    z_critical,
)


def test_sghmc_with_unit_friction_is_sgld():
    """With friction 1 and no momentum memory, SGHMC reduces to SGLD step for step."""
    problem = BayesProblem(
        forward=lambda p, x: p["w"].unsqueeze(1).expand(-1, x.shape[0], -1),
        log_likelihood=lambda f, y, p: -0.5 * ((y - f) ** 2).sum((1, 2)),
        log_prior=lambda p, f_m, m: -0.5 * (p["w"] ** 2).sum(-1),
        n_data=2,
    )
    batch = {"x": torch.zeros(2, 1, dtype=torch.float64),
             "y": torch.ones(2, 1, dtype=torch.float64)}
    start = {"w": torch.tensor([[0.3], [-1.0]], dtype=torch.float64)}
    a = sgld.build(problem, step_size=lambda t: 0.05)
    b = sghmc.build(problem, step_size=lambda t: 0.05, friction=1.0, n_leapfrog=None)
    sa, sb = a.init(start), b.init(start)
    ga, gb = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    torch.randn((2, 1), generator=ga, dtype=torch.float64)  # SGHMC draws its momentum first
    for _ in range(5):
        sa, _ = a.update(sa, batch, ga)
        sb, _ = b.update(sb, batch, gb)
    torch.testing.assert_close(sa.params["w"], sb.params["w"], rtol=1e-12, atol=1e-12)


def test_sghmc_matches_discrete_lyapunov_law():
    """Full-batch SGHMC (no momentum refresh) against its augmented Lyapunov law."""
    X, y, mu, precision = linear_problem()
    alpha = 0.2
    eta = 0.05 / np.linalg.eigvalsh(precision).max()
    est = SGHMCRegressor(
        hidden_layer_sizes=(), activation="identity", noise_std=SIGMA, normalize_y=False,
        prior_std=TAU, batch_size=len(X), step_size=eta * len(X), friction=alpha,
        n_leapfrog=None, schedule="constant", preconditioner="identity", min_epochs=0,
        n_chains=8, n_burnin=400, n_samples=600, thinning=5,
        dtype="float64", device="cpu", random_state=1,
    ).fit(X, y)
    z = moment_z_scores(stacked_weights(est), mu, sghmc_stationary_cov(precision, eta, alpha))
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z
