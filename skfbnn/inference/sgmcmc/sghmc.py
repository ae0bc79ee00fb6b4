"""Stochastic-gradient Hamiltonian Monte Carlo (Chen, Fox & Guestrin, 2014, Eq. 15).

With momentum ``v`` in position units, step size ``eta`` and friction
(momentum decay per step) ``alpha``:

.. math::

    v \\leftarrow (1 - \\alpha) v + \\eta \\nabla \\log\\tilde\\pi(\\theta)
    + \\sqrt{2 \\alpha \\eta T}\\, \\xi, \\qquad \\theta \\leftarrow \\theta + v.

Every ``n_leapfrog`` steps the momentum is redrawn from ``N(0, eta T I)``, the
outer loop of Algorithm 2 in Wu, Xuan & Lu (2025); ``n_leapfrog=None`` never
redraws it. With ``alpha = 1`` the rule is exactly SGLD with step ``eta``.
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

from ..._validation import Interval
from ...nn.functional import Params
from ..hyper import param
from ..objective import LogPosterior, grad_and_value, make_log_posterior
from ..types import Batch, BayesProblem, Schedule, Transform
from .diffusions import noise_like, step_size_param

__all__ = ["HYPER", "SGHMCState", "SGHMCInfo", "init", "update", "build"]


HYPER = (
    step_size_param(3e-3),
    param("friction", 0.05, [Interval(Real, 0, 1, closed="right")], "float",
          "SGHMC momentum decay per step (1 turns SGHMC into SGLD)."),
    param("n_leapfrog", 50, [None, Interval(Integral, 1, None, closed="left")], "int or None",
          "Steps between momentum refreshes (Algorithm 2 of Wu et al.); None never refreshes."),
)
"""Estimator parameters of this kernel (step-size default chosen on validation data)."""


class SGHMCState(NamedTuple):
    """Positions, momenta (position units), last log posterior ``(C,)``, step index."""

    params: Params
    momenta: Params
    log_post: Tensor
    step: int


class SGHMCInfo(NamedTuple):
    """Per-step information: log posterior at the pre-step position, ``(C,)``."""

    log_post: Tensor


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None
) -> SGHMCState:
    """Start chains at ``params`` with zero momenta (redrawn at step 0)."""
    n_chains = next(iter(params.values())).shape[0]
    momenta = {k: torch.zeros_like(v) for k, v in params.items()}
    return SGHMCState(params, momenta, torch.full((n_chains,), float("nan")), 0)


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
) -> tuple[SGHMCState, SGHMCInfo]:
    """One SGHMC step; pure (``state`` is not modified)."""
    eta = step_size(state.step)
    momenta = state.momenta
    if state.step == 0 or (n_leapfrog is not None and state.step % n_leapfrog == 0):
        scale = math.sqrt(eta * temperature)
        momenta = {k: scale * noise_like(v, gen) for k, v in momenta.items()}
    grads, log_post = grad_and_value(log_posterior, state.params, batch)
    noise = math.sqrt(2.0 * friction * eta * temperature)
    momenta = {
        k: (1.0 - friction) * v + eta * grads[k] + noise * noise_like(v, gen)
        for k, v in momenta.items()
    }
    params = {k: p + momenta[k] for k, p in state.params.items()}
    return SGHMCState(params, momenta, log_post, state.step + 1), SGHMCInfo(log_post)


def build(
    problem: BayesProblem,
    *,
    step_size: Schedule,
    friction: float = 0.05,
    n_leapfrog: int | None = 50,
    temperature: float = 1.0,
) -> Transform:
    """Bind ``problem`` and hyperparameters into a :class:`Transform`."""
    return Transform(
        init,
        partial(
            update,
            log_posterior=make_log_posterior(problem),
            step_size=step_size,
            friction=friction,
            n_leapfrog=n_leapfrog,
            temperature=temperature,
        ),
    )
