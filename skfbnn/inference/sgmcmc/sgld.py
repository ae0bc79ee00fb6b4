"""Stochastic-gradient Langevin dynamics (Welling & Teh, 2011).

.. math::

    \\theta_{t+1} = \\theta_t + \\epsilon_t \\nabla \\log \\tilde\\pi(\\theta_t)
    + \\sqrt{2 \\epsilon_t T}\\, \\xi_t, \\qquad \\xi_t \\sim N(0, I),

with :math:`\\log\\tilde\\pi` the minibatch log posterior of
:mod:`skfbnn.inference.objective`. The rule never sees the prior: fSGLD
(Wu, Xuan & Lu 2025) is this kernel applied to a problem whose log prior is
the functional GP prior.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import torch
from torch import Tensor

from ...nn.functional import Params
from ..objective import LogPosterior, grad_and_value, make_log_posterior
from ..types import Batch, BayesProblem, Schedule, Transform
from .diffusions import noise_like, step_size_param

__all__ = ["HYPER", "SGLDState", "SGLDInfo", "init", "update", "build"]


HYPER = (step_size_param(3e-2),)
"""Estimator parameters of this kernel (the default chosen on validation data,
``docs/benchmarks.md``)."""


class SGLDState(NamedTuple):
    """Chain positions, their last log posterior ``(C,)`` and the step index."""

    params: Params
    log_post: Tensor
    step: int


class SGLDInfo(NamedTuple):
    """Per-step information: log posterior at the pre-step position, ``(C,)``."""

    log_post: Tensor


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None
) -> SGLDState:
    """Start chains at ``params`` (leading chain dimension)."""
    n_chains = next(iter(params.values())).shape[0]
    return SGLDState(params, torch.full((n_chains,), float("nan")), 0)


def update(
    state: SGLDState,
    batch: Batch,
    gen: torch.Generator,
    *,
    log_posterior: LogPosterior,
    step_size: Schedule,
    temperature: float = 1.0,
) -> tuple[SGLDState, SGLDInfo]:
    """One SGLD step; pure (``state`` is not modified)."""
    grads, log_post = grad_and_value(log_posterior, state.params, batch)
    eps = step_size(state.step)
    scale = math.sqrt(2.0 * eps * temperature)
    params = {
        k: p + eps * grads[k] + scale * noise_like(p, gen) for k, p in state.params.items()
    }
    return SGLDState(params, log_post, state.step + 1), SGLDInfo(log_post)


def build(problem: BayesProblem, *, step_size: Schedule, temperature: float = 1.0) -> Transform:
    """Bind ``problem`` and hyperparameters into a :class:`Transform`."""
    return Transform(
        init,
        partial(
            update,
            log_posterior=make_log_posterior(problem),
            step_size=step_size,
            temperature=temperature,
        ),
    )
