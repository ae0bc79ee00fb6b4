"""Empirical-Bayes starting noise: the marginal likelihood against dense algebra."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import MultivariateNormal

from skfbnn.inference.mh.noise import empirical_bayes_log_noise, log_marginal_likelihood

F64 = torch.float64


@pytest.mark.parametrize("n,p", [(6, 3), (4, 8)])
def test_log_marginal_likelihood_matches_dense(n, p):
    g = torch.Generator().manual_seed(1)
    Psi, Y = torch.randn(2, n, p, generator=g, dtype=F64), torch.randn(n, 2, generator=g,
                                                                        dtype=F64)
    grid = torch.tensor([-1.0, 0.3], dtype=F64)
    got = log_marginal_likelihood(Psi, Y, grid)
    for a, s in enumerate(grid):
        for c in range(2):
            K = Psi[c] @ Psi[c].T + math.exp(2 * s) * torch.eye(n, dtype=F64)
            for j in range(2):
                want = MultivariateNormal(torch.zeros(n, dtype=F64), K).log_prob(Y[:, j])
                torch.testing.assert_close(got[a, c, j], want)


def test_empirical_bayes_recovers_the_noise_of_a_linear_model():
    g = torch.Generator().manual_seed(0)
    Psi = torch.randn(1, 400, 3, generator=g, dtype=F64)
    Y = Psi[0] @ torch.tensor([[1.0], [-0.5], [0.3]], dtype=F64)
    Y = Y + 0.2 * torch.randn(400, 1, generator=g, dtype=F64)
    assert abs(math.exp(float(empirical_bayes_log_noise(Psi, Y))) - 0.2) < 0.02
