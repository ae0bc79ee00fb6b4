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
