"""ifBDE: beta = 0 is the deep ensemble; members' Gaussians and the barycenter against
closed forms (TESTING.md 1.7, 1.8)."""

from __future__ import annotations

from functools import partial

import pytest
import torch

from skfbnn.inference.ensemble import deep_ensemble, ifbde, random_function
from skfbnn.inference.objective import make_log_posterior
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import HeteroscedasticGaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.jacobian import mlp_jacobian
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.functional import FunctionalPrior, FunctionPrior, MeasurementDraw
from skfbnn.priors.weight import WeightPrior
from skfbnn.stats.wasserstein import gaussian_barycenter, gaussian_w2

F64 = torch.float64
NUGGET = 0.1


def _draw(M=5, seed=3, n_out=1):
    gen = torch.Generator().manual_seed(seed)
    xm = torch.randn(M, 2, generator=gen, dtype=F64)
    K = torch.exp(-0.5 * torch.cdist(xm, xm).pow(2)) + NUGGET * torch.eye(M, dtype=F64)
    return MeasurementDraw(xm, 0.2 * torch.randn(n_out, M, generator=gen, dtype=F64),
                           torch.linalg.cholesky(K).expand(n_out, M, M)), K


def _problem(net, likelihood, n=20):
    prior = FunctionPrior(FunctionalPrior(None, None, NUGGET))
    return BayesProblem(make_forward(net), likelihood, prior, n,
                        jacobian=partial(mlp_jacobian, net))


def test_beta_zero_is_the_deep_ensemble_step_for_step():
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(2, 2, (6,), "tanh")
    likelihood = HeteroscedasticGaussianLikelihood()
    problem = _problem(net, likelihood)
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    ours = ifbde.build(problem, learning_rate=lambda t: 1e-2, prior_std=1.0, beta=0.0)
    theirs = deep_ensemble.build(
        BayesProblem(problem.forward, likelihood, WeightPrior(1.0), 20),
        learning_rate=lambda t: 1e-2)
    a, b = ours.init(params), theirs.init(params)
    draw, _ = _draw()
    for _ in range(5):
        x = torch.randn(3, 8, 2, generator=gen, dtype=F64)
        batch = {"x": x, "y": torch.sin(x[..., :1]), "measure": draw}
        a, _ = ours.update(a, batch, gen)
        b, _ = theirs.update(b, {**batch, "measure": None}, gen)
    for k in params:
        torch.testing.assert_close(a.params[k], b.params[k], rtol=0, atol=0)


def test_members_without_hidden_layer_are_the_bayesian_linear_regression_posterior():
    """f = Phi w with w ~ N(0, s^2 I): conditioning on n points with noise nu gives
    Phi_M (I / s^2 + Phi_B^T Phi_B / nu)^{-1} Phi_M^T (plus nu I, the nugget)."""
    gen = torch.Generator().manual_seed(1)
    net = build_mlp(2, 1, (), "tanh")
    problem = _problem(net, HeteroscedasticGaussianLikelihood())
    params = init_params(net, 2, gen, device=torch.device("cpu"), dtype=F64)
    x = torch.randn(2, 7, 2, generator=gen, dtype=F64)
    draw, _ = _draw()
    s = 1.7
    means, covs = ifbde.member_covariances(problem, params, x, draw.x, 1, s, NUGGET)
    phi_m = torch.cat([draw.x, torch.ones(5, 1, dtype=F64)], 1)
    for c in range(2):
        phi_b = torch.cat([x[c], torch.ones(7, 1, dtype=F64)], 1)
        precision = torch.eye(3, dtype=F64) / s**2 + phi_b.T @ phi_b / NUGGET
        exact = phi_m @ torch.linalg.solve(precision, phi_m.T) + NUGGET * torch.eye(5, dtype=F64)
        torch.testing.assert_close(covs[c, 0], exact, rtol=1e-9, atol=1e-11)
        w = torch.cat([params["0.weight"][c].reshape(-1), params["0.bias"][c]])
        torch.testing.assert_close(means[c, 0], phi_m @ w)


def _steps(problem, params, gen_seed=6, **kwargs):
    gen = torch.Generator().manual_seed(gen_seed)
    transform = ifbde.build(problem, learning_rate=lambda t: 1e-2, **kwargs)
    state = transform.init(params)
    draw, _ = _draw()
    for _ in range(3):
        x = torch.randn(3, 8, 2, generator=gen, dtype=F64)
        state, info = transform.update(state, {"x": x, "y": torch.sin(x[..., :1]),
                                               "measure": draw}, gen)
    return state.params, info.w2


