"""Bayes by backprop (Blundell et al., 2015): mean-field Gaussian VI on the weights.

``q(w) = prod_i N(w_i; mu_i, sigma_i^2)`` with ``sigma = softplus(rho)``. Each
step draws ``n_mc`` weight sets by the reparameterisation ``w = mu + sigma *
eps`` and takes one Adam step up the per-datum ELBO

.. math::

    \\frac{1}{N}\\Big(\\frac{N}{n}\\,\\frac{1}{S}\\sum_s \\sum_{i \\in B}
    \\log p(y_i \\mid f(x_i; w_s)) - D(q \\,\\|\\, p)\\Big),

with ``D`` the closed-form KL divergence to the isotropic prior
``N(0, prior_std^2 I)`` or, with ``divergence="w2"``, the squared
2-Wasserstein distance ``sum_i mu_i^2 + (sigma_i - prior_std)^2`` (the
weight-space WBNN baseline of the ifBNN paper). Parameters outside the network
(a learned observation noise) are point estimates: maximised with the prior of
the likelihood's own parameters, not integrated.
"""

from __future__ import annotations

import math
from functools import partial
from numbers import Integral, Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._validation import Interval, StrOptions
from ...nn.functional import Params
from ...priors.weight import WeightPrior, network_params
from ..hyper import param
from ..optim import AdamState, adam_init, adam_step
from ..types import Batch, BayesProblem, Schedule, Transform

__all__ = ["HYPER", "BBBState", "BBBInfo", "init", "update", "build", "divergence"]

HYPER = (
    param("n_mc", 1, [Interval(Integral, 1, None, closed="left")], "int",
          "Monte-Carlo weight draws per step for the expected log-likelihood."),
    param("divergence", "kl", [StrOptions({"kl", "w2"})], "str",
          "Regulariser towards the weight prior: 'kl' (Bayes by backprop) or 'w2' "
          "(squared 2-Wasserstein distance between the Gaussians, WBNN)."),
    param("init_std", 1e-2, [Interval(Real, 0, None, closed="neither")], "float",
          "Initial standard deviation of every variational factor."),
)
"""Estimator parameters of this method (beyond its family's and its prior's)."""


class BBBState(NamedTuple):
    """Variational means and softplus-scales, Adam moments, objective, step index."""

    mean: Params
    rho: Params
    adam: AdamState
    log_post: Tensor
    step: int

    @property
    def std(self) -> Params:
        """Standard deviations ``softplus(rho)`` of the network parameters."""
        return {k: torch.nn.functional.softplus(r) for k, r in self.rho.items()}

    @property
    def params(self) -> Params:
        """The variational means (the point at which the driver checks finiteness)."""
        return self.mean


class BBBInfo(NamedTuple):
    """Per-step ELBO per datum, divergence ``D(q || p)`` and gradient norm, ``(C,)`` each."""

    elbo: Tensor
    divergence: Tensor
    grad_norm: Tensor


def divergence(mean: Params, std: Params, prior_std: float, kind: str) -> Tensor:
    """``KL(q || N(0, prior_std^2 I))`` or the squared W2 distance, per leading row."""
    total = 0.0
    for k, s in std.items():
        m = mean[k].reshape(len(s), -1)
        s = s.reshape(len(s), -1)
        if kind == "kl":
            term = math.log(prior_std) - s.log() + (s.pow(2) + m.pow(2)) / (2 * prior_std**2)
            total = total + (term - 0.5).sum(-1)
        else:
            total = total + (m.pow(2) + (s - prior_std).pow(2)).sum(-1)
    return total


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None, *,
    init_std: float = 1e-2,
) -> BBBState:
    """Means at ``params``; every network parameter's scale at ``init_std``."""
    rho0 = math.log(math.expm1(init_std))
    rho = {k: torch.full_like(v, rho0) for k, v in network_params(params).items()}
    mean = dict(params)
    n = next(iter(params.values())).shape[0]
    return BBBState(mean, rho, adam_init({**_prefix(mean, "m"), **_prefix(rho, "r")}),
                    torch.full((n,), float("nan")), 0)


def _prefix(params: Params, tag: str) -> Params:
    return {f"{tag}:{k}": v for k, v in params.items()}


def _elbo(variational: Params, batch: Batch, gen, problem: BayesProblem, n_mc: int, kind: str):
    mean = {k[2:]: v for k, v in variational.items() if k.startswith("m:")}
    std = {k[2:]: torch.nn.functional.softplus(v)
           for k, v in variational.items() if k.startswith("r:")}
    n_sets = next(iter(mean.values())).shape[0]
    repeat = (lambda t: t) if n_mc == 1 else (lambda t: t.repeat_interleave(n_mc, 0))
    draws = {}
    for k, m in mean.items():
        m = repeat(m)
        if k in std:
            eps = torch.randn(m.shape, generator=gen, device=m.device, dtype=m.dtype)
            m = m + repeat(std[k]) * eps
        draws[k] = m
    x, y = batch["x"], batch["y"]
    if x.dim() == 3:
        x, y = repeat(x), repeat(y)
    loglik = problem.likelihood.log_prob(problem.forward(draws, x), y, draws)
    loglik = loglik.reshape(n_sets, n_mc).mean(1)
    div = divergence(mean, std, problem.prior.std, kind)
    n, N = x.shape[-2], problem.n_data
    elbo = (N / n) * loglik + problem.likelihood.log_prior(mean) - div
    return elbo / N, div


def update(
    state: BBBState, batch: Batch, gen: torch.Generator, *, problem: BayesProblem,
    learning_rate: Schedule, n_mc: int, divergence: str,
) -> tuple[BBBState, BBBInfo]:
    """One Adam step up the ELBO; pure (``state`` is not modified)."""
    variational = {**_prefix(state.mean, "m"), **_prefix(state.rho, "r")}
    leaves = {k: v.detach().requires_grad_(True) for k, v in variational.items()}
    with torch.enable_grad():
        elbo, div = _elbo(leaves, batch, gen, problem, n_mc, divergence)
        grads = dict(zip(leaves, torch.autograd.grad(elbo.sum(), list(leaves.values())),
                         strict=True))
    grad_norm = sum(g.reshape(len(g), -1).pow(2).sum(-1) for g in grads.values()).sqrt()
    new, adam = adam_step(variational, grads, state.adam, learning_rate(state.step))
    mean = {k[2:]: v for k, v in new.items() if k.startswith("m:")}
    rho = {k[2:]: v for k, v in new.items() if k.startswith("r:")}
    info = BBBInfo(elbo.detach(), div.detach(), grad_norm)
    return BBBState(mean, rho, adam, elbo.detach(), state.step + 1), info


def build(
    problem: BayesProblem, *, learning_rate: Schedule, n_mc: int = 1, divergence: str = "kl",
    init_std: float = 1e-2,
) -> Transform:
    """Bind ``problem`` (which needs a :class:`~skfbnn.priors.weight.WeightPrior`)."""
    if not isinstance(problem.prior, WeightPrior):
        raise ValueError(
            "Bayes by backprop needs an isotropic Gaussian weight prior (prior_std). "
            f"Got {type(problem.prior).__name__}."
        )
    return Transform(
        partial(init, init_std=init_std),
        partial(update, problem=problem, learning_rate=learning_rate, n_mc=n_mc,
                divergence=divergence),
    )
