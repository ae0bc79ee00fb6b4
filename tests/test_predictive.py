"""Tests for skfbnn.predictive: mixture summaries against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn.predictive import (
    class_probabilities,
    regression_cov,
    regression_moments,
    sample_regression,
)

F64 = torch.float64
D, N, K = 6, 5, 2


@pytest.fixture
def draws():
    gen = torch.Generator().manual_seed(0)
    f = torch.randn(D, N, K, generator=gen, dtype=F64)
    noise_std = torch.rand(D, K, generator=gen, dtype=F64) + 0.5
    return f, noise_std


def test_regression_moments_match_numpy(draws):
    f, noise_std = draws
    mean, epi, alea = regression_moments(f, noise_std**2)
    fn, vn = f.numpy(), noise_std.numpy() ** 2
    for t in (mean, epi, alea):
        assert t.shape == (N, K)
    np.testing.assert_allclose(mean.numpy(), fn.mean(0), rtol=1e-12)
    np.testing.assert_allclose(epi.numpy(), fn.var(0, ddof=0), rtol=1e-12)
    np.testing.assert_allclose(alea.numpy(), np.broadcast_to(vn.mean(0), (N, K)), rtol=1e-12)


def test_regression_cov_matches_numpy(draws):
    f, noise_std = draws
    cov = regression_cov(f, noise_std**2)
    assert cov.shape == (K, N, N)
    for k in range(K):
        aleatoric = (noise_std[:, k] ** 2).mean().item()
        expected = np.cov(f[:, :, k].numpy().T, ddof=0) + np.eye(N) * aleatoric
        np.testing.assert_allclose(cov[k].numpy(), expected, rtol=1e-12, atol=1e-12)
    _, epi, alea = regression_moments(f, noise_std**2)
    torch.testing.assert_close(cov.diagonal(dim1=-2, dim2=-1), (epi + alea).T)


def test_sample_regression_shape_determinism_and_support(draws):
    f, noise_std = draws
    a = sample_regression(f, noise_std, 50, torch.Generator().manual_seed(1))
    b = sample_regression(f, noise_std, 50, torch.Generator().manual_seed(1))
    c = sample_regression(f, noise_std, 50, torch.Generator().manual_seed(2))
    assert a.shape == (N, K, 50) and a.dtype == F64
    assert torch.equal(a, b) and not torch.equal(a, c)
    # without noise every sample is one of the draws (the same draw for all points)
    s = sample_regression(f, torch.zeros_like(noise_std), 40, torch.Generator().manual_seed(3))
    for j in range(40):
        matches = [torch.equal(s[..., j], f[d]) for d in range(D)]
        assert sum(matches) >= 1
    assert len(set(s[0, 0].tolist())) > 1  # different draws were picked


def test_sample_regression_moments_match_mixture(draws):
    f, noise_std = draws
    S = 40_000
    s = sample_regression(f, noise_std, S, torch.Generator().manual_seed(4)).numpy()
    mean, epi, alea = (t.numpy() for t in regression_moments(f, noise_std**2))
    var = epi + alea
    # MC standard errors; 4.5 sd with N*K = 10 statistics each
    se_mean = np.sqrt(var / S)
    assert (np.abs(s.mean(-1) - mean) < 4.5 * se_mean).all()
    sq = (s - mean[..., None]) ** 2
    se_var = sq.std(-1) / np.sqrt(S)
    assert (np.abs(sq.mean(-1) - var) < 4.5 * se_var).all()
    # the noise matters: ignoring it would be many standard errors off
    assert (np.abs(sq.mean(-1) - epi) > 10 * se_var).all()


def test_class_probabilities_match_numpy():
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(D, N, 3, generator=gen, dtype=F64) * 2
    got = class_probabilities(logits)
    z = logits.numpy()
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert got.shape == (N, 3)
    np.testing.assert_allclose(got.numpy(), p.mean(0), rtol=1e-12)
    np.testing.assert_allclose(got.sum(-1).numpy(), np.ones(N), rtol=1e-12)
    # mean of probabilities, not softmax of mean logits
    softmax_of_mean = np.exp(z.mean(0)) / np.exp(z.mean(0)).sum(-1, keepdims=True)
    assert not np.allclose(got.numpy(), softmax_of_mean)