def test_ntk_scale_none_is_the_weight_prior_scale_and_a_float_sets_the_kernel_alone():
    """ntk_scale=None linearises the weight prior (kernel prior_std^2 J J^T); a float
    replaces that scale in the regulariser only, and the W2 sees kernel ntk_scale^2 J J^T."""
    gen = torch.Generator().manual_seed(7)
    net = build_mlp(2, 2, (6,), "tanh")
    problem = _problem(net, HeteroscedasticGaussianLikelihood())
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    default, w2_default = _steps(problem, params, prior_std=2.0, ntk_scale=None)
    explicit, w2_explicit = _steps(problem, params, prior_std=2.0, ntk_scale=2.0)
    plain, w2_plain = _steps(problem, params, prior_std=2.0, ntk_scale=1.0)
    for k in params:
        torch.testing.assert_close(default[k], explicit[k], rtol=0, atol=0)
    assert float(w2_plain[0]) != pytest.approx(float(w2_default[0]), rel=1e-3)
    # the scale multiplies the NTK before conditioning: s^2 (Theta_MM - Theta_MB (Theta_BB
    # + nu / s^2 I)^{-1} Theta_BM) + nu I
    x = torch.randn(3, 8, 2, generator=torch.Generator().manual_seed(8), dtype=F64)
    draw, _ = _draw()
    _, cov = ifbde.member_covariances(problem, params, x, draw.x, 1, 2.0, NUGGET)
    _, ntk = problem.ntk(params, torch.cat([x, draw.x.expand(3, -1, -1)], 1), 1)
    expected = 4 * ifbde.conditioned_covariance(ntk.double(), 8, NUGGET / 4)
    torch.testing.assert_close(cov, expected + NUGGET * torch.eye(5, dtype=F64))


@pytest.mark.parametrize("aggregate", ["barycenter", "average"])
def test_identical_members_aggregate_to_themselves(aggregate):
    draw, K = _draw()
    gen = torch.Generator().manual_seed(2)
    B = torch.randn(5, 5, generator=gen, dtype=F64)
    cov = B @ B.T + 0.1 * torch.eye(5, dtype=F64)
    mean = torch.randn(5, generator=gen, dtype=F64)
    got = ifbde.aggregate_w2(mean.expand(4, 1, 5), cov.expand(4, 1, 5, 5), draw, aggregate)
    expected = gaussian_w2(mean, cov, draw.mean[0], K, squared=True)
    assert float(got) == pytest.approx(float(expected), rel=1e-8)


def test_barycenter_aggregate_is_the_w2_of_the_converged_barycenter():
    draw, K = _draw()
    gen = torch.Generator().manual_seed(4)
    B = torch.randn(3, 5, 5, generator=gen, dtype=F64)
    covs = (B @ B.transpose(1, 2) + 0.2 * torch.eye(5, dtype=F64)).unsqueeze(1)
    means = torch.randn(3, 1, 5, generator=gen, dtype=F64)
    got = ifbde.aggregate_w2(means, covs, draw, "barycenter", barycenter_iter=100)
    mean, S = gaussian_barycenter(means[:, 0], covs[:, 0], tol=1e-13, max_iter=500)
    expected = gaussian_w2(mean, S, draw.mean[0], K, squared=True)
    assert float(got) == pytest.approx(float(expected), rel=1e-6)
    # members this far apart: one map from their average is not yet the barycenter
    one_map = ifbde.aggregate_w2(means, covs, draw, "barycenter")
    assert float(one_map) != pytest.approx(float(expected), rel=1e-4)
    average = ifbde.aggregate_w2(means, covs, draw, "average")
    assert float(average) != pytest.approx(float(got), rel=1e-3)  # they do differ


def _member_covariances(seed=6, members=5, M=8):
    """Conditioned NTK covariances of ``members`` randomly initialised 2-16-1 tanh networks,
    as ifBDE forms them, with the measurement draw."""
    gen = torch.Generator().manual_seed(seed)
    net = build_mlp(2, 1, (16,), "tanh")
    problem = _problem(net, HeteroscedasticGaussianLikelihood())
    params = init_params(net, members, gen, device=torch.device("cpu"), dtype=F64)
    draw, _ = _draw(M=M)
    x = torch.randn(members, 10, 2, generator=gen, dtype=F64)
    return ifbde.member_covariances(problem, params, x, draw.x, 1, 1.0, NUGGET)[1], draw


