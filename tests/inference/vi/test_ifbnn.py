"""ifBNN: the linearised q(f) and its W2 to the GP prior against brute force (TESTING.md 1.7)."""

from __future__ import annotations

from functools import partial

import pytest
import torch
from torch.func import functional_call, jacrev

from skfbnn.inference.types import BayesProblem
from skfbnn.inference.vi import ifbnn
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.jacobian import mlp_jacobian
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.functional import FunctionalPrior, FunctionPrior, MeasurementDraw
from skfbnn.stats.wasserstein import gaussian_w2

F64 = torch.float64
NUGGET = 0.05


def _setup(sizes, n_out=1, seed=0):
    gen = torch.Generator().manual_seed(seed)
    net = build_mlp(2, n_out, sizes, "tanh")
    prior = FunctionPrior(FunctionalPrior(None, None, NUGGET))
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.3] * n_out), prior, 30,
                           jacobian=partial(mlp_jacobian, net))
    mean = init_params(net, 2, gen, device=torch.device("cpu"), dtype=F64)
    std = {k: 0.05 + 0.3 * torch.rand(v.shape, generator=gen, dtype=F64)
           for k, v in mean.items()}
    xm = torch.randn(6, 2, generator=gen, dtype=F64)
    d = (xm.unsqueeze(0) - xm.unsqueeze(1)).pow(2).sum(-1)
    K = torch.exp(-0.5 * d) + NUGGET * torch.eye(6, dtype=F64)
    prior_mean = 0.3 * torch.randn(n_out, 6, generator=gen, dtype=F64)
    chol = torch.linalg.cholesky(K).expand(n_out, 6, 6)
    draw = MeasurementDraw(xm, prior_mean, chol)
    return net, problem, mean, std, draw, K


def _brute_force_w2(net, mean, std, draw, K):
    """Explicit J diag(sigma^2) J^T + nu I from torch.func, then the full-matrix W2."""
    net = net.to_empty(device="cpu").double()
    total = []
    for c in range(2):
        p = {k: v[c] for k, v in mean.items()}
        jac = jacrev(lambda q: functional_call(net, q, (draw.x,)))(p)
        f = functional_call(net, p, (draw.x,))
        w2 = 0.0
        for o in range(f.shape[1]):
            J = torch.cat([jac[k][:, o].reshape(6, -1) for k in p], -1)
            s2 = torch.cat([std[k][c].reshape(-1) for k in p]).pow(2)
            cov = (J * s2) @ J.T + NUGGET * torch.eye(6, dtype=F64)
            w2 = w2 + gaussian_w2(f[:, o], cov, draw.mean[o], K, squared=True)
        total.append(w2)
    return torch.stack(total)


