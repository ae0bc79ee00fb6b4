"""Shared oracle harness: Bayesian linear regression (F1) and MCSE z-scores.

A network with no hidden layer is ``f(x) = w.x + b``, i.e. Bayesian linear
regression with features ``phi(x) = [x, 1]``. Under an isotropic N(0, tau^2)
prior and Gaussian noise sigma the posterior is N(mu, Lambda^-1) with
``Lambda = I / tau^2 + Phi^T Phi / sigma^2`` and ``mu = Lambda^-1 Phi^T y / sigma^2``.
Full-batch SGLD/SGHMC on it are linear recursions with Gaussian noise, whose
exact stationary law follows from a discrete Lyapunov equation.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_discrete_lyapunov
from scipy.stats import norm

from skfbnn.diagnostics import ess_mean

SIGMA, TAU = 0.5, 1.0


def linear_problem(n: int = 30, d: int = 2, seed: int = 0):
    """Data with correlated features (condition number ~ 10) and the exact posterior."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ np.array([[1.0, 0.6], [0.0, 0.5]])[:d, :d]
    y = X @ np.arange(1, d + 1) + 0.3 + SIGMA * rng.normal(size=n)
    Phi = np.column_stack([X, np.ones(n)])
    precision = np.eye(d + 1) / TAU**2 + Phi.T @ Phi / SIGMA**2
    mu = np.linalg.solve(precision, Phi.T @ y / SIGMA**2)
    return X, y, mu, precision


def sgld_stationary_cov(
    precision: np.ndarray, h: float, inv_mass: np.ndarray | None = None
) -> np.ndarray:
    """``S = A S A^T + 2h D`` with ``A = I - h D Lambda`` (full-batch SGLD with a
    diagonal inverse mass ``D``, the identity by default)."""
    D = np.diag(np.ones(len(precision)) if inv_mass is None else inv_mass)
    A = np.eye(len(precision)) - h * D @ precision
    return solve_discrete_lyapunov(A, 2 * h * D)


def sghmc_stationary_cov(
    precision: np.ndarray, eta: float, alpha: float, inv_mass: np.ndarray | None = None
) -> np.ndarray:
    """theta-block of the stationary covariance of SGHMC without momentum refresh.

    State ``(theta - mu, v)``: ``v' = (1-a) v - eta D Lambda (theta - mu) + noise``,
    ``theta' = theta + v'``, noise ~ N(0, 2 a eta D) enters both blocks (``D``: the
    diagonal inverse mass, the identity by default).
    """
    p = len(precision)
    eye = np.eye(p)
    D = np.diag(np.ones(p) if inv_mass is None else inv_mass)
    A = np.block([[eye - eta * D @ precision, (1 - alpha) * eye],
                  [-eta * D @ precision, (1 - alpha) * eye]])
    Q = 2 * alpha * eta * np.block([[D, D], [D, D]])
    return solve_discrete_lyapunov(A, Q)[:p, :p]


def moment_z_scores(draws: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """MCSE z-scores of the sample mean and of every covariance entry.

    ``draws`` has shape (n_chains, n_draws, p); each statistic's Monte-Carlo
    standard error uses its own effective sample size (``ess_mean``).
    """
    centred = draws - mean
    stats, targets = [centred[..., i] for i in range(len(mean))], [0.0] * len(mean)
    for i in range(len(mean)):
        for j in range(i, len(mean)):
            stats.append(centred[..., i] * centred[..., j])
            targets.append(cov[i, j])
    z = []
    for s, target in zip(stats, targets, strict=True):
        mcse = s.std() / np.sqrt(ess_mean(s))
        z.append((s.mean() - target) / mcse)
    return np.array(z)


def z_critical(n_stats: int, alpha: float = 1e-3) -> float:
    """Bonferroni critical value for a family-wise level ``alpha``."""
    return float(norm.ppf(1 - alpha / (2 * n_stats)))


def stacked_weights(estimator) -> np.ndarray:
    """Draws of ``[w, b]`` of a no-hidden-layer estimator, (n_chains, n_draws, p)."""
    d = estimator.posterior_.draws
    w = d["0.weight"][..., 0, :].cpu().numpy()
    b = d["0.bias"].cpu().numpy()
    return np.concatenate([w, b], axis=-1)
