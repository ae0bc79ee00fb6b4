"""SGHMC against the exact stationary law of its discretised linear recursion."""

from __future__ import annotations

import numpy as np
import torch

from skfbnn import SGHMCRegressor
from skfbnn.diagnostics import ess_mean
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


def refreshed_sghmc_phase_covs(
    precision: np.ndarray, eta: float, alpha: float, n_leapfrog: int
) -> np.ndarray:
    """theta-block of the covariance of SGHMC with momentum refresh, at each phase of
    its refresh cycle, ``(n_leapfrog, p, p)``; entry ``k`` is the state after the
    update ``k`` steps past a refresh.

    The update that starts a cycle first replaces the momentum by ``N(0, eta I)``,
    the random linear map ``R(theta, v) = (theta, 0) + (0, sqrt(eta) xi)``, then
    applies the linear recursion of :func:`sghmc_stationary_cov` (matrix ``A``, noise
    ``Q``). The chain is linear-Gaussian with period ``n_leapfrog``: its covariance
    obeys ``S <- A R(S) A^T + Q`` at a refresh and ``S <- A S A^T + Q`` otherwise,
    with ``R(S)`` keeping the theta-block and setting the momentum block to ``eta I``
    and the cross block to 0. One cycle is an affine contraction of the theta-block,
    iterated here to its fixed point (to round-off); the mean stays at the posterior
    mean throughout.
    """
    p = len(precision)
    eye = np.eye(p)
    A = np.block([[eye - eta * precision, (1 - alpha) * eye],
                  [-eta * precision, (1 - alpha) * eye]])
    Q = 2 * alpha * eta * np.block([[eye, eye], [eye, eye]])
    S = np.zeros((2 * p, 2 * p))
    for _ in range(10_000):
        previous, covs = S, []
        S = np.block([[S[:p, :p], 0 * eye], [0 * eye, eta * eye]])
        for _ in range(n_leapfrog):
            S = A @ S @ A.T + Q
            covs.append(S[:p, :p])
        if np.abs(S - previous).max() <= 1e-14 * np.abs(S).max():
            return np.array(covs)
    raise AssertionError("the refresh cycle's covariance did not converge")


def test_sghmc_with_momentum_refresh_matches_its_periodic_law():
    """Full-batch SGHMC at the default friction and refresh (``n_leapfrog=50``) against
    the exact law of its periodic linear recursion, averaged over the kept steps'
    phases. The draws are whitened by that covariance; besides the mean and second
    moments of each direction, the mean squared norm (target ``p``) pools the variance
    of all directions. Doubling the refresh variance makes the sampled variance about
    8% too large in every direction (``refreshed_sghmc_phase_covs`` with ``2 eta``):
    about 19 MCSE on the pooled statistic with these draws."""
    X, y, mu, precision = linear_problem()
    defaults = SGHMCRegressor()
    alpha, n_leapfrog = defaults.friction, defaults.n_leapfrog
    eta = 0.5 / np.linalg.eigvalsh(precision).max()
    n_burnin, n_samples, thinning = 500, 100, 9
    est = SGHMCRegressor(
        hidden_layer_sizes=(), activation="identity", noise_std=SIGMA, normalize_y=False,
        prior_std=TAU, batch_size=len(X), step_size=eta * len(X), schedule="constant",
        preconditioner="identity", min_epochs=0, n_chains=512, n_burnin=n_burnin,
        n_samples=n_samples, thinning=thinning, dtype="float64", device="cpu", random_state=1,
    ).fit(X, y)
    kept = n_burnin - 1 + thinning * np.arange(1, n_samples + 1)  # run's kept step indices
    cov = refreshed_sghmc_phase_covs(precision, eta, alpha, n_leapfrog)[kept % n_leapfrog]
    white = np.linalg.solve(np.linalg.cholesky(cov.mean(0)),
                            (stacked_weights(est) - mu)[..., None])[..., 0]
    z = moment_z_scores(white, np.zeros(len(mu)), np.eye(len(mu)))
    norm2 = (white**2).sum(-1)
    z = np.append(z, (norm2.mean() - len(mu)) / (norm2.std() / np.sqrt(ess_mean(norm2))))
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z
