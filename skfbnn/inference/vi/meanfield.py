"""The mean-field Gaussian family shared by the variational methods.

``q(w) = prod_i N(w_i; mu_i, sigma_i^2)`` with ``sigma = softplus(rho)`` over
the network parameters; parameters outside the network (a learned
observation noise) are point estimates. Bayes by backprop, fBNN and ifBNN
differ only in the objective they climb: each supplies
``objective(variational, batch, gen) -> (value (C,), extras)`` and
:func:`ascend` takes one Adam step up it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._hyper import Param, param
from ..._validation import Interval
from ...nn.functional import Params
from ...priors.weight import NOISE_KEY, network_params
from ..holdout import calibrated_log_noise
from ..optim import AdamState, adam_init, adam_step
from ..types import Batch, Schedule, member

__all__ = ["MeanFieldState", "init", "split", "draw", "leaves", "ascend", "noise_floor",
           "floor_noise", "calibrate_noise", "held_out_noise_param", "early_stopping_param",
           "variational_tensors", "with_variational_tensors"]


class MeanFieldState(NamedTuple):
    """Variational means and softplus-scales, Adam moments, objective, step index, and a
    method's cached regulariser (ifBNN's lazily evaluated covariance part: its gradient
    and value; None for the others)."""

    mean: Params
    rho: Params
    adam: AdamState
    log_post: Tensor
    step: int
    regularizer: tuple | None = None

    @property
    def std(self) -> Params:
        """Standard deviations ``softplus(rho)`` of the network parameters."""
        return {k: torch.nn.functional.softplus(r) for k, r in self.rho.items()}

    @property
    def params(self) -> Params:
        """The variational means (the point at which the driver checks finiteness)."""
        return self.mean


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None, *,
    init_std: float = 1e-2,
) -> MeanFieldState:
    """Means at ``params``; every network parameter's scale at ``init_std``."""
    rho0 = math.log(math.expm1(init_std))
    rho = {k: torch.full_like(v, rho0) for k, v in network_params(params).items()}
    mean = dict(params)
    n = next(iter(params.values())).shape[0]
    return MeanFieldState(mean, rho, adam_init(_join(mean, rho)),
                          torch.full((n,), float("nan")), 0)


def _join(mean: Params, rho: Params) -> Params:
    return {**{f"m:{k}": v for k, v in mean.items()}, **{f"r:{k}": v for k, v in rho.items()}}


def variational_tensors(state: MeanFieldState) -> Params:
    """The means and raw scales of ``state``, ``m:``/``r:`` keyed (what a checkpoint keeps)."""
    return _join(state.mean, state.rho)


def with_variational_tensors(state: MeanFieldState, variational: Params) -> MeanFieldState:
    """``state`` with the means and raw scales of :func:`variational_tensors` output."""
    mean, rho = split(variational, scales=False)
    return state._replace(mean=mean, rho=rho)


def split(variational: Params, scales: bool = True) -> tuple[Params, Params]:
    """``(mean, std)`` from the ``m:``/``r:`` keyed dictionary (``std = softplus(rho)``;
    with ``scales=False`` the raw ``rho``)."""
    mean = {k[2:]: v for k, v in variational.items() if k.startswith("m:")}
    rho = {k[2:]: v for k, v in variational.items() if k.startswith("r:")}
    if not scales:
        return mean, rho
    return mean, {k: torch.nn.functional.softplus(v) for k, v in rho.items()}


def draw(mean: Params, std: Params, gen: torch.Generator, n_mc: int) -> Params:
    """``n_mc`` reparameterised draws per set, set-major: ``(C * n_mc, ...)``; point
    estimates (keys without a scale) are repeated."""
    draws = {}
    for k, m in mean.items():
        C, shape = m.shape[0], m.shape[1:]
        if k not in std:
            draws[k] = m if n_mc == 1 else m.repeat_interleave(n_mc, 0)
            continue
        eps = torch.randn((C * n_mc, *shape), generator=gen, device=m.device, dtype=m.dtype)
        if n_mc == 1:
            draws[k] = m + std[k] * eps
            continue
        # broadcast over the draws rather than repeating mean and std (same values)
        eps = eps.view(C, n_mc, *shape)
        draws[k] = (m.unsqueeze(1) + std[k].unsqueeze(1) * eps).reshape(C * n_mc, *shape)
    return draws


def leaves(state: MeanFieldState) -> Params:
    """The ``m:``/``r:`` keyed variational parameters as fresh autograd leaves."""
    return {k: v.detach().requires_grad_(True) for k, v in variational_tensors(state).items()}