def test_one_map_from_the_average_is_the_barycenter_of_ifbde_members_to_first_order():
    """The default (``barycenter_iter=0``): the average of members' covariances of the kind
    ifBDE forms is within a few per cent of their barycenter, so one fixed-point map from it
    gives the squared W2 to second order in that distance, and its gradient to first
    order. Oracles: the converged barycenter's W2 (value), and central differences of it
    along random symmetric directions (gradient)."""
    covs, draw = _member_covariances()
    means = torch.zeros(covs.shape[:-1], dtype=F64)
    exact = float(ifbde.aggregate_w2(means, covs, draw, "barycenter", barycenter_iter=100))
    leaf = covs.clone().requires_grad_(True)
    value = ifbde.aggregate_w2(means, leaf, draw, "barycenter")
    (grad,) = torch.autograd.grad(value, leaf)
    assert float(value.detach()) == pytest.approx(exact, rel=1e-4)
    gen = torch.Generator().manual_seed(7)
    for _ in range(3):
        D = torch.randn(covs.shape, generator=gen, dtype=F64)
        D = 0.5 * (D + D.transpose(-1, -2))
        h = 1e-5
        fd = (ifbde.aggregate_w2(means, covs + h * D, draw, "barycenter", barycenter_iter=100)
              - ifbde.aggregate_w2(means, covs - h * D, draw, "barycenter",
                                   barycenter_iter=100)) / (2 * h)
        assert float((grad * D).sum()) == pytest.approx(float(fd), rel=1e-2)


def test_the_fixed_point_iterations_converge_to_the_barycenter():
    covs, draw = _member_covariances()
    means = torch.zeros(covs.shape[:-1], dtype=F64)
    exact = float(ifbde.aggregate_w2(means, covs, draw, "barycenter", barycenter_iter=100))
    errors = [abs(float(ifbde.aggregate_w2(means, covs, draw, "barycenter",
                                           barycenter_iter=n)) - exact) for n in range(3)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-6 * exact


def test_the_regulariser_reaches_every_member():
    gen = torch.Generator().manual_seed(5)
    net = build_mlp(2, 1, (4,), "tanh")
    problem = _problem(net, HeteroscedasticGaussianLikelihood())
    params = {k: v.requires_grad_(True) for k, v in
              init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64).items()}
    draw, _ = _draw()
    x = torch.randn(3, 6, 2, generator=gen, dtype=F64)
    means, covs = ifbde.member_covariances(problem, params, x, draw.x, 1, 1.0, NUGGET)
    w2 = ifbde.aggregate_w2(means, covs, draw, "barycenter")
    grad = torch.autograd.grad(w2, params["0.weight"])[0]
    assert bool((grad.reshape(3, -1).abs().sum(1) > 0).all())
    assert bool(torch.isfinite(grad).all())


def _rf_problem(net, likelihood, n=20):
    prior = FunctionPrior(FunctionalPrior(None, None, NUGGET))
    return BayesProblem(make_forward(net), likelihood, prior, n, network=net)


def test_random_function_without_hidden_layer_changes_nothing():
    """w* is zero on the readout, the only layer of a linear model: g = 0, so the run is
    the one without the term, step for step (the regulariser on)."""
    net = build_mlp(2, 1, (), "tanh")
    gen = torch.Generator().manual_seed(8)
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    runs = []
    for flag in (False, True):
        t = ifbde.build(_rf_problem(net, HeteroscedasticGaussianLikelihood()),
                        learning_rate=lambda t: 1e-2, beta=1.0, random_function=flag)
        state, batches = t.init(params, None, torch.Generator().manual_seed(0)), \
            torch.Generator().manual_seed(1)
        draw, _ = _draw()
        for _ in range(4):
            x = torch.randn(3, 8, 2, generator=batches, dtype=F64)
            state, _ = t.update(state, {"x": x, "y": torch.sin(x[..., :1]), "measure": draw},
                                batches)
        runs.append(state.params)
    for k in params:
        torch.testing.assert_close(runs[1][k], runs[0][k], rtol=0, atol=0)
    assert set(runs[1]) - set(runs[0])  # the (zero) term is stored


