"""One Metropolis-Hastings step with a Gaussian proposal, shared by pCN, pCNL, MALA.

A proposal is ``phi' = m(phi) + s * xi`` with ``xi ~ N(0, I)``; ``m`` may use the
potential's gradient. The acceptance probability is
``min(1, pi(phi') q(phi | phi') / (pi(phi) q(phi' | phi)))`` with
``log pi(phi) = -|phi|^2 / 2 - Phi(phi)`` (:mod:`.target`); a proposal may supply
a simplified but equal ratio (pCN: ``Phi(phi) - Phi(phi')``). The step size lives
in the state so that the driver's burn-in hook (:func:`adapt_step`) can tune it;
afterwards it is frozen and the chain is a fixed MH chain.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from ...nn.functional import Params
from ..types import Batch
from .noise import empirical_bayes_log_noise
from .target import WideNetTarget

__all__ = ["Proposal", "MHState", "MHInfo", "update", "adapt_step", "refresh_noise",
           "gaussian_log_ratio"]


class Proposal(NamedTuple):
    """``mean(phi, grad_Phi, step)``, ``std(step)``, whether ``mean`` needs the
    gradient, the largest step, optionally a simplified
    ``log_ratio(potential, potential_new)``, and the power of the per-coordinate
    scale ``c`` applied to the step (1: ``beta c``; 2: MALA's ``h c^2``, so that
    the noise coefficient scales by ``c``)."""

    mean: Callable[[Tensor, Tensor | None, Tensor], Tensor]
    std: Callable[[Tensor], Tensor]
    needs_grad: bool
    max_step: float = math.inf
    log_ratio: Callable | None = None
    scale_power: int = 1


class MHState(NamedTuple):
    """Whitened positions ``phi`` ``(C, D)``, the readout noise (marginal-conditional
    variant), ``Phi`` and its gradient at ``phi``, the log step size, the step index,
    the target, the dtype of the reported parameters, the largest step size and
    the starting parameters (until the first step)."""

    phi: Tensor
    phi_out: Tensor | None
    potential: Tensor
    grad: Tensor | None
    log_step: Tensor
    step: int
    target: WideNetTarget
    dtype: torch.dtype
    max_step: float = math.inf
    start: Params | None = None

    @property
    def params(self) -> Params:
        """The network parameters of the current positions (computed on demand; the
        starting parameters themselves before the first step)."""
        if self.start is not None:
            return self.start
        return self.target.params(self.phi, self.phi_out, self.dtype)

    @property
    def log_post(self) -> Tensor:
        """``log pi(phi)`` up to a constant, ``(C,)``."""
        return -0.5 * self.phi.pow(2).sum(-1) - self.potential


class MHInfo(NamedTuple):
    """Per chain: log target at the new position, acceptance probability, whether
    the proposal was accepted, and the step size used."""

    log_post: Tensor
    accept_prob: Tensor
    accepted: Tensor
    step_size: Tensor


def evaluate(target: WideNetTarget, phi: Tensor, needs_grad: bool):
    """``(Phi, grad Phi or None)`` at ``phi``."""
    if needs_grad:
        return target.potential_and_grad(phi)
    with torch.no_grad():
        return target.potential(phi), None


def gaussian_log_ratio(phi: Tensor, new: Tensor, pot: Tensor, pot_new: Tensor,
                       mean_fwd: Tensor, mean_bwd: Tensor, var: Tensor) -> Tensor:
    """``log pi(new) + log q(phi | new) - log pi(phi) - log q(new | phi)`` for
    ``q(b | a) = N(b; m(a), diag(var))`` (normalising constants cancel)."""
    log_pi = -0.5 * phi.pow(2).sum(-1) - pot
    log_pi_new = -0.5 * new.pow(2).sum(-1) - pot_new
    q_fwd = -0.5 * ((new - mean_fwd).pow(2) / var).sum(-1)
    q_bwd = -0.5 * ((phi - mean_bwd).pow(2) / var).sum(-1)
    return log_pi_new + q_bwd - log_pi - q_fwd


def log_accept_ratio(proposal: Proposal, state: MHState, new: Tensor, pot_new: Tensor,
                     grad_new: Tensor | None, mean_fwd: Tensor) -> Tensor:
    """The proposal's log acceptance ratio (not clipped); ``-inf`` where undefined."""
    step = coordinate_steps(proposal, state)
    if proposal.log_ratio is not None:
        ratio = proposal.log_ratio(state.potential, pot_new)
    else:
        ratio = gaussian_log_ratio(state.phi, new, state.potential, pot_new, mean_fwd,
                                   proposal.mean(new, grad_new, step), proposal.std(step) ** 2)
    return torch.nan_to_num(ratio, nan=-math.inf, posinf=-math.inf)


