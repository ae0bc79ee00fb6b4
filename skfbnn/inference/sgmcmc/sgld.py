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

from functools import partial
from typing import NamedTuple

import torch
from torch import Tensor

from ...nn.functional import Params
from ..objective import LogPosterior, grad_and_value, make_log_posterior
from ..types import Batch, BayesProblem, Schedule, Transform
from .diffusions import (
    Preconditioner,
    adapt_preconditioner,
    init_preconditioner,
    noise_std,
    noises_like,
    preconditioner_param,
    scaled,
    step_size_param,
)

__all__ = ["HYPER", "SGLDState", "SGLDInfo", "init", "update", "build"]


HYPER = (step_size_param(3.0), preconditioner_param("adaptive"))
"""Estimator parameters of this kernel (defaults chosen on validation rows; the step size
suits the adaptive preconditioner)."""


class SGLDState(NamedTuple):
    """Chain positions, their last log posterior ``(C,)``, the step index and the
    (burn-in adapted) preconditioner."""

    params: Params
    log_post: Tensor
    step: int
    preconditioner: Preconditioner = Preconditioner(None, None, 0)


class SGLDInfo(NamedTuple):
    """Per-step information: log posterior at the pre-step position, ``(C,)``."""

    log_post: Tensor


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None, *,
    preconditioner: str = "identity",
) -> SGLDState:
    """Start chains at ``params`` (leading chain dimension)."""
    n_chains = next(iter(params.values())).shape[0]
    return SGLDState(params, torch.full((n_chains,), float("nan")), 0,
                     init_preconditioner(params, preconditioner))


def update(
    state: SGLDState,
    batch: Batch,
    gen: torch.Generator,
    *,
    log_posterior: LogPosterior,
    step_size: Schedule,
    temperature: float = 1.0,
    n_adapt: int = 0,
    n_data: int = 0,
) -> tuple[SGLDState, SGLDInfo]:
    """One SGLD step; pure (``state`` is not modified). With an adaptive
    preconditioner ``M^{-1}`` (adapted for the first ``n_adapt`` steps) the
    drift is ``eps M^{-1} grad`` and the noise ``N(0, 2 eps T M^{-1})`` less the
    minibatch-gradient noise (:func:`~.diffusions.noise_std`)."""
    grads, log_post = grad_and_value(log_posterior, state.params, batch)
    pre = adapt_preconditioner(state.preconditioner, grads, state.step, n_adapt)
    eps = step_size(state.step)
    fraction = min(1.0, batch["x"].shape[-2] / n_data) if n_data else 1.0
    noise = noises_like(state.params, gen)
    params = {
        k: p + eps * scaled(pre, k, grads[k])
        + noise_std(pre, k, 2.0 * eps * temperature, eps, fraction) * noise[k]
        for k, p in state.params.items()
    }
    return SGLDState(params, log_post, state.step + 1, pre), SGLDInfo(log_post)


def build(
    problem: BayesProblem,
    *,
    step_size: Schedule,
    temperature: float = 1.0,
    preconditioner: str = "identity",
    n_burnin: int = 0,
) -> Transform:
    """Bind ``problem`` and hyperparameters into a :class:`Transform`; an adaptive
    preconditioner adapts during the first ``n_burnin`` steps."""
    return Transform(
        partial(init, preconditioner=preconditioner),
        partial(
            update,
            log_posterior=make_log_posterior(problem),
            step_size=step_size,
            temperature=temperature,
            n_adapt=n_burnin,
            n_data=problem.n_data,
        ),
        stability_limit=2.0,  # theta - eps * lam * theta: |1 - eps * lam| < 1
    )
