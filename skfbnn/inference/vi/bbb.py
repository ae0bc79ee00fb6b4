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

from ..._hyper import count_param, param
from ..._validation import Interval, StrOptions
from ...nn.functional import Params
from ...priors.weight import WeightPrior
from ..objective import log_likelihood
from ..types import Batch, BayesProblem, Schedule, Transform
from .meanfield import MeanFieldState, ascend, draw, init, split

__all__ = ["HYPER", "BBBState", "BBBInfo", "init", "update", "build", "divergence"]

HYPER = (
    count_param("n_iter", 20000,
                "Optimisation steps (Adam), at least (see ``min_epochs``). 20 000 for Bayes by "
                "backprop, twice the optimisation family's (which fBNN and ifBNN keep): the "
                "best mean rank among 10 000, 20 000 and 40 000 on the validation rows of five "
                "UCI sets."),
    param("n_mc", 1, [Interval(Integral, 1, None, closed="left")], "int",
          "Monte-Carlo weight draws per step for the expected log-likelihood."),
    param("divergence", "kl", [StrOptions({"kl", "w2"})], "str",
          "Regulariser towards the weight prior: 'kl' (Bayes by backprop) or 'w2' "
          "(squared 2-Wasserstein distance between the Gaussians, WBNN)."),
    param("init_std", 1e-2, [Interval(Real, 0, None, closed="neither")], "float",
          "Initial standard deviation of every variational factor."),
)
"""Estimator parameters of this method (beyond its family's and its prior's)."""

BBBState = MeanFieldState
"""The state of every mean-field method (:class:`~.meanfield.MeanFieldState`)."""


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


def expected_log_likelihood(mean: Params, std: Params, batch: Batch, gen,
                            problem: BayesProblem, n_mc: int) -> Tensor:
    """Monte-Carlo ``E_q sum_{i in batch} w_i log p(y_i | f(x_i; w))`` per set, ``(C,)``
    (``w_i`` the batch's row weights ``"w"``, 1 each when it has none)."""
    n_sets = next(iter(mean.values())).shape[0]
    draws = draw(mean, std, gen, n_mc)
    x, y, w = batch["x"], batch["y"], batch.get("w")
    if x.dim() == 3 and n_mc > 1:
        x, y = x.repeat_interleave(n_mc, 0), y.repeat_interleave(n_mc, 0)
        w = None if w is None else w.repeat_interleave(n_mc, 0)
    loglik = log_likelihood(problem.likelihood, problem.forward(draws, x), y, draws, w)
    return loglik.reshape(n_sets, n_mc).mean(1)


def _elbo(variational: Params, batch: Batch, gen, problem: BayesProblem, n_mc: int, kind: str):
    mean, std = split(variational)
    loglik = expected_log_likelihood(mean, std, batch, gen, problem, n_mc)
    div = divergence(mean, std, problem.prior.std, kind)
    n, N = batch["x"].shape[-2], problem.n_data
    elbo = (N / n) * loglik + problem.likelihood.log_prior(mean) - div
    return elbo / N, (div,)


def update(
    state: BBBState, batch: Batch, gen: torch.Generator, *, problem: BayesProblem,
    learning_rate: Schedule, n_mc: int, divergence: str,
) -> tuple[BBBState, BBBInfo]:
    """One Adam step up the ELBO; pure (``state`` is not modified)."""
    objective = partial(_elbo, problem=problem, n_mc=n_mc, kind=divergence)
    state, elbo, (div,), grad_norm = ascend(state, batch, gen, objective, learning_rate)
    return state, BBBInfo(elbo, div, grad_norm)


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
