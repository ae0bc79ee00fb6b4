"""fSGLD against the exact GP posterior at the measurement points (oracle F3).

A network linear in its weights, ``f(x) = w.x + b``, evaluated at ``M = P = 4``
fixed measurement points gives ``f_M = A theta`` with ``A = [X_M, 1]``
invertible. fSGLD in theta is then preconditioned Langevin in f-space,
``f' = f + h A A^T grad log pi(f) + sqrt(2h) A xi``, whose stationary law is
the discrete Lyapunov solution around the GP posterior mean.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.linalg import solve_discrete_lyapunov

from skfbnn.inference.run import run_sampler
from skfbnn.inference.sgmcmc import sgld
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import gaussian_log_likelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.functional import FunctionalPrior, MeasurementDraw
from skfbnn.priors.gp import GPPrior, make_kernel
from skfbnn.stats.gaussian import jittered_cholesky

from .._harness import moment_z_scores, z_critical

SIGMA = 0.3
F64 = torch.float64


def _setup():
    rng = np.random.default_rng(0)
    X_M = torch.tensor(rng.normal(size=(4, 3)), dtype=F64)
    gp = GPPrior(make_kernel("rbf", X_M, 1), 1, constant_mean=False)
    mean, K = gp.mean_cov(X_M)
    chol = jittered_cholesky(K, 1e-6).chol
    K_eff = (chol @ chol.transpose(-1, -2))[0].numpy()
    y = torch.tensor(rng.normal(size=(3, 1)), dtype=F64)
    draw = MeasurementDraw(X_M, mean, chol)
    return X_M, y, draw, K_eff


def _gp_posterior(K, y):
    """F3: N(K_MX (K_XX + s^2 I)^-1 y, K_MM - K_MX (K_XX + s^2 I)^-1 K_XM), X = first 3."""
    G = K[:3, :3] + SIGMA**2 * np.eye(3)
    mean = K[:, :3] @ np.linalg.solve(G, y)
    cov = K - K[:, :3] @ np.linalg.solve(G, K[:3, :])
    return mean.ravel(), cov


def _problem(draw):
    network = build_mlp(3, 1, (), "identity")
    log_noise = torch.tensor([math.log(SIGMA)], dtype=F64)
    return network, BayesProblem(
        forward=make_forward(network),
        log_likelihood=lambda f, y, p: gaussian_log_likelihood(f, y, log_noise),
        log_prior=lambda p, f_m, m: FunctionalPrior.log_prob(f_m, m),
        n_data=3,
    )


def test_prior_gradient_is_pulled_back_gp_score():
    """autograd of log N(f(X_M); m, K) equals A^T K^-1 (m - f) (Wu et al. Eq. 6)."""
    X_M, _, draw, K = _setup()
    network, problem = _problem(draw)
    params = init_params(network, 2, torch.Generator().manual_seed(0), device="cpu", dtype=F64)
    leaves = {k: v.requires_grad_() for k, v in params.items()}
    f_m = problem.forward(leaves, X_M)
    grads = torch.autograd.grad(problem.log_prior(leaves, f_m, draw).sum(), list(leaves.values()))
    A = np.column_stack([X_M.numpy(), np.ones(4)])
    for c in range(2):
        f = f_m[c, :, 0].detach().numpy()
        expected = A.T @ np.linalg.solve(K, -f)
        got = np.concatenate([grads[0][c, 0].numpy(), grads[1][c].numpy()])
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_fsgld_matches_gp_posterior_lyapunov_law():
    X_M, y, draw, K = _setup()
    network, problem = _problem(draw)
    A = np.column_stack([X_M.numpy(), np.ones(4)])
    mean, cov = _gp_posterior(K, y.numpy())
    precision = np.linalg.inv(cov)
    # Stationary law of the f-space recursion with preconditioner A A^T.
    AAt = A @ A.T
    h = 0.2 / np.linalg.eigvals(AAt @ precision).real.max()
    S = solve_discrete_lyapunov(np.eye(4) - h * AAt @ precision, 2 * h * AAt)
    gen = torch.Generator().manual_seed(1)
    params = init_params(network, 8, gen, device="cpu", dtype=F64)
    result = run_sampler(
        sgld.build(problem, step_size=lambda t: h), params, X_M[:3], y, gen,
        n_burnin=500, n_samples=800, thinning=5, batch_size=3, measure=lambda g: draw,
    )
    theta = np.concatenate(
        [result.draws["0.weight"][..., 0, :].numpy(), result.draws["0.bias"].numpy()], -1
    )
    f_draws = theta @ A.T  # (chains, draws, M)
    z = moment_z_scores(f_draws, mean, S)
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z
    # The oracle itself: with h -> 0 the Lyapunov law is the GP posterior.
    S_small = solve_discrete_lyapunov(np.eye(4) - 1e-4 * h * AAt @ precision, 2e-4 * h * AAt)
    np.testing.assert_allclose(S_small, cov, rtol=1e-3, atol=1e-6)


def test_fsghmc_matches_gp_posterior_lyapunov_law():
    """fSGHMC (same kernel as SGHMC, functional prior) on the F3 oracle.

    In theta the target is Gaussian with precision ``A^T Pi A`` and mean
    ``A^-1 m``; SGHMC without momentum refresh is then the augmented linear
    recursion of the SGHMC oracle, and ``f = A theta`` has covariance ``A S A^T``.
    """
    from skfbnn.inference.sgmcmc import sghmc

    from .._harness import sghmc_stationary_cov

    X_M, y, draw, K = _setup()
    network, problem = _problem(draw)
    A = np.column_stack([X_M.numpy(), np.ones(4)])
    mean, cov = _gp_posterior(K, y.numpy())
    theta_precision = A.T @ np.linalg.inv(cov) @ A
    alpha = 0.2
    eta = 0.05 / np.linalg.eigvalsh(theta_precision).max()
    S = A @ sghmc_stationary_cov(theta_precision, eta, alpha) @ A.T
    gen = torch.Generator().manual_seed(2)
    params = init_params(network, 8, gen, device="cpu", dtype=F64)
    transform = sghmc.build(problem, step_size=lambda t: eta, friction=alpha, n_leapfrog=None)
    result = run_sampler(
        transform, params, X_M[:3], y, gen, n_burnin=800, n_samples=800, thinning=5,
        batch_size=3, measure=lambda g: draw,
    )
    theta = np.concatenate(
        [result.draws["0.weight"][..., 0, :].numpy(), result.draws["0.bias"].numpy()], -1
    )
    z = moment_z_scores(theta @ A.T, mean, S)
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z