def test_random_function_enters_the_likelihood_and_the_regulariser_means():
    """One step's objective is the members' log posterior of f + g, its W2 that of the
    members' means shifted by g at the measurement points; the term never moves."""
    net = build_mlp(2, 2, (5,), "tanh")  # a mean and a variance head
    gen = torch.Generator().manual_seed(9)
    likelihood = HeteroscedasticGaussianLikelihood()
    problem = _rf_problem(net, likelihood)
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    t = ifbde.build(problem, learning_rate=lambda t: 1e-2, beta=1.0, prior_std=1.0,
                    ntk_scale=None, random_function=True)
    state = t.init(params, None, gen)
    draw, _ = _draw()
    x = torch.randn(3, 8, 2, generator=gen, dtype=F64)
    batch = {"x": x, "y": torch.sin(x[..., :1]), "measure": draw}
    new, info = t.update(state, batch, gen)
    own, fixed = random_function.split(state.params)
    base = make_forward(net)
    f = base(own, x) + random_function.offset(base, state.params, x)
    expected = (20 / 8 * likelihood.log_prob(f, batch["y"], own)
                + WeightPrior(1.0).log_prob(own, None, None)) / 20
    torch.testing.assert_close(info.objective, expected)
    means, covs = ifbde.member_covariances(problem, own, x, draw.x, 1, 1.0, NUGGET)
    g = random_function.offset(base, state.params, draw.x)[..., :1].transpose(1, 2)
    w2 = ifbde.aggregate_w2(means + g, covs, draw, "barycenter")
    torch.testing.assert_close(info.w2, w2.expand(3))
    assert not torch.allclose(w2, ifbde.aggregate_w2(means, covs, draw, "barycenter"))
    for k, v in fixed.items():
        assert torch.equal(new.params[k], v)
    assert not torch.equal(new.params["0.weight"], own["0.weight"])


def test_trained_linear_members_reach_the_posterior_mean_not_draws_of_it():
    """Why the random term cannot make MAP members posterior draws without a hidden layer:
    g = 0 there (w* is zero on the readout), and every member of a linear model maximises
    the same strictly concave log posterior, so all of them end at the exact Bayesian
    linear-regression posterior mean (He et al.'s draws need unregularised, noise-free
    gradient flow from a prior draw)."""
    import math

    from skfbnn.likelihoods import GaussianLikelihood

    gen = torch.Generator().manual_seed(10)
    net = build_mlp(2, 1, (), "tanh")
    n, s, noise = 10, 0.8, 0.3
    X = torch.randn(n, 2, generator=gen, dtype=F64)
    y = X @ torch.tensor([[0.5], [-1.0]], dtype=F64) + noise * torch.randn(n, 1, generator=gen,
                                                                        dtype=F64)
    problem = BayesProblem(make_forward(net), GaussianLikelihood([noise]),
                           FunctionPrior(FunctionalPrior(None, None, NUGGET)), n, network=net)
    steps = 1500
    t = ifbde.build(problem, learning_rate=lambda i: 0.02 * 0.5 * (1 + math.cos(math.pi * i
                                                                                / steps)),
                    prior_std=s, beta=0.0, random_function=True)
    state = t.init(init_params(net, 4, gen, device=torch.device("cpu"), dtype=F64), None, gen)
    for _ in range(steps):
        state, _ = t.update(state, {"x": X, "y": y, "measure": None}, gen)
    phi = torch.cat([X, torch.ones(n, 1, dtype=F64)], 1)
    precision = torch.eye(3, dtype=F64) / s**2 + phi.T @ phi / noise**2
    exact = torch.linalg.solve(precision, phi.T @ y / noise**2).ravel()
    w = torch.cat([state.params["0.weight"].reshape(4, -1), state.params["0.bias"]], 1)
    torch.testing.assert_close(w, exact.expand(4, 3), rtol=0, atol=1e-5)


def _lazy_run(interval, n_steps, monkeypatch=None, seed=9, **options):
    """``n_steps`` ifBDE updates with ``w2_interval=interval`` (``beta=1`` unless
    ``options`` say otherwise); states and infos."""
    gen = torch.Generator().manual_seed(seed)
    net = build_mlp(2, 2, (6,), "tanh")
    problem = _problem(net, HeteroscedasticGaussianLikelihood())
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    transform = ifbde.build(problem, learning_rate=lambda t: 1e-2, prior_std=1.0,
                            w2_interval=interval, **{"beta": 1.0, **options})
    states, infos, batches = [transform.init(params)], [], []
    draw, _ = _draw()
    for _ in range(n_steps):
        x = torch.randn(3, 8, 2, generator=gen, dtype=F64)
        batches.append({"x": x, "y": torch.sin(x[..., :1]), "measure": draw})
        state, info = transform.update(states[-1], batches[-1], gen)
        states.append(state)
        infos.append(info)
    return problem, states, infos, batches


