"""Tests for skfbnn.likelihoods against torch.distributions and manual formulas."""

from __future__ import annotations

import math

import pytest
import torch

from skfbnn.likelihoods import (
    NOISE_PRIOR_LOC,
    NOISE_PRIOR_SCALE,
    categorical_log_likelihood,
    gaussian_log_likelihood,
    noise_log_prior,
)

F64 = torch.float64
C, N, K = 3, 7, 2


@pytest.fixture
def gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


@pytest.mark.parametrize("noise_shape", [(C, K), (K,)])
@pytest.mark.parametrize("y_shape", [(N, K), (C, N, K)])
def test_gaussian_log_likelihood_matches_normal(gen, noise_shape, y_shape):
    f = torch.randn(C, N, K, generator=gen, dtype=F64)
    y = torch.randn(y_shape, generator=gen, dtype=F64)
    log_noise = torch.randn(noise_shape, generator=gen, dtype=F64) * 0.5
    got = gaussian_log_likelihood(f, y, log_noise)
    scale = log_noise.exp().expand(C, K).unsqueeze(1)  # (C, 1, K)
    expected = torch.distributions.Normal(f, scale).log_prob(y.expand(C, N, K)).sum((1, 2))
    assert got.shape == (C,)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_gaussian_log_likelihood_noise_is_per_chain_and_output(gen):
    """Changing one chain's noise changes only that chain's value."""
    f = torch.randn(C, N, K, generator=gen, dtype=F64)
    y = torch.randn(N, K, generator=gen, dtype=F64)
    log_noise = torch.zeros(C, K, dtype=F64)
    base = gaussian_log_likelihood(f, y, log_noise)
    log_noise[1, 0] = 1.0
    changed = gaussian_log_likelihood(f, y, log_noise)
    assert changed[0] == base[0] and changed[2] == base[2] and changed[1] != base[1]


@pytest.mark.parametrize("y_shape", [(N,), (C, N)])
def test_categorical_log_likelihood_matches_log_softmax_gather(gen, y_shape):
    logits = torch.randn(C, N, 4, generator=gen, dtype=F64) * 3
    y = torch.randint(4, y_shape, generator=gen)
    got = categorical_log_likelihood(logits, y)
    yc = y.expand(C, N)
    expected = torch.zeros(C, dtype=F64)
    for c in range(C):
        for i in range(N):
            row = logits[c, i]
            expected[c] += row[yc[c, i]] - torch.log(torch.exp(row).sum())
    assert got.shape == (C,)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(
        got, torch.distributions.Categorical(logits=logits).log_prob(yc).sum(-1)
    )


def test_categorical_log_likelihood_is_stable_for_large_logits():
    logits = torch.tensor([[[1000.0, 0.0], [0.0, 1000.0]]], dtype=F64)
    got = categorical_log_likelihood(logits, torch.tensor([0, 0]))
    assert got.item() == pytest.approx(-1000.0)


@pytest.mark.parametrize("shape", [(C, 1), (C, K)])
def test_noise_log_prior_matches_normal(gen, shape):
    log_noise = torch.randn(shape, generator=gen, dtype=F64)
    got = noise_log_prior(log_noise)
    normal = torch.distributions.Normal(
        torch.tensor(NOISE_PRIOR_LOC, dtype=F64), torch.tensor(NOISE_PRIOR_SCALE, dtype=F64)
    )
    assert got.shape == (C,)
    torch.testing.assert_close(got, normal.log_prob(log_noise).sum(-1), rtol=1e-12, atol=1e-12)


def test_noise_prior_constants_match_documentation():
    assert NOISE_PRIOR_LOC == pytest.approx(math.log(0.3))
    lo = math.exp(NOISE_PRIOR_LOC - 1.959964 * NOISE_PRIOR_SCALE)
    hi = math.exp(NOISE_PRIOR_LOC + 1.959964 * NOISE_PRIOR_SCALE)
    assert round(lo, 3) == 0.016 and round(hi, 1) == 5.7


