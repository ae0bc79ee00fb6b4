"""Tests for skfbnn.priors.weight."""

from __future__ import annotations

import pytest
import torch

from skfbnn.priors.weight import NOISE_KEY, isotropic_log_prior, network_params

F64 = torch.float64


def _params(C: int = 3) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return {
        "0.weight": torch.randn(C, 4, 2, generator=gen, dtype=F64),
        "0.bias": torch.randn(C, 4, generator=gen, dtype=F64),
        "2.weight": torch.randn(C, 1, 4, generator=gen, dtype=F64),
        "2.bias": torch.randn(C, 1, generator=gen, dtype=F64),
    }


@pytest.mark.parametrize("prior_std", [0.3, 1.0, 2.5])
def test_isotropic_log_prior_is_sum_of_normal_log_densities(prior_std):
    params = _params()
    got = isotropic_log_prior(params, prior_std)
    normal = torch.distributions.Normal(torch.tensor(0.0, dtype=F64),
                                        torch.tensor(prior_std, dtype=F64))
    expected = sum(normal.log_prob(v).reshape(3, -1).sum(-1) for v in params.values())
    assert got.shape == (3,)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_isotropic_log_prior_ignores_log_noise():
    params = _params()
    with_noise = {**params, NOISE_KEY: torch.full((3, 1), 5.0, dtype=F64)}
    torch.testing.assert_close(
        isotropic_log_prior(with_noise, 1.0), isotropic_log_prior(params, 1.0), rtol=0, atol=0
    )
    assert network_params(with_noise).keys() == params.keys()
    # but any other key counts
    extra = {**params, "extra": torch.full((3, 1), 5.0, dtype=F64)}
    assert (isotropic_log_prior(extra, 1.0) < isotropic_log_prior(params, 1.0)).all()


def test_isotropic_log_prior_per_chain_rows():
    params = _params()
    single = {k: v[1:2] for k, v in params.items()}
    torch.testing.assert_close(isotropic_log_prior(single, 0.7),
                               isotropic_log_prior(params, 0.7)[1:2])
