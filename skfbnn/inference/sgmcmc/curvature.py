"""The sharpest curvature a Langevin-type chain sees, and the step cap it sets.

With a diagonal inverse mass ``M^{-1}`` and step ``eta``, a chain moves in the
stiffest direction of the log posterior as a linear recursion with gain
``eta * lambda``, where ``lambda`` is the largest eigenvalue of the
preconditioned curvature ``M^{-1/2} H M^{-1/2}`` (``H`` the negative Hessian of
the log posterior). The recursion is stable only below a kernel limit (SGLD:
``eps * lambda < 2``; SGHMC with friction ``alpha``: ``eta * lambda < 2 (2 -
alpha)``), and as it nears the limit the stationary variance of that direction
grows without bound. The adaptive preconditioner sets ``M`` from gradient
magnitudes, which do not see the correlations between weights, so ``lambda``
can sit near the limit: on yacht (SGHMC, step 0.5) it was 2.5-3.7 at the end of
burn-in, chains blew up now and then (log posterior from +300 to -14 000 in a
few steps, the learned noise then 50 times too large for dozens of draws), and
the predictive was too wide. :func:`sharpest_curvature` measures ``lambda`` per
chain by power iteration with Hessian-vector products; the run policy scales a
chain's step down to ``cap / lambda`` when above, once, at the last burn-in step
(so the kept chain is a fixed Markov chain). Capping at the middle of burn-in as
well did worse on yacht (SGHMC, first eight test splits, a development check:
-0.147 against -0.059 with the end only, -0.230 without a cap): burn-in at the
full step fits the data better.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ...nn.functional import Params
from ..objective import LogPosterior
from ..types import Batch, Schedule
from .diffusions import rescale_preconditioner

__all__ = ["sharpest_curvature", "capped_scale", "cap_hook"]

CAP_ROWS = 2048
"""Training rows (a random subset on larger data) the curvature is measured on."""


def _chain_dot(a: Params, b: Params) -> Tensor:
    """Per-chain inner product ``(C,)`` of two parameter dicts."""
    return sum((a[k] * b[k]).flatten(1).sum(1) for k in a)


def sharpest_curvature(
    log_posterior: LogPosterior, params: Params, batch: Batch, inverse_mass: Params | None,
    gen: torch.Generator, n_iter: int = 20,
) -> Tensor:
    """Largest-magnitude eigenvalue of ``M^{-1/2} H M^{-1/2}`` per chain, ``(C,)``.

    ``H`` is the negative Hessian of ``log_posterior`` at ``params`` on ``batch``
    (its likelihood term scaled to the whole data set, as the samplers'
    gradients are); ``inverse_mass`` ``None`` is the identity. Power iteration
    from a random start drawn from ``gen``, ``n_iter`` Hessian-vector products
    (double backward); the Rayleigh quotient of the last iterate is a lower
    bound that converges from below.

    Examples
    --------
    >>> import torch
    >>> lp = lambda p, b: -0.5 * (p["w"] ** 2 * torch.tensor([1.0, 9.0])).sum(-1)
    >>> w = {"w": torch.zeros(1, 2)}
    >>> float(sharpest_curvature(lp, w, {}, None, torch.Generator().manual_seed(0)))
    9.0
    """
    root = {k: (torch.ones_like(v) if inverse_mass is None else inverse_mass[k]).sqrt()
            for k, v in params.items()}
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    # the whole power iteration records its graph: each Hessian-vector product
    # differentiates a dot product with the gradients, also inside a caller's no_grad
    with torch.enable_grad():
        grads = torch.autograd.grad(log_posterior(leaves, batch).sum(), list(leaves.values()),
                                    create_graph=True)

        def apply(v: Params) -> Params:
            w = [root[k] * v[k] for k in leaves]
            dot = sum((g * wk).sum() for g, wk in zip(grads, w, strict=True))
            hv = torch.autograd.grad(dot, list(leaves.values()), retain_graph=True)
            return {k: -root[k] * h for k, h in zip(leaves, hv, strict=True)}

        v = {k: torch.randn(p.shape, generator=gen, device=gen.device, dtype=p.dtype).to(p.device)
             for k, p in leaves.items()}
        first = next(iter(leaves.values()))
        quotient = torch.zeros(first.shape[0], dtype=first.dtype, device=first.device)
        for _ in range(n_iter):
            norm = _chain_dot(v, v).sqrt().clamp_min(torch.finfo(quotient.dtype).tiny)
            v = {k: t / norm.view(-1, *([1] * (t.dim() - 1))) for k, t in v.items()}
            hv = apply(v)
            quotient = _chain_dot(v, hv)
            v = hv
    return quotient.detach().abs()


def capped_scale(curvature: Tensor, step: float, cap: float) -> Tensor:
    """The factor ``min(1, cap / (step * curvature))`` per chain.

    Examples
    --------
    >>> capped_scale(torch.tensor([100.0, 1000.0]), 0.002, 1.0)
    tensor([1.0000, 0.5000])
    """
    return (cap / (step * curvature).clamp_min(torch.finfo(curvature.dtype).tiny)).clamp(max=1.0)


def cap_hook(
    log_posterior: LogPosterior, X: Tensor, y: Tensor, gen: torch.Generator, *,
    cap: float, step_size: Schedule, at: int, measure=None, rows: int = CAP_ROWS,
    until: int | None = None,
):
    """A burn-in ``adapt(state, info, step)`` hook (see :func:`skfbnn.inference.run.run`)
    that, at step ``at``, scales each chain's adaptive inverse mass (its step)
    by :func:`capped_scale` of its :func:`sharpest_curvature`, measured on ``rows``
    training rows (all when fewer; the likelihood is scaled to the whole data set)
    and, for a functional prior, a measurement set from ``measure(gen)``.

    The cap holds for the largest step of the schedule in ``[at, until)`` (``until``
    None: the step at ``at``, enough for a schedule that never grows). A cyclical
    schedule returns to its peak after burn-in: capped at the step of step ``at``,
    near a trough, SGHMC's predictive std reached 135 sd(y) on 40 rows."""
    if until is None or until <= at:
        largest = None
    else:
        largest = max(step_size(t) for t in range(at, until))

    def adapt(state, info, step: int):
        if step != at:
            return state
        pick = (None if len(X) <= rows else
                torch.randperm(len(X), generator=gen, device=gen.device)[:rows].to(X.device))
        batch = {"x": X if pick is None else X[pick], "y": y if pick is None else y[pick],
                 "measure": measure(gen) if measure is not None else None}
        pre = state.preconditioner
        curvature = sharpest_curvature(log_posterior, state.params, batch, pre.inverse_mass, gen)
        if pre.scale is not None:  # measured at the current scale: undo it
            curvature = curvature / pre.scale
        scale = capped_scale(curvature, step_size(step) if largest is None else largest, cap)
        return state._replace(preconditioner=rescale_preconditioner(pre, scale))

    return adapt
