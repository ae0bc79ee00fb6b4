"""The readout reparametrisation: potential, map, inverse, primal vs dual (deterministic)."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import MultivariateNormal

from skfbnn.inference.mh.reparam import (
    likelihood_potential,
    marginal_potential,
    readout,
    whiten,
)

F64 = torch.float64


def _data(n=7, p=5, k=2, C=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    Psi = torch.randn(C, n, p, generator=g, dtype=F64)
    Y = torch.randn(n, k, generator=g, dtype=F64)
    return Psi, Y, g


def _exact(Psi, Y, lam):
    """Readout posterior mean and covariance per chain and output, by dense algebra."""
    p = Psi.shape[-1]
    mus, covs = [], []
    for j in range(Y.shape[1]):
        cov = torch.linalg.inv(torch.eye(p, dtype=F64) + Psi.mT @ Psi / lam[..., j, None, None])
        mus.append(cov @ Psi.mT @ Y[:, j] / lam[..., j, None])
        covs.append(cov)
    return torch.stack(mus, -1), torch.stack(covs, 1)  # (C, p, k), (C, k, p, p)


@pytest.mark.parametrize("n,p", [(7, 5), (4, 6)])
@pytest.mark.parametrize("lam", [torch.tensor([0.3, 0.3]), torch.tensor([0.3, 1.7])])
def test_potential_is_the_negative_log_marginal_likelihood(n, p, lam):
    Psi, Y, _ = _data(n, p)
    lam = lam.to(F64)
    expected = torch.zeros(Psi.shape[0], dtype=F64)
    for j in range(2):
        K = Psi @ Psi.mT + lam[j] * torch.eye(n, dtype=F64)
        mvn = MultivariateNormal(torch.zeros(n, dtype=F64), covariance_matrix=K)
        expected -= mvn.log_prob(Y[:, j]) + 0.5 * n * math.log(2 * math.pi)
    for dual in (True, False):
        torch.testing.assert_close(marginal_potential(Psi, Y, lam, dual), expected)


@pytest.mark.parametrize("n,p", [(7, 5), (4, 6)])
@pytest.mark.parametrize("dual", [True, False])
def test_readout_map_has_the_conditional_posterior_law(n, p, dual):
    """theta = mu + S phi with S S^T = Sigma, per chain and output (lam per chain)."""
    Psi, Y, _ = _data(n, p)
    lam = torch.tensor([[0.3, 1.1], [0.5, 0.5], [2.0, 0.2]], dtype=F64)
    mu, cov = _exact(Psi, Y, lam)
    theta0 = readout(Psi, Y, lam, torch.zeros(3, p, 2, dtype=F64), dual)
    torch.testing.assert_close(theta0, mu)
    for j in range(2):
        cols = []
        for i in range(p):
            e = torch.zeros(3, p, 2, dtype=F64)
            e[:, i, j] = 1.0
            cols.append((readout(Psi, Y, lam, e, dual) - theta0)[:, :, j])
        S = torch.stack(cols, -1)
        torch.testing.assert_close(S @ S.mT, cov[:, j])


@pytest.mark.parametrize("dual", [True, False])
def test_whiten_inverts_readout(dual):
    Psi, Y, g = _data(6, 9)
    lam = torch.tensor([0.4, 0.9], dtype=F64)
    phi = torch.randn(3, 9, 2, generator=g, dtype=F64)
    torch.testing.assert_close(whiten(Psi, Y, lam, readout(Psi, Y, lam, phi, dual), dual), phi)


def test_potential_is_the_full_energy_minus_reference_and_free_of_phi_out():
    """E(phi) - |phi|^2/2 computed the long way (prior and likelihood of the mapped
    readout, minus log |det d theta / d phi|) equals Phi for every phi_out; the reference
    code's pCNL potential (likelihood of the mapped readout only, METHODS.md B2) does not."""
    Psi, Y, g = _data(8, 4, k=1)
    lam = torch.tensor([0.25], dtype=F64)
    phi_pot = marginal_potential(Psi, Y, lam)
    mu, cov = _exact(Psi, Y, lam.view(1, 1).expand(3, 1))
    logdet_J = 0.5 * torch.logdet(cov[:, 0])  # |det S| = det(Sigma)^(1/2)
    ours, reference = [], []
    for _ in range(3):
        phi = torch.randn(3, 4, 1, generator=g, dtype=F64)
        theta = readout(Psi, Y, lam, phi)
        nll = likelihood_potential(Psi, theta, Y, lam)
        energy = 0.5 * theta.pow(2).sum((1, 2)) + nll - logdet_J
        ours.append(energy - 0.5 * phi.pow(2).sum((1, 2)))
        reference.append(nll)
    for value in ours:
        torch.testing.assert_close(value, phi_pot)
    assert (reference[0] - reference[1]).abs().max() > 1e-3
