"""Jittered Cholesky factorisation and Gaussian log-densities (float64 maths)."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["CholeskyResult", "NotPSDError", "jittered_cholesky", "mvn_log_prob_chol"]


class NotPSDError(ValueError):
    """A covariance matrix stayed non positive-definite after jitter escalation."""


class CholeskyResult(NamedTuple):
    """Lower Cholesky factor, the relative jitter used and the number of escalations."""

    chol: Tensor
    jitter: float
    n_escalations: int


def jittered_cholesky(
    K: Tensor, jitter: float = 1e-6, *, max_tries: int = 4
) -> CholeskyResult:
    """Cholesky of ``K + jitter * mean(diag K) * I``, escalating the jitter by 10x.

    Works on batches ``(..., M, M)``; one jitter is used for the whole batch.

    Parameters
    ----------
    K : Tensor of shape (..., M, M)
        Symmetric positive semi-definite matrices.
    jitter : float, default=1e-6
        Initial jitter relative to the mean diagonal.
    max_tries : int, default=4
        Number of escalations before giving up.

    Returns
    -------
    CholeskyResult

    Raises
    ------
    NotPSDError
        If ``K`` holds NaN or stays indefinite at the largest jitter.

    Examples
    --------
    >>> K = torch.ones(3, 3, dtype=torch.float64)  # rank one
    >>> res = jittered_cholesky(K, 1e-6)
    >>> res.chol.shape, res.jitter >= 1e-6
    (torch.Size([3, 3]), True)
    """
    if not torch.isfinite(K).all():
        raise NotPSDError("covariance matrix contains NaN or inf values.")
    scale = K.diagonal(dim1=-2, dim2=-1).mean(-1, keepdim=True).clamp_min(1e-30)
    eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
    current = jitter
    for attempt in range(max_tries + 1):
        chol, info = torch.linalg.cholesky_ex(K + (current * scale).unsqueeze(-1) * eye)
        if not bool((info != 0).any()):
            return CholeskyResult(chol, current, attempt)
        current *= 10.0
    raise NotPSDError(
        f"covariance matrix is not positive definite even with relative jitter "
        f"{current / 10.0:.1e}."
    )


def mvn_log_prob_chol(residual: Tensor, chol: Tensor) -> Tensor:
    """``log N(residual; 0, L L^T)`` summed over the last dimension.

    Parameters
    ----------
    residual : Tensor of shape (..., M)
        ``x - mean``; broadcasts against ``chol``'s batch dimensions.
    chol : Tensor of shape (..., M, M)
        Lower Cholesky factor of the covariance.

    Returns
    -------
    Tensor of shape (...)
    """
    white = torch.linalg.solve_triangular(chol, residual.unsqueeze(-1), upper=False)
    maha = white.squeeze(-1).pow(2).sum(-1)
    logdet = chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return -0.5 * maha - logdet - 0.5 * residual.shape[-1] * math.log(2 * math.pi)