# ------------------------------------------------------- likelihood objects
def test_heteroscedastic_heads_log_density_and_beta_weighting():
    from skfbnn.likelihoods import HeteroscedasticGaussianLikelihood

    gen = torch.Generator().manual_seed(0)
    out = torch.randn(2, 5, 2, generator=gen, dtype=torch.float64, requires_grad=True)
    y = torch.randn(5, 1, generator=gen, dtype=torch.float64)
    plain = HeteroscedasticGaussianLikelihood()
    mean, var = out[..., :1], torch.nn.functional.softplus(out[..., 1:]) + 1e-6
    expected = torch.distributions.Normal(mean, var.sqrt()).log_prob(y).sum((1, 2))
    torch.testing.assert_close(plain.log_prob(out, y, {}), expected)
    f, log_std = plain.predictive(out, {})
    torch.testing.assert_close(f, mean)
    torch.testing.assert_close(log_std, 0.5 * var.log())
    weighted = HeteroscedasticGaussianLikelihood(beta=0.5)
    (grad,) = torch.autograd.grad(weighted.log_prob(out, y, {}).sum(), out)
    expected_mean_grad = (y - mean) / var * var.detach().sqrt()  # beta-NLL: var^beta scaling
    torch.testing.assert_close(grad[..., :1], expected_mean_grad.detach())
    # ... while its value stays the log-likelihood, a fixed function of the outputs that a
    # run's objective trace can compare over time (the weighted sum falls as var shrinks)
    torch.testing.assert_close(weighted.log_prob(out, y, {}), expected)
    rows = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.5], dtype=torch.float64)
    torch.testing.assert_close(weighted.log_prob(out, y, {}, weights=rows),
                               plain.log_density(out, y, {}, weights=rows))


def test_gaussian_likelihood_fixed_and_learned_noise():
    from skfbnn.likelihoods import NOISE_PRIOR_LOC, GaussianLikelihood

    f = torch.zeros(3, 4, 2, dtype=torch.float64)
    y = torch.ones(4, 2, dtype=torch.float64)
    fixed = GaussianLikelihood([0.5, 2.0])
    assert not fixed.learned and fixed.init_params(3, 2, "cpu", torch.float64) == {}
    expected = torch.distributions.Normal(0.0, torch.tensor([0.5, 2.0])).log_prob(
        torch.ones(4, 2)).sum().double()
    torch.testing.assert_close(fixed.log_prob(f, y, {}), expected.expand(3))
    assert fixed.log_prior({}) == 0.0
    learned = GaussianLikelihood(None)
    params = learned.init_params(3, 2, "cpu", torch.float64)
    assert params["log_noise"].shape == (3, 2)
    assert torch.all(params["log_noise"] == NOISE_PRIOR_LOC)
    assert learned.log_prior(params).shape == (3,)
    _, log_std = learned.predictive(f, params)
    assert log_std.shape == (3, 1, 2)


