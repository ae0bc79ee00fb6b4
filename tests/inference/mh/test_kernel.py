"""The accept/reject step: acceptance ratios against independent densities, the flat
likelihood AR(1) oracle, step-size behaviour and burn-in adaptation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.distributions import MultivariateNormal, Normal

from skfbnn.diagnostics import ess_mean
from skfbnn.inference.mh import mala, pcn, pcnl
from skfbnn.inference.mh.kernel import MHState, adapt_step, evaluate, log_accept_ratio, update

F64 = torch.float64
A = torch.tensor([0.7, -1.2, 0.4], dtype=F64)


class FakeTarget:
    """``Phi(phi) = (a . phi)^2 / 2 + scale * sum phi^4 / 10``; ``scale=0``: quadratic,
    ``flat=True``: ``Phi = 0``."""

    def __init__(self, dim=3, flat=False):
        self.flat = flat
        self.step_scale = torch.ones(dim, dtype=F64)

    def potential(self, phi):
        if self.flat:
            return torch.zeros(phi.shape[0], dtype=F64)
        return 0.5 * (phi @ A).pow(2) + 0.1 * phi.pow(4).sum(-1)

    def potential_and_grad(self, phi):
        leaf = phi.detach().requires_grad_(True)
        with torch.enable_grad():
            value = self.potential(leaf)
            if not value.requires_grad:
                return value, torch.zeros_like(phi)
            (grad,) = torch.autograd.grad(value.sum(), leaf)
        return value.detach(), grad

    def params(self, phi, phi_out, dtype):
        return {"phi": phi.to(dtype)}


def _state(target, proposal, phi, step):
    pot, grad = evaluate(target, phi, proposal.needs_grad)
    return MHState(phi, None, pot, grad, torch.tensor(math.log(step), dtype=F64), 0, target,
                   F64, proposal.max_step)


def _log_pi(x, target):
    return Normal(0.0, 1.0).log_prob(x).sum(-1) - target.potential(x)


def _proposal_law(name, x, target, step):
    """Independent statement of each proposal: mean and covariance of q(. | x)."""
    _, g = target.potential_and_grad(x)
    eye = torch.eye(x.shape[-1], dtype=F64)
    if name == "pcn":
        return math.sqrt(1 - step**2) * x, step**2 * eye
    if name == "pcnl":  # Cotter et al. (2013) with C = I, delta from beta^2 = 8d/(2+d)^2
        d = pcnl.delta_of(step)
        return ((2 - d) * x - 2 * d * g) / (2 + d), 8 * d / (2 + d) ** 2 * eye
    return x + step * (-x - g), 2 * step * eye  # MALA: grad log pi = -x - grad Phi


@pytest.mark.parametrize("name,module,step", [("pcn", pcn, 0.3), ("pcnl", pcnl, 0.3),
                                              ("mala", mala, 0.2)])
def test_log_acceptance_ratio_equals_independent_densities(name, module, step):
    target = FakeTarget()
    g = torch.Generator().manual_seed(0)
    u = torch.randn(4, 3, generator=g, dtype=F64)
    v = torch.randn(4, 3, generator=g, dtype=F64)
    proposal = module.PROPOSAL
    state = _state(target, proposal, u, step)
    pot_v, grad_v = evaluate(target, v, proposal.needs_grad)
    mean_fwd = proposal.mean(u, state.grad, torch.tensor(step, dtype=F64))
    got = log_accept_ratio(proposal, state, v, pot_v, grad_v, mean_fwd)
    m_uv, cov = _proposal_law(name, u, target, step)
    m_vu, _ = _proposal_law(name, v, target, step)
    log_q_fwd = torch.stack([MultivariateNormal(m_uv[i], cov).log_prob(v[i]) for i in range(4)])
    log_q_bwd = torch.stack([MultivariateNormal(m_vu[i], cov).log_prob(u[i]) for i in range(4)])
    want = _log_pi(v, target) + log_q_bwd - _log_pi(u, target) - log_q_fwd
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(mean_fwd, m_uv)


def _run(target, proposal, step, n_steps, n_chains=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    state = _state(target, proposal, torch.randn(n_chains, 3, generator=g, dtype=F64), step)
    xs, acc = [], []
    for _ in range(n_steps):
        state, info = update(state, {}, g, proposal=proposal)
        xs.append(state.phi)
        acc.append(info.accepted)
    return torch.stack(xs, 1).numpy(), torch.stack(acc).numpy()


def test_flat_likelihood_pcn_accepts_everything_and_is_the_prior_ar1():
    beta = 0.3
    rho = math.sqrt(1 - beta**2)
    x, accepted = _run(FakeTarget(flat=True), pcn.PROPOSAL, beta, 20000)
    assert accepted.min() == 1.0
    n = x.shape[0] * x.shape[1]
    lag1 = np.mean(x[:, 1:] * x[:, :-1]) / np.mean(x**2)
    assert abs(lag1 - rho) < 0.01
    for i in range(3):  # the AR(1) ESS n (1 - rho) / (1 + rho), within 15 %
        assert ess_mean(x[..., i]) == pytest.approx(n * (1 - rho) / (1 + rho), rel=0.15)
    assert abs(x.mean()) < 0.1 and abs(x.var() - 1) < 0.1  # the prior N(0, 1)


def test_flat_likelihood_pcnl_accepts_everything():
    _, accepted = _run(FakeTarget(flat=True), pcnl.PROPOSAL, 0.5, 200)
    assert accepted.min() == 1.0


def test_mala_acceptance_falls_with_the_step():
    target = FakeTarget()
    _, big = _run(target, mala.PROPOSAL, 10.0, 200)
    _, small = _run(target, mala.PROPOSAL, 1e-5, 200)
    assert big.mean() < 0.5 < 0.9 < small.mean()


def test_adaptation_moves_the_step_towards_the_target_acceptance():
    target = FakeTarget()
    g = torch.Generator().manual_seed(0)
    state = _state(target, mala.PROPOSAL, torch.randn(8, 3, generator=g, dtype=F64), 5.0)
    rates = []
    for t in range(1500):
        state, info = update(state, {}, g, proposal=mala.PROPOSAL)
        state = adapt_step(state, info, t, target_accept=0.6)
        rates.append(float(info.accept_prob.mean()))
    assert abs(np.mean(rates[-500:]) - 0.6) < 0.1
    assert float(state.log_step.exp()) < 5.0