def ascend(
    state: MeanFieldState, batch: Batch, gen: torch.Generator,
    objective: Callable[[Params, Batch, torch.Generator], tuple[Tensor, tuple]],
    learning_rate: Schedule, extra_grads: Params | None = None,
) -> tuple[MeanFieldState, Tensor, tuple, Tensor]:
    """One Adam step up ``objective``; pure (``state`` is not modified).

    ``extra_grads`` (keyed like :func:`leaves`) is added to the objective's gradient: a
    term whose gradient was computed elsewhere (ifBNN's cached covariance part).
    Returns the new state (``regularizer`` carried over), the objective ``(C,)``, the
    objective's extras (detached) and the gradient norm ``(C,)``.
    """
    variational = leaves(state)
    with torch.enable_grad():
        value, extras = objective(variational, batch, gen)
        grads = torch.autograd.grad(value.sum(), list(variational.values()),
                                    materialize_grads=True)
    grads = dict(zip(variational, grads, strict=True))
    if extra_grads is not None:
        grads = {k: g + extra_grads[k] for k, g in grads.items()}
    grad_norm = sum(g.reshape(len(g), -1).pow(2).sum(-1) for g in grads.values()).sqrt()
    new, adam = adam_step(_join(state.mean, state.rho), grads, state.adam,
                          learning_rate(state.step))
    mean, rho = split(new, scales=False)
    value = value.detach()
    extras = tuple(e.detach() for e in extras)
    new_state = MeanFieldState(mean, rho, adam, value, state.step + 1, state.regularizer)
    return new_state, value, extras, grad_norm


def noise_floor(problem, kind: str | None) -> Tensor | None:
    """``log`` of the pre-fitted GP's noise std per output for ``kind="gp"`` (regression with
    a learned noise and a GP prior), else None."""
    gp = member(problem.prior, "gp")
    if kind != "gp" or gp is None or not member(problem.likelihood, "learned"):
        return None
    std = gp.noise_std
    return None if bool(torch.isnan(std).any()) else std.log()


def floor_noise(state: MeanFieldState, log_floor: Tensor | None) -> MeanFieldState:
    """``state`` with the learned log noise std raised to at least ``log_floor``."""
    if log_floor is None or NOISE_KEY not in state.mean:
        return state
    noise = state.mean[NOISE_KEY]
    raised = torch.maximum(noise, log_floor.to(noise.device, noise.dtype))
    return state._replace(mean={**state.mean, NOISE_KEY: raised})


@torch.no_grad()
def calibrate_noise(state: MeanFieldState, problem, x: Tensor, y: Tensor, gen: torch.Generator,
                    n_draws: int) -> MeanFieldState:
    """``state`` with its learned log noise std raised by held-out rows.

    ``x`` ``(C, n, d)`` and ``y`` ``(C, n, k)`` are each set's held-out rows; ``n_draws``
    draws of ``q`` give the predictive whose held-out log-likelihood a noise maximises
    (:func:`~skfbnn.inference.holdout.calibrated_log_noise`), and the noise becomes the
    larger of that and the one learned. Only raised: a network fits new rows no better
    than its training rows, while a tenth of a small set's rows can by chance call for a
    smaller noise than the rest (BBB on yacht: held-out log-likelihood -13.1 on one
    validation split when the noise was set either way). A state without a learned noise
    is returned as it is.
    """
    if NOISE_KEY not in state.mean:
        return state
    params = draw(state.mean, state.std, gen, n_draws)
    f = problem.forward(params, x.repeat_interleave(n_draws, 0))
    f = f.reshape(x.shape[0], n_draws, *f.shape[1:])
    noise = state.mean[NOISE_KEY]
    log_std = calibrated_log_noise(f, y).to(noise.device, noise.dtype)
    return state._replace(mean={**state.mean, NOISE_KEY: torch.maximum(noise, log_std)})


def held_out_noise_param(default: float, why: str = "") -> Param:
    """The ``validation_fraction`` parameter of the mean-field methods with this default
    (``why`` says how it was chosen)."""
    return param(
        "validation_fraction", default, [Interval(Real, 0, 0.5, closed="left")], "float",
        "Regression with a learned noise: the fraction of the training rows held out of the "
        "run; afterwards the noise std is raised to the value under which the predictive "
        "(``n_samples`` draws plus the noise) scores those rows best, if that is larger than "
        "the one learned. 0 trains on all rows and keeps the noise learned with the weights. "
        "Classification and a fixed ``noise_std`` ignore it and train on all rows." + why)


def early_stopping_param(default: bool, why: str = "") -> Param:
    """The ``early_stopping`` parameter of the mean-field methods with this default."""
    return param(
        "early_stopping", default, ["boolean"], "bool",
        "Regression with a learned noise and ``validation_fraction > 0``: score the mean "
        "network on the held-out rows 50 times over the run (mean squared error) and keep "
        "the variational parameters of the best score; the noise is then raised on the same "
        "rows. False keeps the final ones." + why)
