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


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_the_w2_is_its_mean_part_plus_its_covariance_part(reduction):
    _, problem, mean, std, draw, _ = _setup((4, 3), n_out=2)
    leaves = [{k: v.clone().requires_grad_(True) for k, v in d.items()} for d in (mean, std)]
    whole = ifbnn.linearized_w2(problem, *leaves, draw, reduction)
    parts = (ifbnn.mean_part(problem, leaves[0], draw, reduction)
             + ifbnn.linearized_w2(problem, *leaves, draw, reduction, covariance_only=True))
    torch.testing.assert_close(parts, whole, rtol=1e-12, atol=1e-12)
    inputs = [v for d in leaves for v in d.values()]
    expected = torch.autograd.grad(whole.sum(), inputs)
    got = torch.autograd.grad(parts.sum(), inputs)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-12)


def _ifbnn_run(interval, n_steps, seed=4):
    """``n_steps`` ifBNN updates with ``w2_interval=interval``, a fresh batch each step;
    states, infos, batches and each step's generator state (for its Monte-Carlo draws)."""
    _, problem, mean, _, draw, _ = _setup((4,))
    gen = torch.Generator().manual_seed(seed)
    transform = ifbnn.build(problem, learning_rate=lambda t: 1e-2, w2_interval=interval)
    states, infos, batches, gen_states = [transform.init(mean)], [], [], []
    for _ in range(n_steps):
        x = torch.randn(10, 2, generator=gen, dtype=F64)
        batches.append({"x": x, "y": torch.sin(x[:, :1]), "measure": draw})
        gen_states.append(gen.get_state())
        state, info = transform.update(states[-1], batches[-1], gen)
        states.append(state)
        infos.append(info)
    return problem, states, infos, batches, gen_states


def test_w2_interval_one_is_the_whole_w2_and_an_evaluation_step_matches_it():
    *_, whole_states, whole_infos, _, _ = _ifbnn_run(1, 1)
    *_, lazy_states, lazy_infos, _, _ = _ifbnn_run(4, 1)
    assert whole_states[1].regularizer is None
    for k in whole_states[1].mean:
        torch.testing.assert_close(lazy_states[1].mean[k], whole_states[1].mean[k],
                                   rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(lazy_infos[0].w2, whole_infos[0].w2, rtol=1e-12, atol=0)
    torch.testing.assert_close(lazy_infos[0].objective, whole_infos[0].objective,
                               rtol=1e-12, atol=0)


def test_a_lazy_w2_evaluates_its_covariance_part_every_interval_steps(monkeypatch):
    """At step t the gradient is the likelihood's and the W2's mean part's at t plus the
    covariance part's at the last step evaluated, t - t % 3."""
    calls = []
    w2 = ifbnn.linearized_w2
    monkeypatch.setattr(ifbnn, "linearized_w2", lambda *a, **k: calls.append(
        k.get("covariance_only", False)) or w2(*a, **k))
    problem, states, infos, batches, gen_states = _ifbnn_run(3, 7)
    assert calls == [True] * 3  # steps 0, 3 and 6, and never the whole W2
    for t in range(7):
        s = t - t % 3
        variational = ifbnn.leaves(states[t])
        gen = torch.Generator().set_state(gen_states[t])
        with torch.enable_grad():
            value, _ = ifbnn._objective(variational, batches[t], gen, problem=problem, n_mc=1,
                                        beta=1.0, reduction="sum", whole=False)
            fresh = torch.autograd.grad(value.sum(), list(variational.values()),
                                        allow_unused=True, materialize_grads=True)
        stale, part = ifbnn._covariance_part(states[s], batches[s]["measure"],
                                             problem=problem, beta=1.0, reduction="sum")
        expected = sum((f + g).reshape(2, -1).pow(2).sum(-1)
                       for f, g in zip(fresh, stale.values(), strict=True)).sqrt()
        torch.testing.assert_close(infos[t].grad_norm, expected, rtol=1e-9, atol=0)
        torch.testing.assert_close(states[t + 1].regularizer[1], part, rtol=1e-12, atol=0)
    # the stale covariance part is not the fresh one: the test can tell them apart
    fresh_part = ifbnn._covariance_part(states[2], batches[2]["measure"], problem=problem,
                                        beta=1.0, reduction="sum")[0]
    stale_part = states[3].regularizer[0]
    assert not all(torch.allclose(fresh_part[k], stale_part[k], rtol=1e-3) for k in stale_part)
