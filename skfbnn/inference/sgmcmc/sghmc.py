"""Stochastic-gradient Hamiltonian Monte Carlo (Chen, Fox & Guestrin, 2014, Eq. 15).

With momentum ``v`` in position units, step size ``eta`` and friction
(momentum decay per step) ``alpha``:

.. math::

    v \\leftarrow (1 - \\alpha) v + \\eta \\nabla \\log\\tilde\\pi(\\theta)
    + \\sqrt{2 \\alpha \\eta T}\\, \\xi, \\qquad \\theta \\leftarrow \\theta + v.

Every ``n_leapfrog`` steps the momentum is redrawn from ``N(0, eta T I)``, the
outer loop of Algorithm 2 in Wu, Xuan & Lu (2025); ``n_leapfrog=None`` never
redraws it. With ``alpha = 1`` the rule is exactly SGLD with step ``eta``
(with full batches or the identity metric: only SGLD subtracts the minibatch
noise, see :func:`update`).
Like SGLD the rule is prior-agnostic: fSGHMC is the same kernel with the
functional prior.
"""

from __future__ import annotations

import math
from functools import partial
from numbers import Integral, Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._hyper import param
from ..._validation import Interval
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

__all__ = ["HYPER", "SGHMCState", "SGHMCInfo", "init", "update", "build"]


HYPER = (
    step_size_param(0.5),
    param("friction", 0.1, [Interval(Real, 0, 1, closed="right")], "float",
          "SGHMC momentum decay per step (1 turns SGHMC into SGLD)."),
    param("n_leapfrog", 50, [None, Interval(Integral, 1, None, closed="left")], "int or None",
          "Steps between momentum refreshes (Algorithm 2 of Wu et al.); None never refreshes."),
    preconditioner_param("adaptive"),
)
"""Estimator parameters of this kernel (defaults chosen on validation rows; the step size
suits the adaptive preconditioner)."""


class SGHMCState(NamedTuple):
    """Positions, momenta (position units), last log posterior ``(C,)``, step index,
    and the (burn-in adapted) preconditioner."""

    params: Params
    momenta: Params
    log_post: Tensor
    step: int
    preconditioner: Preconditioner = Preconditioner(None, None, 0)


class SGHMCInfo(NamedTuple):
    """Per-step information: log posterior at the pre-step position, ``(C,)``."""

    log_post: Tensor


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None, *,
    preconditioner: str = "identity",
) -> SGHMCState:
    """Start chains at ``params`` with zero momenta (redrawn at step 0)."""
    n_chains = next(iter(params.values())).shape[0]
    momenta = {k: torch.zeros_like(v) for k, v in params.items()}
    return SGHMCState(params, momenta, torch.full((n_chains,), float("nan")), 0,
                      init_preconditioner(params, preconditioner))


def update(
    state: SGHMCState,
    batch: Batch,
    gen: torch.Generator,
    *,
    log_posterior: LogPosterior,
    step_size: Schedule,
    friction: float,
    n_leapfrog: int | None,
    temperature: float = 1.0,
    n_adapt: int = 0,
) -> tuple[SGHMCState, SGHMCInfo]:
    """One SGHMC step; pure (``state`` is not modified). With an adaptive
    preconditioner ``M^{-1}`` (adapted for the first ``n_adapt`` steps) the
    gradient is ``M^{-1} grad``, the momentum refreshes have covariance
    ``eta T M^{-1}``, and the injected noise ``2 alpha eta T M^{-1}``.

    Unlike SGLD, SGHMC does not subtract an estimate of the minibatch-gradient
    noise from the injected noise (Springenberg et al. 2016 do): at friction
    ``alpha = 0.1`` the injected variance is a tenth of SGLD's at the same
    step, so the estimate's error, which can only over-subtract (the squared
    gradient behind it also holds the full-data gradient and, for fSGHMC, the
    functional prior's), removed most of the noise. On 100-200 rows of Boston
    that left the predictive too narrow (test LL down to -72); on validation
    rows of the UCI sets the two are within noise."""
    grads, log_post = grad_and_value(log_posterior, state.params, batch)
    pre = adapt_preconditioner(state.preconditioner, grads, state.step, n_adapt)
    eta = step_size(state.step)
    momenta = state.momenta
    if state.step == 0 or (n_leapfrog is not None and state.step % n_leapfrog == 0):
        scale = math.sqrt(eta * temperature)
        fresh = noises_like(momenta, gen)
        momenta = {k: scale * scaled(pre, k, 1.0) ** 0.5 * fresh[k] for k in momenta}
    variance = 2.0 * friction * eta * temperature
    noise = noises_like(momenta, gen)
    momenta = {  # (1 - a) v + eta M^-1 grad + std * noise, in fused ops
        k: ((1.0 - friction) * v).add_(scaled(pre, k, grads[k]), alpha=eta)
        .add_(noise_std(pre, k, variance, eta) * noise[k])
        for k, v in momenta.items()
    }
    params = {k: p + momenta[k] for k, p in state.params.items()}
    return SGHMCState(params, momenta, log_post, state.step + 1, pre), SGHMCInfo(log_post)


def build(
    problem: BayesProblem,
    *,
    step_size: Schedule,
    friction: float = 0.05,
    n_leapfrog: int | None = 50,
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
            friction=friction,
            n_leapfrog=n_leapfrog,
            temperature=temperature,
            n_adapt=n_burnin,
        ),
        # v' = (1 - a) v - eta lam theta, theta' = theta + v': trace 2 - a - eta lam,
        # determinant 1 - a; stable (Jury) for 0 < eta lam < 2 (2 - a)
        stability_limit=2.0 * (2.0 - friction),
    )