def _mle_added_variance(r2: torch.Tensor, var: torch.Tensor) -> float:
    """The exact maximiser over a >= 0 of sum_i log N(r_i; 0, var_i + a), by bisection on
    the score sum_i (r2_i / (var_i + a)^2 - 1 / (var_i + a)), which decreases in a here."""
    def score(a):
        return float((r2 / (var + a) ** 2 - 1 / (var + a)).sum())
    if score(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while score(hi) > 0:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if score(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("seed", range(4))
def test_calibrated_variance_floor_recovers_the_missing_variance(seed):
    """Held-out residuals with variance var_i + a (a = 2, 0.3 in two sets x two outputs; the
    heads' var_i uniform on [0.5, 1.5]): the grid estimate is within one grid step (factor
    2^(12/48)) of the exact maximum-likelihood a, and that is within 4 of its standard errors
    (Fisher information sum_i 1 / (2 (var_i + a)^2)) of the truth."""
    from skfbnn.likelihoods import calibrated_variance_floor

    g = torch.Generator().manual_seed(seed)
    n, truth = 3000, torch.tensor([[2.0, 0.3], [0.3, 2.0]], dtype=F64)
    var = 0.5 + torch.rand(2, n, 2, generator=g, dtype=F64)
    mean = torch.randn(2, n, 2, generator=g, dtype=F64)
    y = mean + (var + truth[:, None, :]).sqrt() * torch.randn(2, n, 2, generator=g, dtype=F64)
    est = calibrated_variance_floor(mean, var, y)
    assert est.shape == (2, 2)
    for c in range(2):
        for o in range(2):
            r2 = (y[c, :, o] - mean[c, :, o]) ** 2
            mle = _mle_added_variance(r2, var[c, :, o])
            assert 2 ** -0.25 <= float(est[c, o]) / mle <= 2 ** 0.25, (est, mle)
            se = float((0.5 / (var[c, :, o] + truth[c, o]) ** 2).sum()) ** -0.5
            assert abs(mle - float(truth[c, o])) < 4 * se, (mle, truth[c, o], se)


def test_calibrated_variance_floor_only_raises():
    """Heads twice too wide: nothing is added (never lowered); the chosen floor never scores
    below no floor."""
    from skfbnn.likelihoods import calibrated_variance_floor

    g = torch.Generator().manual_seed(5)
    mean = torch.zeros(3, 200, 1, dtype=F64)
    y = torch.randn(3, 200, 1, generator=g, dtype=F64)
    assert torch.equal(calibrated_variance_floor(mean, 2 * torch.ones_like(y), y),
                       torch.zeros(3, 1, dtype=F64))
    var = 0.2 * torch.ones_like(y)
    a = calibrated_variance_floor(mean, var, y)

    def score(v):
        return (-0.5 * (y.pow(2) / v + v.log())).sum((1, 2))

    assert bool((score(var + a[:, None, :]) >= score(var)).all()) and bool((a > 0).all())


def test_calibrated_variance_floor_needs_the_rows_to_call_for_it():
    """The likelihood-ratio test: heads that are right (residual variance = var) on 40 rows
    get no floor at the default 5% level, though the unconstrained maximum may add a little;
    threshold=0 keeps that maximum; a clear gap (variance 3 against heads of 1) passes."""
    from skfbnn.likelihoods import calibrated_variance_floor

    g = torch.Generator().manual_seed(3)
    mean, var = torch.zeros(200, 40, 1, dtype=F64), torch.ones(200, 40, 1, dtype=F64)
    right = torch.randn(200, 40, 1, generator=g, dtype=F64)
    tested, raw = (calibrated_variance_floor(mean, var, right, threshold=t)
                   for t in (3.841, 0.0))
    assert bool((raw > 0).sum() > 50)  # about half the sets would get a floor by chance
    assert int((tested > 0).sum()) <= 20  # about 5 expected: 2.5%, a
    # 50:50 mixture of chi2_0 and chi2_1 at the boundary a = 0
    assert bool((tested[tested > 0] == raw[tested > 0]).all())
    gap = 3.0 ** 0.5 * torch.randn(200, 40, 1, generator=g, dtype=F64)
    assert int((calibrated_variance_floor(mean, var, gap) > 0).sum()) >= 190


@pytest.mark.parametrize("seed", range(2))
def test_calibrated_variance_floor_scores_the_spread_without_adding_it(seed):
    """Residual variance var_i + s_i + a (s_i the spread the predictive adds, uniform on
    [0, 1]; a = 2 and 0.3): with ``spread=s`` the estimate is within one grid step of the exact
    maximum-likelihood a with var + s as the heads, and that is within 4 standard errors of the
    truth; ``spread`` of zeros is no spread; the spread never raises the floor."""
    from skfbnn.likelihoods import calibrated_variance_floor

    g = torch.Generator().manual_seed(10 + seed)
    n, truth = 3000, torch.tensor([[2.0], [0.3]], dtype=F64)
    var = 0.5 + torch.rand(2, n, 1, generator=g, dtype=F64)
    s = torch.rand(2, n, 1, generator=g, dtype=F64)
    mean = torch.randn(2, n, 1, generator=g, dtype=F64)
    y = mean + (var + s + truth[:, None, :]).sqrt() * torch.randn(2, n, 1, generator=g, dtype=F64)
    est = calibrated_variance_floor(mean, var, y, spread=s)
    for c in range(2):
        mle = _mle_added_variance((y[c, :, 0] - mean[c, :, 0]) ** 2, var[c, :, 0] + s[c, :, 0])
        assert 2 ** -0.25 <= float(est[c, 0]) / mle <= 2 ** 0.25, (est, mle)
        se = float((0.5 / (var[c, :, 0] + s[c, :, 0] + truth[c, 0]) ** 2).sum()) ** -0.5
        assert abs(mle - float(truth[c, 0])) < 4 * se, (mle, truth[c, 0], se)
    assert torch.equal(calibrated_variance_floor(mean, var, y, spread=torch.zeros_like(s)),
                       calibrated_variance_floor(mean, var, y))
    assert bool((est <= calibrated_variance_floor(mean, var, y)).all())
