"""Statistical oracles of the wide-network samplers (fixed seeds, MCSE z-scores).

* No hidden layer + reparametrisation: the posterior in the sampler's coordinates *is*
  the reference measure N(0, I), so pCN and pCNL accept every proposal and the
  predictive equals exact Bayesian linear regression of the NTK-parameterised readout.
* The marginal-conditional sampler and the joint sampler agree in distribution.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skfbnn import MALARegressor, PCNLRegressor, PCNRegressor
from skfbnn.diagnostics import ess_mean

from .._harness import z_critical

SIGMA = 0.4


def _data(n=30, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ np.array([1.0, -0.7][:d]) + 0.5 + SIGMA * rng.normal(size=n)
    return X, y


def _exact_blr(X, y, X_test, sigma_w_out=1.0, sigma_b_out=0.1):
    """Exact predictive mean and epistemic std of ``f = Psi theta``, theta ~ N(0, I)."""
    def psi(Z):
        return np.column_stack([sigma_w_out / math.sqrt(X.shape[1]) * Z,
                                np.full(len(Z), sigma_b_out)])
    P = psi(X)
    cov = np.linalg.inv(np.eye(P.shape[1]) + P.T @ P / SIGMA**2)
    mu = cov @ P.T @ y / SIGMA**2
    Q = psi(X_test)
    return Q @ mu, np.sqrt(np.einsum("ij,jk,ik->i", Q, cov, Q))


def _z_scores(f, mean, var):
    """MCSE z-scores of the mean and of the second central moment at each point;
    ``f`` has shape (n_chains, n_draws, n_points)."""
    z = []
    for i in range(f.shape[-1]):
        for stat, target in ((f[..., i] - mean[i], 0.0), ((f[..., i] - mean[i]) ** 2, var[i])):
            z.append((stat.mean() - target) / (stat.std() / math.sqrt(ess_mean(stat))))
    return np.array(z)


@pytest.mark.parametrize("cls,step,all_accepted", [
    (PCNRegressor, 0.5, True), (PCNLRegressor, 0.5, True), (MALARegressor, 0.3, False),
])
def test_no_hidden_layer_matches_exact_bayesian_linear_regression(cls, step, all_accepted):
    X, y = _data()
    X_test = np.random.default_rng(5).normal(size=(4, 2)) * 2
    est = cls(hidden_layer_sizes=(), noise_std=SIGMA, normalize_y=False, step_size=step,
              adapt_step_size=False, n_chains=4, n_burnin=20, n_samples=600, thinning=1,
              random_state=0, device="cpu").fit(X, y)
    rate = est.diagnostics_["acceptance_rate"]
    if all_accepted:
        assert rate.min() == 1.0
    else:
        assert 0.3 < rate.mean() < 1.0
    mean, std = _exact_blr(X, y, X_test)
    f, _ = est.predict_draws(X_test)
    z = _z_scores(f.reshape(4, 600, -1), mean, std**2)
    assert np.abs(z).max() < z_critical(len(z)), z
    np.testing.assert_allclose(est.predict_std(X_test, kind="epistemic"), std, rtol=0.1)


def test_exact_blr_oracle_detects_a_wrong_noise():
    """The same check with a noise twice too large in the sampler must fail."""
    X, y = _data()
    X_test = np.random.default_rng(5).normal(size=(4, 2)) * 2
    est = PCNRegressor(hidden_layer_sizes=(), noise_std=2 * SIGMA, normalize_y=False,
                       step_size=0.5, adapt_step_size=False, n_chains=4, n_burnin=20,
                       n_samples=600, thinning=1, random_state=0, device="cpu").fit(X, y)
    mean, std = _exact_blr(X, y, X_test)
    f, _ = est.predict_draws(X_test)
    z = _z_scores(f.reshape(4, 600, -1), mean, std**2)
    assert np.abs(z).max() > z_critical(len(z))


def _marginal_vs_joint(cls, n_samples, noise_factor=1.0):
    """Two-sample MCSE z-scores of the predictive mean and second moment at 3 points
    (the marginal-conditional run's noise multiplied by ``noise_factor``)."""
    X, y = _data(n=15, d=1, seed=2)
    X_test = np.array([[-2.0], [0.0], [1.5]])
    draws = []
    for marginal in (False, True):
        est = cls(hidden_layer_sizes=(4,), activation="tanh",
                  noise_std=SIGMA * (noise_factor if marginal else 1.0),
                  normalize_y=False, marginalize_readout=marginal, n_chains=4, n_burnin=500,
                  n_samples=n_samples, thinning=4, random_state=1, device="cpu").fit(X, y)
        f, _ = est.predict_draws(X_test)
        draws.append(f.reshape(4, n_samples, -1))
    z = []
    for i in range(3):
        for power in (1, 2):
            a, b = draws[0][..., i] ** power, draws[1][..., i] ** power
            se = [s.std() / math.sqrt(ess_mean(s)) for s in (a, b)]
            z.append((a.mean() - b.mean()) / math.hypot(*se))
    return np.array(z)


@pytest.mark.parametrize("cls", [PCNRegressor,
                                 pytest.param(PCNLRegressor, marks=pytest.mark.slow)])
def test_marginal_conditional_and_joint_samplers_agree(cls):
    z = _marginal_vs_joint(cls, 800)
    assert np.abs(z).max() < z_critical(len(z)), z


@pytest.mark.slow
def test_marginal_vs_joint_oracle_detects_a_different_noise():
    z = _marginal_vs_joint(PCNRegressor, 800, noise_factor=1.5)
    assert np.abs(z).max() > z_critical(len(z)), z


@pytest.mark.parametrize("cls", [PCNRegressor, MALARegressor])
def test_learned_noise_matches_its_exact_marginal_posterior(cls):
    """No hidden layer, sampled noise: the posterior of log sigma is one-dimensional,
    ``p(s) N(y; 0, exp(2s) I + Psi Psi^T)``, integrated on a grid; the draws' mean and
    second moment of log sigma match it within MCSE z-scores."""
    from scipy.stats import multivariate_normal, norm

    from skfbnn.likelihoods import NOISE_PRIOR_LOC, NOISE_PRIOR_SCALE

    X, y = _data(n=30)
    P = np.column_stack([X / math.sqrt(2), np.full(len(X), 0.1)])
    grid = np.linspace(-3.0, 1.0, 2001)
    log_post = np.array([norm.logpdf(s, NOISE_PRIOR_LOC, NOISE_PRIOR_SCALE)
                         + multivariate_normal.logpdf(y, cov=np.exp(2 * s) * np.eye(30)
                                                      + P @ P.T) for s in grid])
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    mean = (w * grid).sum()
    var = (w * (grid - mean) ** 2).sum()
    est = cls(hidden_layer_sizes=(), normalize_y=False, n_chains=4, n_burnin=300,
              n_samples=1000, thinning=1, random_state=0, device="cpu").fit(X, y)
    s = est.posterior_.draws["log_noise"][..., 0].numpy()[..., None]
    z = _z_scores(s, np.array([mean]), np.array([var]))
    assert np.abs(z).max() < z_critical(len(z)), (z, mean, var)
