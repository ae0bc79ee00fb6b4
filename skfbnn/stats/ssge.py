"""Spectral Stein Gradient Estimator (Shi, Sun & Zhu, 2018): the score of an implicit
distribution from its samples.

Given samples ``x_1..x_M`` of ``q``, the score ``g(x) = grad log q(x)`` is
expanded in the top eigenfunctions of an RBF kernel, estimated by the Nyström
method:

.. math::

    \\psi_j(x) = \\frac{\\sqrt{M}}{\\lambda_j} \\sum_m u_{mj} k(x, x_m), \\qquad
    \\beta_j = -\\frac{1}{M} \\sum_i \\nabla \\psi_j(x_i), \\qquad
    \\hat g(x) = \\sum_j \\beta_j \\psi_j(x),

with ``(lambda_j, u_j)`` the eigenpairs of the Gram matrix. As in the fBNN
reference code the kernel has one
bandwidth per dimension from the median heuristic (``median |x_id - x_jd| *
sqrt(D)`` over the samples and the evaluation points), and the smallest number
of eigenfunctions explaining ``threshold`` of the spectrum is kept. Fixes of
that code: at least one eigenfunction (it could keep none and return 0), the
eigenvalue that crosses the threshold is included, and the maths is float64.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["median_bandwidth", "ssge_score"]


def median_bandwidth(x: Tensor) -> Tensor:
    """Per-dimension ``median_{i,j} |x_id - x_jd| * sqrt(D)`` (1 added where below 1e-6).

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[0.0, 0.0], [1.0, 3.0], [2.0, 6.0]], dtype=torch.float64)
    >>> median_bandwidth(x) / 2 ** 0.5
    tensor([1., 3.], dtype=torch.float64)
    """
    return _median_width(x.unsqueeze(1) - x.unsqueeze(0))


def _median_width(diff: Tensor) -> Tensor:
    """:func:`median_bandwidth` from the differences ``diff[i, j] = x_i - x_j`` ``(n, n, D)``."""
    # The n x n differences are the n zeros of the diagonal and every pair i < j twice, so
    # torch's median of all n^2 (the lower middle value, sorted index (n^2 - 1) // 2) is the
    # pair at sorted index ((n^2 - 1) // 2 - n) // 2: a selection over the n (n - 1) / 2
    # pairs, in a contiguous row per dimension (3x faster than the median over n^2 rows).
    n, D = diff.shape[0], diff.shape[-1]
    rank = ((n * n - 1) // 2 - n) // 2
    if rank < 0:
        width = torch.zeros_like(diff[0, 0])
    else:
        i, j = torch.triu_indices(n, n, 1, device=diff.device)
        pairs = diff.abs().reshape(n * n, D).T.contiguous()
        width = pairs.index_select(1, i * n + j).kthvalue(rank + 1, dim=-1).values
    width = width * math.sqrt(D)
    return torch.where(width < 1e-6, width + 1.0, width)


def _rbf(diff: Tensor, width: Tensor) -> Tensor:
    """The RBF kernel from the differences ``diff[i, j] = a_i - b_j`` ``(n, m, D)``."""
    return torch.exp(-0.5 * (diff / width).pow(2).sum(-1))


def ssge_score(
    samples: Tensor, points: Tensor | None = None, *, threshold: float = 0.99,
    bandwidth: Tensor | float | str | None = None, jitter: float = 0.0,
) -> Tensor:
    """Estimated score ``grad log q`` at ``points`` from samples of ``q``.

    Parameters
    ----------
    samples : Tensor of shape (M, D)
    points : Tensor of shape (N, D), optional
        Where to estimate the score (default: at the samples).
    threshold : float, default=0.99
        Keep the fewest eigenfunctions whose eigenvalues hold at least this
        fraction of the spectrum (at least one).
    bandwidth : None, "median", float or Tensor of shape (D,)
        Kernel bandwidths. None: one per dimension by :func:`median_bandwidth`
        of samples and points (the fBNN reference's heuristic); ``"median"``:
        one isotropic bandwidth, the median pairwise distance (more accurate on
        isotropic targets: bulk cosine to the true score 0.95-0.99 against
        0.81-0.89 at d = 2-10, ``tests/stats/test_ssge.py``); or fixed values.
    jitter : float, default=0.0
        Added to the Gram matrix's diagonal.

    Returns
    -------
    Tensor of shape (N, D), in the dtype of ``samples`` (computed in float64).

    Examples
    --------
    >>> import torch
    >>> x = torch.randn(300, 2, generator=torch.Generator().manual_seed(0))
    >>> g = ssge_score(x, torch.zeros(1, 2))
    >>> g.shape, bool(g.abs().max() < 0.5)   # the score of N(0, I) at 0 is 0
    (torch.Size([1, 2]), True)
    """
    dtype = samples.dtype
    X = samples.to(torch.float64)
    M = X.shape[0]
    # One difference tensor x_i - x_m serves the bandwidth, the Gram matrix and its gradient,
    # and (at the samples) the eigenfunctions.
    diff = X.unsqueeze(1) - X.unsqueeze(0)  # (i, m, D)
    P = None if points is None else points.to(torch.float64)
    if bandwidth is None:
        width = _median_width(diff) if P is None else median_bandwidth(torch.cat([X, P]))
    elif isinstance(bandwidth, str):
        if bandwidth != "median":
            raise ValueError(f"bandwidth must be None, 'median' or numbers. Got {bandwidth!r}.")
        both = X if P is None else torch.cat([X, P])
        width = torch.cdist(both, both).median().expand(X.shape[-1])
    else:
        width = torch.as_tensor(bandwidth, dtype=torch.float64, device=X.device)
    gram = _rbf(diff, width)
    K = gram + jitter * torch.eye(M, dtype=torch.float64, device=X.device)
    vals, vecs = torch.linalg.eigh(K)
    desc = vals.flip(0).clamp_min(0)
    J = min(M, int((desc.cumsum(0) / desc.sum() < threshold).sum()) + 1)
    vals, vecs = vals[M - J:].flip(0), vecs[:, M - J:].flip(1)  # the J largest, descending
    # grad_{x_i} k(x_i, x_m) = -k(x_i, x_m) (x_i - x_m) / w^2, averaged over i
    mean_grad = -(K.unsqueeze(-1) * (diff / width.pow(2))).mean(0)  # (m, D)
    beta = -math.sqrt(M) * (vecs.T @ mean_grad) / vals.unsqueeze(-1)  # (J, D)
    at = gram if P is None else _rbf(P.unsqueeze(1) - X.unsqueeze(0), width)
    psi = math.sqrt(M) * (at @ vecs) / vals  # (N, J)
    return (psi @ beta).to(dtype)
