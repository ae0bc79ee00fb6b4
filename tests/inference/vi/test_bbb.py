"""Bayes by backprop against exact oracles (docs/testing.md, TESTING.md 1.5).

On a network without hidden layer (Bayesian linear regression, known noise,
N(0, prior_std^2) on weights and bias) the mean-field optimum is known: the
means equal the exact posterior mean and the variances are ``1 / Lambda_ii``
(Bishop, PRML 10.1.2), *smaller* than the posterior marginal variances. The
noise is large and the data few, so the prior matters and a wrong KL term
would show.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from skfbnn import BBBRegressor
from skfbnn.inference.types import BayesProblem
from skfbnn.inference.vi import bbb
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.priors.weight import WeightPrior

SIGMA, TAU = 2.0, 1.0
F64 = torch.float64


def _problem(n: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -0.5]) + 0.3 + SIGMA * rng.normal(size=n)
    Phi = np.column_stack([X, np.ones(n)])
    precision = np.eye(3) / TAU**2 + Phi.T @ Phi / SIGMA**2
    mu = np.linalg.solve(precision, Phi.T @ y / SIGMA**2)
    return X, y, Phi, precision, mu


def _weights(tensors) -> np.ndarray:
    return np.concatenate([tensors["0.weight"][0, 0].numpy(), tensors["0.bias"][0].numpy()])


def _fit(X, y, seed):
    """BBB at its default optimisation settings; only the model is specified."""
    return BBBRegressor(
        hidden_layer_sizes=(), activation="identity", noise_std=SIGMA, normalize_y=False,
        prior_std=TAU, device="cpu", random_state=seed,
    ).fit(X, y)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_defaults_reach_the_mean_field_optimum(seed):
    X, y, Phi, precision, mu = _problem()
    mf_sd = 1 / np.sqrt(np.diag(precision))
    post_sd = np.sqrt(np.diag(np.linalg.inv(precision)))
    assert (np.log(post_sd / mf_sd) > 0.06).all()  # the check below can tell them apart
    X_test = np.random.default_rng(9).normal(size=(15, 2))
    Phi_test = np.column_stack([X_test, np.ones(15)])
    est = _fit(X, y, seed)
    m, s = _weights(est.posterior_.mean), _weights(est.posterior_.std)
    mean_err, log_sd_err = (m - mu) / mf_sd, np.log(s / mf_sd)
    # Predictions come from the n_samples draws fixed at fit time: their mean and
    # spread match the mean-field predictive within Monte-Carlo error.
    S = est.posterior_.shape[1]
    pred_sd = np.sqrt(Phi_test**2 @ s**2)
    z = (est.predict(X_test) - Phi_test @ m) / (pred_sd / np.sqrt(S))
    assert np.abs(z).max() < norm.ppf(1 - 1e-3 / 30)
    ratio = est.predict_std(X_test, kind="epistemic") / pred_sd
    assert np.abs(ratio - 1).max() < 4 / np.sqrt(2 * S)
    np.testing.assert_allclose(est.predict_std(X_test, kind="aleatoric"), SIGMA, rtol=1e-6)
    # Tolerances: the final iterate's error from the stochastic optimisation (Adam,
    # one Monte-Carlo draw per step), measured over 4 seeds at the defaults, was at
    # most 0.021 (means, in units of the mean-field sd) and 0.020 (log sd); the
    # bounds are about 2-4x that, and the log-sd bound stays below the 0.063 that
    # separates the mean-field optimum from the true posterior marginals.
    assert np.abs(mean_err).max() < 0.08
    assert np.abs(log_sd_err).max() < 0.045


def test_minibatch_run_reaches_the_mean_field_optimum():
    """The same oracle on 256 rows at the default minibatch of 64: the expected
    log-likelihood of a batch is weighted ``N / n`` (4 here). Without that weight the
    optimum is the one of a quarter of the data, the means 0.37-0.39 mean-field sd
    and the log sd 0.61-0.68 away (seeds 0-1, the weighting removed).

    Tolerance: with 3 000 steps at learning rate 1e-2 (default batch, schedule and
    one Monte-Carlo draw per step) the final iterate's errors over 12 seeds had root
    mean square 0.040 (means, in mean-field sd) and 0.039 (log sd), largest 0.119
    and 0.095; the bounds are 4 times the root mean square."""
    X, y, Phi, precision, mu = _problem(n=256)
    assert BBBRegressor().batch_size < len(X) / 2
    mf_sd = 1 / np.sqrt(np.diag(precision))
    est = BBBRegressor(
        hidden_layer_sizes=(), activation="identity", noise_std=SIGMA, normalize_y=False,
        prior_std=TAU, n_iter=3000, learning_rate=1e-2, device="cpu", random_state=0,
    ).fit(X, y)
    mean_err = (_weights(est.posterior_.mean) - mu) / mf_sd
    log_sd_err = np.log(_weights(est.posterior_.std) / mf_sd)
    assert np.abs(mean_err).max() < 0.16, mean_err
    assert np.abs(log_sd_err).max() < 0.16, log_sd_err


def _closed_form_elbo(m, s, Phi, y):
    """Per-datum ELBO of q = N(m, diag(s^2)) for Bayesian linear regression."""
    expected_loglik = (-0.5 * ((y - Phi @ m) ** 2 + Phi**2 @ s**2) / SIGMA**2
                       - 0.5 * math.log(2 * math.pi * SIGMA**2)).sum()
    kl = (np.log(TAU / s) + (s**2 + m**2) / (2 * TAU**2) - 0.5).sum()
    return (expected_loglik - kl) / len(y)


@pytest.mark.parametrize("kind", ["kl", "w2"])
def test_elbo_estimate_is_unbiased(kind):
    X, y, Phi, _, _ = _problem()
    m = np.array([0.4, -0.2, 0.1])
    s = np.array([0.3, 0.5, 0.2])
    problem = BayesProblem(
        lambda p, x: (x @ p["0.weight"].transpose(1, 2) + p["0.bias"].unsqueeze(1)),
        GaussianLikelihood([SIGMA]), WeightPrior(TAU), len(X),
    )
    variational = {
        "m:0.weight": torch.tensor(m[:2], dtype=F64).reshape(1, 1, 2),
        "m:0.bias": torch.tensor(m[2:], dtype=F64).reshape(1, 1),
        "r:0.weight": torch.tensor(np.log(np.expm1(s[:2])), dtype=F64).reshape(1, 1, 2),
        "r:0.bias": torch.tensor(np.log(np.expm1(s[2:])), dtype=F64).reshape(1, 1),
    }
    batch = {"x": torch.tensor(X, dtype=F64), "y": torch.tensor(y, dtype=F64).unsqueeze(1)}
    gen = torch.Generator().manual_seed(0)
    estimates = torch.stack([
        bbb._elbo(variational, batch, gen, problem, n_mc=100, kind=kind)[0] for _ in range(50)
    ]).numpy().ravel()
    if kind == "kl":
        expected = _closed_form_elbo(m, s, Phi, y)
    else:
        w2 = (m**2 + (s - TAU) ** 2).sum()
        kl = (np.log(TAU / s) + (s**2 + m**2) / (2 * TAU**2) - 0.5).sum()
        expected = _closed_form_elbo(m, s, Phi, y) + (kl - w2) / len(y)
    z = (estimates.mean() - expected) / (estimates.std(ddof=1) / np.sqrt(len(estimates)))
    assert abs(z) < 4


def test_divergences_match_closed_forms():
    mean = {"w": torch.tensor([[0.5, -1.0]], dtype=F64)}
    std = {"w": torch.tensor([[0.2, 2.0]], dtype=F64)}
    q = torch.distributions.Normal(mean["w"], std["w"])
    p = torch.distributions.Normal(torch.zeros(2, dtype=F64), 1.5)
    kl = torch.distributions.kl_divergence(q, p).sum(-1)
    torch.testing.assert_close(bbb.divergence(mean, std, 1.5, "kl"), kl)
    w2 = (0.5**2 + 1.3**2) + (1.0 + 0.5**2)
    assert float(bbb.divergence(mean, std, 1.5, "w2")) == pytest.approx(w2, rel=1e-12)


def test_build_requires_a_weight_prior():
    problem = BayesProblem(lambda p, x: x, log_likelihood=lambda f, y, p: f.sum((1, 2)))
    with pytest.raises(ValueError, match="weight prior"):
        bbb.build(problem, learning_rate=lambda t: 1e-2)