def update(state: MHState, batch: Batch, gen: torch.Generator, *, proposal: Proposal
           ) -> tuple[MHState, MHInfo]:
    """One accept/reject step of every chain; pure (``state`` is not modified)."""
    phi, step = state.phi, coordinate_steps(proposal, state)
    mean_fwd = proposal.mean(phi, state.grad, step)
    xi = torch.randn(phi.shape, generator=gen, device=phi.device, dtype=phi.dtype)
    new = mean_fwd + proposal.std(step) * xi
    pot_new, grad_new = evaluate(state.target, new, proposal.needs_grad)
    log_ratio = log_accept_ratio(proposal, state, new, pot_new, grad_new, mean_fwd)
    u = torch.rand(log_ratio.shape, generator=gen, device=phi.device, dtype=phi.dtype)
    accepted = u.log() < log_ratio
    keep = accepted.unsqueeze(-1)
    phi_out = state.phi_out
    if phi_out is not None:  # exact conditional draw of the whitened readout
        phi_out = torch.randn(phi_out.shape, generator=gen, device=phi.device,
                              dtype=phi.dtype)
    new_state = state._replace(
        phi=torch.where(keep, new, phi), phi_out=phi_out,
        potential=torch.where(accepted, pot_new, state.potential),
        grad=None if grad_new is None else torch.where(keep, grad_new, state.grad),
        step=state.step + 1, start=None,
    )
    info = MHInfo(new_state.log_post, log_ratio.clamp(max=0).exp(), accepted.to(phi.dtype),
                  state.log_step.exp().expand(phi.shape[0]))
    return new_state, info


def coordinate_steps(proposal: Proposal, state: MHState) -> Tensor:
    """Step size of every coordinate ``(D,)``: the shared step times the target's
    per-coordinate scale (smaller for the learned-noise coordinates)."""
    return state.log_step.exp() * state.target.step_scale.pow(proposal.scale_power)


NOISE_REFRESH_EVERY = 100
"""Burn-in steps between two refreshes of a learned noise (:func:`refresh_noise`)."""


def refresh_noise(state: MHState, step: int, every: int = NOISE_REFRESH_EVERY) -> MHState:
    """Burn-in only: every ``every`` steps, move each chain's learned noise coordinate to the
    empirical-Bayes noise of its current features (the readout's marginal likelihood plus
    the noise prior, :func:`~.noise.empirical_bayes_log_noise`).

    The noise coordinate's proposal is scaled to the width of its posterior (about
    ``1 / sqrt(2 n)``), so from its start (the empirical-Bayes noise of the chains' prior
    features, which a trained network's residuals are far below) it crawls: on energy it
    was still 0.13-0.17 standardised units after burn-in against a training residual of
    0.05, and the predictive was three
    times too wide. Like the step-size
    adaptation this runs during burn-in only, so the kept chain is a valid Metropolis-Hastings
    chain. The whitened readout keeps its values (it is ``N(0, I)`` given the rest).
    """
    target = state.target
    if not target.n_noise or (step + 1) % every:
        return state
    hidden, _ = target.split(state.phi, state.phi_out)
    features = target.features(hidden).to(target.X.dtype)
    phi = state.phi.clone()
    for c in range(phi.shape[0]):
        eb = empirical_bayes_log_noise(features[c:c + 1], target.Y, target.extra_rows)
        phi[c, : target.n_noise] = target.whiten_log_noise(eb)
    potential, grad = evaluate(target, phi, state.grad is not None)
    return state._replace(phi=phi, potential=potential, grad=grad)


def adapt_step(state: MHState, info: MHInfo, step: int, *, target_accept: float
               ) -> MHState:
    """Robbins-Monro burn-in adaptation of the shared log step size towards
    ``target_accept`` (mean acceptance probability over chains), gain
    ``(step + 1)^-0.6``; the step is kept in ``[1e-8, state.max_step]``."""
    gain = (step + 1) ** -0.6
    log_step = state.log_step + gain * (info.accept_prob.mean() - target_accept)
    return state._replace(log_step=log_step.clamp(math.log(1e-8), math.log(state.max_step)))