def _gradients(problem, params, batch, beta):
    """Direct autograd of (log posterior - beta W2) / N: the likelihood's part, the
    regulariser's and the regulariser's mean part ``beta |m - m_0|^2``."""
    members = BayesProblem(problem.forward, problem.likelihood, WeightPrior(1.0), 20)
    leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    log_post = make_log_posterior(members)(leaves, {**batch, "measure": None}).sum()
    draw = batch["measure"]
    means, covs = ifbde.member_covariances(problem, leaves, batch["x"], draw.x, 1, 0.25,
                                           NUGGET)
    w2 = ifbde.aggregate_w2(means, covs, draw, "barycenter")
    mean_part = (problem.forward(leaves, draw.x)[..., 0].mean(0) - draw.mean[0]).pow(2).sum()
    grad = partial(torch.autograd.grad, inputs=list(leaves.values()), retain_graph=True)
    return grad(log_post), grad(beta * w2), grad(beta * mean_part)


def _norms(grads):
    return sum(g.reshape(len(g), -1).pow(2).sum(-1) for g in grads).sqrt()


def test_the_w2_regulariser_at_every_step_is_the_gradient_of_the_whole_objective():
    problem, states, infos, batches = _lazy_run(1, 2)
    for t in range(2):
        lik, reg, _ = _gradients(problem, states[t].params, batches[t], 1.0)
        expected = _norms([(a - b) / 20 for a, b in zip(lik, reg, strict=True)])
        torch.testing.assert_close(infos[t].grad_norm, expected, rtol=1e-9, atol=0)


def test_w2_scale_batch_counts_the_regulariser_once_per_minibatch():
    """N = 20 rows, minibatches of 8: the W2 weighs N / n = 2.5 times beta."""
    problem, states, infos, batches = _lazy_run(1, 2, beta=0.4, w2_scale="batch")
    for t in range(2):
        lik, reg, _ = _gradients(problem, states[t].params, batches[t], 0.4 * 20 / 8)
        expected = _norms([(a - b) / 20 for a, b in zip(lik, reg, strict=True)])
        torch.testing.assert_close(infos[t].grad_norm, expected, rtol=1e-9, atol=0)
        _, once, _ = _gradients(problem, states[t].params, batches[t], 0.4)
        assert not torch.allclose(infos[t].grad_norm, _norms(
            [(a - b) / 20 for a, b in zip(lik, once, strict=True)]), rtol=1e-3)


def test_a_lazy_regulariser_evaluates_its_covariance_part_every_interval_steps(monkeypatch):
    """At step t the gradient is the likelihood's and the W2's mean part's at t, and the
    covariance part's (W2 minus its mean part) at the last step evaluated, t - t % 3."""
    calls = []
    covariances = ifbde.member_covariances
    monkeypatch.setattr(ifbde, "member_covariances",
                        lambda *a, **k: calls.append(1) or covariances(*a, **k))
    problem, states, infos, batches = _lazy_run(3, 7)
    assert len(calls) == 3  # steps 0, 3 and 6
    for t in range(7):
        s = t - t % 3
        lik, _, mean_part = _gradients(problem, states[t].params, batches[t], 1.0)
        _, reg, stale_mean_part = _gradients(problem, states[s].params, batches[s], 1.0)
        expected = _norms([(a - m - (r - sm)) / 20 for a, m, r, sm in
                           zip(lik, mean_part, reg, stale_mean_part, strict=True)])
        torch.testing.assert_close(infos[t].grad_norm, expected, rtol=1e-9, atol=0)
    # the stale covariance part is not the fresh one: the test can tell them apart
    _, fresh, fresh_mean = _gradients(problem, states[2].params, batches[2], 1.0)
    _, stale, stale_mean = _gradients(problem, states[0].params, batches[0], 1.0)
    assert not torch.allclose(fresh[0] - fresh_mean[0], stale[0] - stale_mean[0], rtol=1e-3)