@pytest.mark.parametrize("sizes, n_out", [((), 1), ((4,), 1), ((4, 3), 2)])
def test_linearised_w2_equals_brute_force(sizes, n_out):
    net, problem, mean, std, draw, K = _setup(sizes, n_out)
    got = ifbnn.linearized_w2(problem, mean, std, draw)
    expected = _brute_force_w2(net, mean, std, draw, K)
    torch.testing.assert_close(got, expected, rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(ifbnn.linearized_w2(problem, mean, std, draw, "mean"), got / 6)


def test_no_hidden_layer_is_the_exact_gaussian():
    """f = Phi w is linear: q(f) = N(Phi mu, Phi diag(sigma^2) Phi^T) with no approximation."""
    _, problem, mean, std, draw, K = _setup(())
    phi = torch.cat([draw.x, torch.ones(6, 1, dtype=F64)], 1)
    got = ifbnn.linearized_w2(problem, mean, std, draw)
    for c in range(2):
        mu = torch.cat([mean["0.weight"][c].reshape(-1), mean["0.bias"][c]])
        s2 = torch.cat([std["0.weight"][c].reshape(-1), std["0.bias"][c]]).pow(2)
        cov = (phi * s2) @ phi.T + NUGGET * torch.eye(6, dtype=F64)
        exact = gaussian_w2(phi @ mu, cov, draw.mean[0], K, squared=True)
        assert float(got[c]) == pytest.approx(float(exact), rel=1e-9)


def test_gradient_through_the_linearisation_matches_finite_differences():
    _, problem, mean, std, draw, _ = _setup((3,))

    def w2(w, s):
        return ifbnn.linearized_w2(problem, {**mean, "0.weight": w},
                                   {**std, "0.weight": s}, draw).sum()

    args = (mean["0.weight"].clone().requires_grad_(True),
            std["0.weight"].clone().requires_grad_(True))
    assert torch.autograd.gradcheck(w2, args)


def test_update_is_pure_and_climbs_a_fixed_objective():
    _, problem, mean, _, draw, _ = _setup((4,))
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(30, 2, generator=gen, dtype=F64)
    batch = {"x": x, "y": torch.sin(x[:, :1]), "measure": draw}
    transform = ifbnn.build(problem, learning_rate=lambda t: 1e-2, n_mc=8)
    state = transform.init(mean)
    before = {k: v.clone() for k, v in state.mean.items()}
    values = []
    for _ in range(60):
        state, info = transform.update(state, batch, torch.Generator().manual_seed(1))
        values.append(info.objective)
    assert all(torch.equal(before[k], mean[k]) for k in mean)
    assert bool((values[-1] > values[0]).all())


def test_build_needs_a_functional_prior_and_a_jacobian():
    net, problem, *_ = _setup(())
    with pytest.raises(ValueError, match="FunctionPrior"):
        ifbnn.build(BayesProblem(problem.forward, problem.likelihood, None, 30),
                    learning_rate=lambda t: 1e-2)
    with pytest.raises(ValueError, match="Jacobian"):
        ifbnn.build(BayesProblem(problem.forward, problem.likelihood, problem.prior, 30),
                    learning_rate=lambda t: 1e-2)


def _brute_force_ntk_limit_w2(net, mean, std, draw, K, xb, yb):
    """The paper's Eq. 14 term by term (Lambda, Theta from torch.func), then the full W2."""
    net = net.to_empty(device="cpu").double()
    n_m, total = draw.x.shape[0], []
    x = torch.cat([draw.x, xb])
    for c in range(2):
        p = {k: v[c] for k, v in mean.items()}
        jac = jacrev(lambda q: functional_call(net, q, (x,)))(p)
        f = functional_call(net, p, (x,))[:, 0]
        J = torch.cat([jac[k][:, 0].reshape(x.shape[0], -1) for k in p], -1)
        s2 = torch.cat([std[k][c].reshape(-1) for k in p]).pow(2)
        lam, theta = (J * s2) @ J.T, J @ J.T
        M, B = slice(0, n_m), slice(n_m, None)
        inv = torch.linalg.inv(theta[B, B] + NUGGET * torch.eye(len(xb), dtype=F64))
        m_inf = f[M] - theta[M, B] @ inv @ (f[B] - yb)
        k_inf = (lam[M, M] - lam[M, B] @ inv @ theta[B, M] - theta[M, B] @ inv @ lam[B, M]
                 + theta[M, B] @ inv @ lam[B, B] @ inv @ theta[B, M])
        cov = k_inf + NUGGET * torch.eye(n_m, dtype=F64)
        total.append(gaussian_w2(m_inf, cov, draw.mean[0], K, squared=True))
    return torch.stack(total)


@pytest.mark.parametrize("sizes", [(4,), (4, 3)])
def test_ntk_limit_w2_equals_the_papers_eq14_term_by_term(sizes):
    net, problem, mean, std, draw, K = _setup(sizes)
    gen = torch.Generator().manual_seed(3)
    xb = torch.randn(5, 2, generator=gen, dtype=F64)
    yb = torch.randn(5, generator=gen, dtype=F64)
    got = ifbnn.linearized_w2(problem, mean, std, draw, batch={"x": xb, "y": yb[:, None]})
    expected = _brute_force_ntk_limit_w2(net, mean, std, draw, K, xb, yb)
    torch.testing.assert_close(got, expected, rtol=1e-7, atol=1e-8)
    per_set = {"x": xb.expand(2, 5, 2), "y": yb[None, :, None].expand(2, 5, 1)}
    torch.testing.assert_close(ifbnn.linearized_w2(problem, mean, std, draw, batch=per_set), got)


def test_ntk_limit_needs_a_gaussian_likelihood():
    from skfbnn.likelihoods import CategoricalLikelihood

    _, problem, *_ = _setup((), n_out=2)
    problem.likelihood = CategoricalLikelihood()
    with pytest.raises(ValueError, match="ntk_limit"):
        ifbnn.build(problem, learning_rate=lambda t: 1e-2, ntk_limit=True)
