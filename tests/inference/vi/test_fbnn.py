"""fBNN: the KL surrogate's gradient against the Gaussian closed form (TESTING.md 1.6)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn.inference.vi import fbnn
from skfbnn.priors.functional import MeasurementDraw

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
