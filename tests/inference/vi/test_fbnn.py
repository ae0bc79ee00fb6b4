"""fBNN: the KL surrogate's gradient against the Gaussian closed form (TESTING.md 1.6),
and the injected function noise through a whole fit against its closed form."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import chi2

from skfbnn import FBNNRegressor
from skfbnn.inference.types import BayesProblem
from skfbnn.inference.vi import fbnn
from skfbnn.likelihoods import HeteroscedasticGaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.functional import FunctionalPrior, FunctionPrior, MeasurementDraw

F64 = torch.float64
D = 4


def _prior():
    gen = torch.Generator().manual_seed(10)
    B = torch.randn(D, D, generator=gen, dtype=F64)
    K = B @ B.T / D + 0.5 * torch.eye(D, dtype=F64)
    m = torch.randn(D, generator=gen, dtype=F64)
    chol = torch.linalg.cholesky(K)[None]
    return MeasurementDraw(torch.zeros(D, 1, dtype=F64), m[None], chol), K, m


def _surrogate_gradients(seed, n_particles=400):
    """Gradients in (mu, s) of the surrogate for q = N(mu, s^2 I), particles mu + s eps."""
    draw, _, _ = _prior()
    gen = torch.Generator().manual_seed(seed)
    mu = torch.linspace(-0.5, 0.5, D, dtype=F64).requires_grad_(True)
    s = torch.tensor(0.7, dtype=F64, requires_grad=True)
    eps = torch.randn(1, n_particles, D, 1, generator=gen, dtype=F64)
    f = mu.reshape(1, 1, D, 1) + s * eps
    kl = fbnn.kl_surrogate(f, draw, threshold=0.99).sum()
    return torch.autograd.grad(kl, (mu, s)), mu.detach(), float(s.detach())


def test_kl_gradient_in_the_mean_is_the_cross_entropy_gradient():
    """E[score] = 0, so d KL / d mu = K^{-1} (mu - m): exact up to Monte-Carlo error."""
    _, K, m = _prior()
    estimates = [_surrogate_gradients(seed)[0][0] for seed in range(5)]
    (_, mu, _) = _surrogate_gradients(0)
    expected = torch.linalg.solve(K, mu - m)
    est = torch.stack(estimates)
    # The entropy term's exact mean gradient is 0; SSGE's is not quite (its score is biased
    # by ~20% in slope, TESTING.md 1.6): measured 0.01-0.03 here, so 2% of the value is
    # allowed on top of the Monte-Carlo error (and |z| < 4 is still far from a sign error).
    z = (est.mean(0) - expected) / (est.std(0) / np.sqrt(len(est)) + 0.02 * expected.abs())
    assert bool((z.abs() < 4).all()), (est.mean(0), expected)


def test_entropy_gradient_in_the_scale_is_d_over_s_up_to_the_known_ssge_bias():
    """d KL / d s = -D / s + s tr(K^{-1}); SSGE estimates the entropy part -D/s with the
    slope bias measured in TESTING.md 1.6 (a sigma^2 in [-1.4, -0.8])."""
    _, K, _ = _prior()
    ce_part = []
    ratios = []
    for seed in range(5):
        (_, g_s), _, s = _surrogate_gradients(seed)
        ce_part = s * float(torch.linalg.inv(K).trace())
        ratios.append((ce_part - float(g_s)) / (D / s))  # estimated entropy gradient / exact
    assert 0.8 <= np.mean(ratios) <= 1.4, ratios


def test_the_kl_surrogate_is_batched_over_sets():
    draw, _, _ = _prior()
    gen = torch.Generator().manual_seed(0)
    f = torch.randn(3, 50, D, 1, generator=gen, dtype=F64)
    both = fbnn.kl_surrogate(f, draw, 0.99)
    one = torch.cat([fbnn.kl_surrogate(f[i:i + 1], draw, 0.99) for i in range(3)])
    torch.testing.assert_close(both, one)


def test_build_needs_a_functional_prior():
    from skfbnn.inference.types import BayesProblem

    with pytest.raises(ValueError, match="FunctionPrior"):
        fbnn.build(BayesProblem(lambda p, x: x, log_likelihood=lambda f, y, p: 0),
                   learning_rate=lambda t: 1e-3)


def test_implicit_prior_cross_entropy_gradient_matches_the_gaussian_closed_form():
    """An implicit prior that samples N(m, K): SSGE's cross-entropy gradient in the mean of
    q = N(mu, s^2 I) points along the exact K^{-1}(mu - m) (mean cosine > 0.85) with the
    known SSGE slope bias (ratio of norms in [0.7, 1.6], TESTING.md 1.6), with the isotropic
    bandwidth. Measured with the per-dimension one (the reference's): cosines 0.15-0.91,
    ratios 0.96-2.2 on the same draws: that estimate is much noisier off the draws."""
    draw, K, m = _prior()
    L = torch.linalg.cholesky(K)
    mu0 = m + 0.5 * torch.linspace(-1, 1, D, dtype=F64)
    cosines, ratios = [], []
    for seed in range(5):
        gen = torch.Generator().manual_seed(100 + seed)
        prior = (m + torch.randn(300, D, generator=gen, dtype=F64) @ L.T).reshape(300, D, 1)
        mu = mu0.clone().requires_grad_(True)
        f = mu.reshape(1, 1, D, 1) + 0.3 * torch.randn(1, 200, D, 1, generator=gen, dtype=F64)
        exact = fbnn.kl_surrogate(f, draw, 0.99, bandwidth="median")
        implicit = fbnn.kl_surrogate(f, draw, 0.99, prior_draws=prior, bandwidth="median")
        g_exact = torch.autograd.grad(exact.sum(), mu, retain_graph=True)[0]
        g_implicit = torch.autograd.grad(implicit.sum(), mu)[0]
        cosines.append(float(torch.nn.functional.cosine_similarity(g_implicit, g_exact, 0)))
        ratios.append(float(g_implicit.norm() / g_exact.norm()))
    assert np.mean(cosines) > 0.85, cosines
    assert 0.7 <= np.mean(ratios) <= 1.6, ratios


def test_a_bad_prior_sampler_gets_a_clear_error():
    gen = torch.Generator().manual_seed(0)
    x = torch.zeros(5, 1, dtype=F64)
    with pytest.raises(ValueError, match="prior_sampler must return 3 draws at 5 inputs"):
        fbnn.implicit_prior_draws(lambda X, n, rng: np.zeros((n, 4)), x, 3, 1, 0.0, gen)
    got = fbnn.implicit_prior_draws(lambda X, n, rng: np.ones((n, 5)), x, 3, 1, 0.0, gen)
    assert got.shape == (3, 5, 1) and bool((got == 1).all())


@pytest.mark.parametrize("per_set", [False, True])
def test_n_mc_takes_the_likelihood_from_the_first_draws(per_set):
    """With ``n_mc < n_particles`` the measurement values are still every draw's, and the
    expected log-likelihood is the mean over the first ``n_mc`` draws of each set, exactly
    as the one-pass evaluation of all draws gives them (per-set minibatches too)."""
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(2, 2, (6,), "tanh")
    problem = BayesProblem(make_forward(net), HeteroscedasticGaussianLikelihood(),
                           FunctionPrior(FunctionalPrior(None, None, 0.1)), 20)
    C, S, n_mc = 2, 5, 3
    draws = init_params(net, C * S, gen, device=torch.device("cpu"), dtype=F64)
    x = torch.randn(*((C,) if per_set else ()), 7, 2, generator=gen, dtype=F64)
    y = torch.randn(*x.shape[:-1], 1, generator=gen, dtype=F64)
    xm = torch.randn(4, 2, generator=gen, dtype=F64)
    batch = {"x": x, "y": y, "measure": MeasurementDraw(xm, torch.zeros(1, 4, dtype=F64),
                                                        torch.eye(4, dtype=F64)[None])}
    all_ll, all_fm = fbnn._network_values(draws, batch, problem, C, S, S, 1)
    few_ll, few_fm = fbnn._network_values(draws, batch, problem, C, S, n_mc, 1)
    torch.testing.assert_close(few_fm, all_fm, rtol=1e-12, atol=1e-12)
    xs = x.repeat_interleave(S, 0) if per_set else x
    ys = y.repeat_interleave(S, 0) if per_set else y
    each = problem.likelihood.log_prob(problem.forward(draws, xs), ys, draws).reshape(C, S)
    torch.testing.assert_close(all_ll, each.mean(1), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(few_ll, each[:, :n_mc].mean(1), rtol=1e-12, atol=1e-12)
    assert not torch.allclose(few_ll, all_ll)


def test_n_mc_above_n_particles_gets_a_clear_error():
    problem = BayesProblem(lambda p, x: x, HeteroscedasticGaussianLikelihood(),
                           FunctionPrior(FunctionalPrior(None, None, 0.1)), 20)
    with pytest.raises(ValueError, match=r"n_mc must be at most n_particles \(4\).*n_mc=5"):
        fbnn.build(problem, learning_rate=lambda t: 1e-3, n_particles=4, n_mc=5)


def test_injected_function_noise_has_its_closed_form_covariance_through_a_fit(monkeypatch):
    """End to end through ``FBNNRegressor.fit`` with a linear network ``f(x) = w.x + b``:
    at every step the noisy measurement values handed to the KL surrogate are, given the
    step's variational means ``m`` and standard deviations ``s``, independent draws of
    ``N(Phi m, Phi diag(s^2) Phi^T + nu I)`` (``Phi = [x_M, 1]`` at the step's measurement
    set, ``nu = prior_nugget`` the injected variance). Whitened by that covariance, their
    squared norm summed over all particles and steps is exactly chi-square with ``S M``
    degrees of freedom per step. Squaring the injected noise's std (``nu`` to ``nu^2``)
    takes the statistic to about a tenth of its degrees of freedom."""
    states, values = [], []
    update, surrogate = fbnn.update, fbnn.kl_surrogate

    def recording_update(state, *args, **kwargs):
        states.append(({k: v.detach().clone() for k, v in state.mean.items()},
                       {k: v.detach().clone() for k, v in state.std.items()}))
        return update(state, *args, **kwargs)

    def recording_surrogate(noisy, measure, *args, **kwargs):
        values.append((noisy.detach().clone(), measure.x.detach().clone()))
        return surrogate(noisy, measure, *args, **kwargs)

    monkeypatch.setattr(fbnn, "update", recording_update)
    monkeypatch.setattr(fbnn, "kl_surrogate", recording_surrogate)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X @ np.array([1.0, -0.5]) + 0.3 * rng.normal(size=40)
    est = FBNNRegressor(hidden_layer_sizes=(), activation="identity", noise_std=0.3,
                        n_iter=200, init_std=0.05, prior_fit_iter=5, n_samples=2,
                        dtype="float64", device="cpu", random_state=0).fit(X, y)
    assert len(states) == len(values) == 200
    nu = est.prior_nugget
    statistic = dof = 0.0
    for (mean, std), (noisy, xm) in zip(states, values, strict=True):
        Phi = np.column_stack([xm.numpy(), np.ones(len(xm))])
        m = np.append(mean["0.weight"][0, 0].numpy(), mean["0.bias"][0].numpy())
        s = np.append(std["0.weight"][0, 0].numpy(), std["0.bias"][0].numpy())
        cov = (Phi * s**2) @ Phi.T + nu * np.eye(len(xm))
        centred = noisy[0, :, :, 0].numpy() - Phi @ m
        white = np.linalg.solve(np.linalg.cholesky(cov), centred.T)
        statistic, dof = statistic + (white**2).sum(), dof + centred.size
    p_value = 2 * min(chi2.cdf(statistic, dof), chi2.sf(statistic, dof))
    assert p_value > 1e-3, (statistic / dof, dof)
