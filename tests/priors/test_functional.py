"""Tests for skfbnn.priors.functional.FunctionalPrior."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy import stats

from skfbnn.priors.functional import FunctionalPrior, MeasurementDraw
from skfbnn.priors.gp import GPPrior, make_kernel
from skfbnn.priors.measurement import MeasurementSampler
from skfbnn.stats.gaussian import NotPSDError, jittered_cholesky

F64 = torch.float64


def _prior(n_out: int = 2, nugget: float = 0.05, M: int = 8, dtype=F64):
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(20, 2, generator=gen, dtype=dtype)
    gp = GPPrior(make_kernel("rbf", X, n_out), n_out, constant_mean=True)
    gp.mean = torch.linspace(-1.0, 1.0, n_out, dtype=F64)
    sampler = MeasurementSampler(X, M, 0.5, 0.1)
    return FunctionalPrior(gp, sampler, nugget), sampler


def _rbf(gp: GPPrior, x: torch.Tensor) -> torch.Tensor:
    """Independent scaled-RBF kernel matrix of output 0."""
    ls = gp.kernel.base_kernel.lengthscale.detach()[0, 0]
    scale = gp.kernel.outputscale.detach()[0]
    z = x.double() / ls
    return scale * torch.exp(-0.5 * torch.cdist(z, z) ** 2)


def test_each_draw_is_a_fresh_measurement_set():
    fp, _ = _prior()
    gen = torch.Generator().manual_seed(1)
    draws = [fp.draw(gen) for _ in range(70)]  # crosses a block boundary
    for a, b in itertools.pairwise(draws):
        assert isinstance(b, MeasurementDraw)
        assert not torch.equal(a.x, b.x)
    # the box part of every set is different from every other's
    box = torch.stack([d.x[4:] for d in draws])
    assert len({tuple(b.flatten().tolist()) for b in box}) == 70


def test_blocks_of_64_are_consumed_in_order():
    fp, sampler = _prior()
    assert fp.block_size == 64
    gen = torch.Generator().manual_seed(5)
    draws = [fp.draw(gen) for _ in range(130)]
    ref = torch.Generator().manual_seed(5)
    blocks = torch.cat([sampler.sample(64, ref) for _ in range(3)])
    for i, d in enumerate(draws):
        assert torch.equal(d.x, blocks[i]), i
    # the generator is only touched at block boundaries: 3 blocks consumed so far
    assert torch.equal(gen.get_state(), ref.get_state())
    # same seed, fresh prior: identical sequence
    fp2, _ = _prior()
    gen2 = torch.Generator().manual_seed(5)
    for d in draws[:70]:
        d2 = fp2.draw(gen2)
        assert torch.equal(d.x, d2.x) and torch.equal(d.chol, d2.chol)


@pytest.mark.parametrize("nugget", [0.0, 0.05, 1.0])
def test_cholesky_factors_match_kernel_plus_nugget(nugget):
    fp, _ = _prior(nugget=nugget)
    gen = torch.Generator().manual_seed(2)
    for _ in range(3):
        d = fp.draw(gen)
        assert d.x.shape == (8, 2)
        assert d.mean.shape == (2, 8) and d.chol.shape == (2, 8, 8)
        assert d.chol.dtype == d.mean.dtype == F64
        torch.testing.assert_close(d.mean, fp.gp.mean[:, None].expand(2, 8))
        K = _rbf(fp.gp, d.x) + nugget * torch.eye(8, dtype=F64)
        # plus the relative 1e-6 jitter of jittered_cholesky
        if fp.n_escalations == 0:
            K = K + 1e-6 * K.diagonal().mean() * torch.eye(8, dtype=F64)
        for o in range(2):
            L = d.chol[o]
            assert torch.equal(L, L.tril())
            torch.testing.assert_close(L @ L.T, K, rtol=1e-9, atol=1e-10)
    assert fp.n_escalations == 0


def test_float32_network_inputs_keep_float64_factors():
    fp, _ = _prior(dtype=torch.float32)
    d = fp.draw(torch.Generator().manual_seed(0))
    assert d.x.dtype == torch.float32
    assert d.chol.dtype == F64 and d.mean.dtype == F64


@pytest.mark.parametrize("n_out, C", [(1, 1), (2, 3)])
def test_log_prob_matches_independent_mvn(n_out, C):
    fp, _ = _prior(n_out=n_out)
    gen = torch.Generator().manual_seed(3)
    d = fp.draw(gen)
    f = torch.randn(C, 8, n_out, generator=gen, dtype=torch.float32)  # network dtype
    got = FunctionalPrior.log_prob(f, d)
    assert got.shape == (C,) and got.dtype == F64
    expected = np.zeros(C)
    for c in range(C):
        for o in range(n_out):
            cov = (d.chol[o] @ d.chol[o].T).numpy()
            expected[c] += stats.multivariate_normal(d.mean[o].numpy(), cov).logpdf(
                f[c, :, o].double().numpy()
            )
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9)
    # and torch's MultivariateNormal with the factor
    dist = torch.distributions.MultivariateNormal(d.mean, scale_tril=d.chol)
    torch.testing.assert_close(got, dist.log_prob(f.double().transpose(1, 2)).sum(-1))


def test_log_prob_is_differentiable_in_f():
    fp, _ = _prior(n_out=1)
    d = fp.draw(torch.Generator().manual_seed(4))
    f = torch.zeros(2, 8, 1, dtype=F64, requires_grad=True)
    (grad,) = torch.autograd.grad(FunctionalPrior.log_prob(f, d).sum(), f)
    K = d.chol[0] @ d.chol[0].T
    expected = torch.linalg.solve(K, d.mean[0] - f[0, :, 0].detach())
    torch.testing.assert_close(grad[0, :, 0], expected)
    torch.testing.assert_close(grad[1, :, 0], expected)


def test_factorise_escalates_like_jittered_cholesky_only_when_needed():
    fp, _ = _prior(nugget=0.0)
    # mean diagonal 2/3: eigenvalue -1e-4 needs a relative jitter of 1e-3 (3 escalations)
    K = torch.diag(torch.tensor([1.0, 1.0, -1e-4], dtype=F64)).expand(5, 2, 3, 3)
    expected = jittered_cholesky(K, 1e-6)
    torch.testing.assert_close(fp._factorise(K), expected.chol)
    assert fp.n_escalations == expected.n_escalations == 3
    # the usual case: one factorisation of K + nugget + 1e-6 * mean diagonal
    fp, _ = _prior(nugget=0.5)
    K = torch.eye(3, dtype=F64).expand(4, 2, 3, 3)
    torch.testing.assert_close(
        fp._factorise(K), (1.5 + 1e-6 * 1.5) ** 0.5 * torch.eye(3, dtype=F64).expand_as(K)
    )
    assert fp.n_escalations == 0
    with pytest.raises(NotPSDError):
        fp._factorise(torch.full((2, 3, 3), float("nan"), dtype=F64))


def test_log_prob_without_precomputed_constant_agrees():
    fp, _ = _prior(n_out=2)
    d = fp.draw(torch.Generator().manual_seed(6))
    assert d.log_norm is not None
    f = torch.randn(3, 8, 2, generator=torch.Generator().manual_seed(7))
    bare = MeasurementDraw(d.x, d.mean, d.chol)
    torch.testing.assert_close(FunctionalPrior.log_prob(f, bare), FunctionalPrior.log_prob(f, d))
