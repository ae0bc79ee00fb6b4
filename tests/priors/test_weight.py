"""Tests for skfbnn.priors.weight."""

from __future__ import annotations

import pytest
import torch

from skfbnn.priors.weight import (
    NOISE_KEY,
    HierarchicalWeightPrior,
    isotropic_log_prior,
    network_params,
)

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


def test_hierarchical_log_prob_is_isotropic_at_the_hyperprior_mean():
    params = _params()
    prior = HierarchicalWeightPrior(shape=1.0, rate=4.0)  # precision 1/4: std 2
    torch.testing.assert_close(prior.log_prob(params), isotropic_log_prior(params, 2.0),
                               rtol=1e-12, atol=1e-12)


def test_hierarchical_log_prob_uses_each_groups_precision():
    params = _params()
    prior = HierarchicalWeightPrior()
    prior.log_prob(params)
    prior.precision = {k: torch.full((3, 1), 1.0 + i, dtype=F64)
                       for i, k in enumerate(params)}
    expected = sum(isotropic_log_prior({k: v}, (1.0 + i) ** -0.5)
                   for i, (k, v) in enumerate(params.items()))
    torch.testing.assert_close(prior.log_prob(params), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, rate", [(1.0, 1.0), (0.5, 2.0), (3.0, 0.1)])
def test_gibbs_step_draws_the_conjugate_gamma_conditional(shape, rate):
    """Oracle: lambda | w ~ Gamma(a + n/2, b + |w|^2/2); mean and variance of 4000
    draws (one per chain, same weights) within 4 Monte-Carlo standard errors."""
    C = 4000
    gen = torch.Generator().manual_seed(1)
    w = torch.randn(1, 5, 3, generator=gen, dtype=F64) * 0.7
    params = {"w": w.expand(C, 5, 3), NOISE_KEY: torch.zeros(C, 1, dtype=F64)}
    prior = HierarchicalWeightPrior(shape, rate)
    prior.resample(params, gen)
    assert set(prior.precision) == {"w"}  # the noise is not a weight
    lam = prior.precision["w"][:, 0]
    alpha, beta = shape + 7.5, rate + 0.5 * float(w.pow(2).sum())
    mean, var = alpha / beta, alpha / beta**2
    z_mean = (float(lam.mean()) - mean) / (var / C) ** 0.5
    # variance of the sample variance of a Gamma: (m4 - var^2) / C, m4 = var^2 (3 + 6/alpha)
    z_var = (float(lam.var()) - var) / ((var**2 * (2 + 6 / alpha)) / C) ** 0.5
    assert abs(z_mean) < 4 and abs(z_var) < 4


def test_ard_gibbs_step_draws_each_input_columns_conjugate_gamma():
    """Oracle (ARD): the first layer's weights ``(out=5, in=3)`` form one group per input
    column, ``lambda_j | w ~ Gamma(a + 5/2, b + sum_i w_ij^2 / 2)``; later layers keep
    one group. Mean and variance of 4000 draws within 4 Monte-Carlo standard errors."""
    C, a, b = 4000, 2.0, 2.0
    gen = torch.Generator().manual_seed(2)
    w = torch.randn(1, 5, 3, generator=gen, dtype=F64) * torch.tensor([0.2, 1.0, 3.0], dtype=F64)
    params = {"w": w.expand(C, 5, 3), "v": torch.ones(C, 1, 5, dtype=F64)}
    prior = HierarchicalWeightPrior(a, b, ard=True)
    prior.resample(params, gen)
    assert prior.precision["w"].shape == (C, 3) and prior.precision["v"].shape == (C, 1)
    assert prior.prior_std()["w"].shape == (C, 3) and prior.prior_std()["v"].shape == (C,)
    alpha = a + 2.5
    for j in range(3):
        beta = b + 0.5 * float(w[0, :, j].pow(2).sum())
        mean, var = alpha / beta, alpha / beta**2
        lam = prior.precision["w"][:, j]
        z_mean = (float(lam.mean()) - mean) / (var / C) ** 0.5
        z_var = (float(lam.var()) - var) / ((var**2 * (2 + 6 / alpha)) / C) ** 0.5
        assert abs(z_mean) < 4 and abs(z_var) < 4
    # the log density of chain 0: independent columns with their own scales
    std_w, std_v = prior.precision["w"][0].rsqrt(), float(prior.precision["v"][0, 0].rsqrt())
    expected = sum(isotropic_log_prior({"w": w[:, :, j]}, float(std_w[j])) for j in range(3))
    expected = expected + isotropic_log_prior({"v": params["v"][:1]}, std_v)
    torch.testing.assert_close(prior.log_prob(params)[:1], expected, rtol=1e-12, atol=1e-12)


def test_gibbs_step_rejects_a_shape_it_cannot_draw_exactly():
    prior = HierarchicalWeightPrior(shape=0.7)
    with pytest.raises(ValueError, match="shape"):
        prior.resample(_params(), torch.Generator().manual_seed(0))


def test_tempered_gibbs_step_reads_the_weights_in_untempered_units():
    """Oracle: at temperature T, lambda | w ~ Gamma(a + n/2, b + |w|^2 / (2 T)); mean and
    variance of 4000 draws within 4 Monte-Carlo standard errors."""
    C, a, b, T = 4000, 2.0, 2.0, 0.25
    gen = torch.Generator().manual_seed(3)
    w = torch.randn(1, 5, 3, generator=gen, dtype=F64) * 0.4
    prior = HierarchicalWeightPrior(a, b, temperature=T)
    prior.resample({"w": w.expand(C, 5, 3)}, gen)
    lam = prior.precision["w"][:, 0]
    alpha, beta = a + 7.5, b + 0.5 * float(w.pow(2).sum()) / T
    mean, var = alpha / beta, alpha / beta**2
    assert abs((float(lam.mean()) - mean) / (var / C) ** 0.5) < 4
    assert abs((float(lam.var()) - var) / ((var**2 * (2 + 6 / alpha)) / C) ** 0.5) < 4


@pytest.mark.parametrize("T", [1.0, 0.3, 0.1])
def test_tempered_gibbs_chain_keeps_the_hyperprior_without_data(T):
    """Oracle: without data the tempered joint is ``N(w; 0, T / lambda) Gamma(lambda; a, b)``.
    Started from exact draws of it (lambda from the hyperprior), alternating its exact
    weight conditional with the Gibbs step must leave lambda's marginal at the hyperprior
    Gamma(a, b) (mean a / b, variance a / b^2) after 5 sweeps of 4000 independent chains
    (within 4 Monte-Carlo standard errors). The ``T = 1`` Gibbs step under tempered weights
    is the bug this guards against: each sweep multiplied the precision by about 1 / T
    (checked below: its mean leaves the hyperprior's)."""
    C, n, a, b = 4000, 50, 2.0, 2.0
    gen = torch.Generator().manual_seed(4)

    def sweeps(prior):
        # Gamma(a, b) with 2a = 4 degrees of freedom: half a chi-square over b
        chi2 = torch.randn(C, 1, int(2 * a), generator=gen, dtype=F64).pow(2).sum(-1)
        prior.precision["w"] = 0.5 * chi2 / b
        for _ in range(5):
            lam = prior.precision["w"]  # (C, 1)
            w = torch.randn(C, n, generator=gen, dtype=F64) * (T / lam).sqrt()
            prior.resample({"w": w}, gen)
        return prior.precision["w"][:, 0]

    lam = sweeps(HierarchicalWeightPrior(a, b, temperature=T))
    mean, var = a / b, a / b**2
    assert abs((float(lam.mean()) - mean) / (var / C) ** 0.5) < 4
    assert abs((float(lam.var()) - var) / ((var**2 * (2 + 6 / a)) / C) ** 0.5) < 4
    if T < 1:
        untempered = sweeps(HierarchicalWeightPrior(a, b))
        assert float(untempered.mean()) > 2 * mean


@pytest.mark.parametrize("T", [0.0, -1.0])
def test_hierarchical_prior_rejects_a_non_positive_temperature(T):
    with pytest.raises(ValueError, match="temperature"):
        HierarchicalWeightPrior(temperature=T)
