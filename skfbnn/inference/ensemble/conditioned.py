"""A GP's covariance at some points conditioned on others, with a hand-written backward.

ifBDE's members, linearised at their weights, are GPs with the kernel ``Theta``; conditioned on
the member's minibatch they give the covariance its regulariser compares with the GP prior at the
measurement points (:mod:`.ifbde`).
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from ...stats.gaussian import NotPSDError, jittered_cholesky

__all__ = ["conditioned_covariance"]


def conditioned_covariance(theta: Tensor, n: int, jitter: float) -> Tensor:
    """``Theta_MM - Theta_MB (Theta_BB + jitter I)^{-1} Theta_BM`` (symmetrised) from the
    joint kernel ``theta (..., n + M, n + M)`` of ``n`` conditioning points and ``M`` others.

    A Cholesky factor of ``Theta_BB + jitter I`` gives the value; the backward is by hand:
    with ``X = (Theta_BB + jitter I)^{-1} Theta_BM`` and ``Y = [X; -I]`` the covariance is
    ``Y^T theta Y`` to first order, so the gradient with respect to ``theta`` is
    ``Y sym(G) Y^T`` (two products, where autograd differentiates the Cholesky
    factorisation and the triangular solve, and scatters the four blocks back).
    """
    return _ConditionedCovariance.apply(theta, n, jitter)


class _ConditionedCovariance(torch.autograd.Function):
    @staticmethod
    def forward(ctx, theta: Tensor, n: int, jitter: float) -> Tensor:
        t_bb, t_bm, t_mm = theta[..., :n, :n], theta[..., :n, n:], theta[..., n:, n:]
        eye_b = torch.eye(n, dtype=theta.dtype, device=theta.device)
        chol = _factor(t_bb + jitter * eye_b)
        white = torch.linalg.solve_triangular(chol, t_bm, upper=False)
        cov = t_mm - white.transpose(-1, -2) @ white
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(torch.linalg.solve_triangular(
                chol.transpose(-1, -2), white, upper=True))
        return 0.5 * (cov + cov.transpose(-1, -2))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor):
        (X,) = ctx.saved_tensors  # (..., n, M)
        eye_m = torch.eye(X.shape[-1], dtype=X.dtype, device=X.device)
        Y = torch.cat([X, -eye_m.expand_as(grad)], dim=-2)
        return (Y @ (0.5 * (grad + grad.transpose(-1, -2)))) @ Y.transpose(-1, -2), None, None


def _factor(a: Tensor) -> Tensor:
    """Cholesky factor of ``a``. Where it fails, which takes a blown-up state (a learning rate
    far too large sent the NTK's entries to 1e9, where the absolute jitter is lost in
    rounding), the relative jitter of :func:`~skfbnn.stats.gaussian.jittered_cholesky`; NaN
    where even that fails, so that the driver reports the divergence."""
    chol, info = torch.linalg.cholesky_ex(a)
    if not bool((info != 0).any()):
        return chol
    try:
        return jittered_cholesky(a, 1e-6).chol
    except NotPSDError:
        return torch.full_like(a, float("nan"))
