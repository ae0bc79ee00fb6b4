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
reference code (``../shared/notes/METHODS.md`` section 1.2) the kernel has one
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
    # The n x n differences are the n zeros of the diagonal and every pair i < j twice, so
    # torch's median of all n^2 (the lower middle value, sorted index (n^2 - 1) // 2) is the
    # pair at sorted index ((n^2 - 1) // 2 - n) // 2: a selection over the n (n - 1) / 2
    # pairs, in a contiguous row per dimension (3x faster than the median over n^2 rows).
    n = x.shape[0]
    rank = ((n * n - 1) // 2 - n) // 2
    if rank < 0:
        width = torch.zeros_like(x[0])
    else:
        i, j = torch.triu_indices(n, n, 1, device=x.device)
        cols = x.T.contiguous()
        diffs = (cols.unsqueeze(-1) - cols.unsqueeze(-2)).abs().reshape(len(cols), -1)
        width = diffs.index_select(1, i * n + j).kthvalue(rank + 1, dim=-1).values
    width = width * math.sqrt(x.shape[-1])
    return torch.where(width < 1e-6, width + 1.0, width)


def _rbf(a: Tensor, b: Tensor, width: Tensor) -> Tensor:
    z = (a.unsqueeze(1) - b.unsqueeze(0)) / width
    return torch.exp(-0.5 * z.pow(2).sum(-1))


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
    P = X if points is None else points.to(torch.float64)
    M = X.shape[0]
    both = X if points is None else torch.cat([X, P])
    if bandwidth is None:
        width = median_bandwidth(both)
    elif isinstance(bandwidth, str):
        if bandwidth != "median":
            raise ValueError(f"bandwidth must be None, 'median' or numbers. Got {bandwidth!r}.")
        width = torch.cdist(both, both).median().expand(X.shape[-1])
    else:
        width = torch.as_tensor(bandwidth, dtype=torch.float64, device=X.device)
    K = _rbf(X, X, width) + jitter * torch.eye(M, dtype=torch.float64, device=X.device)
    vals, vecs = torch.linalg.eigh(K)
    vals, vecs = vals.flip(0), vecs.flip(1)  # descending
    share = vals.clamp_min(0).cumsum(0) / vals.clamp_min(0).sum()
    J = min(M, int((share < threshold).sum()) + 1)
    vals, vecs = vals[:J], vecs[:, :J]
    # grad_{x_i} k(x_i, x_m) = -k(x_i, x_m) (x_i - x_m) / w^2, averaged over i
    diff = (X.unsqueeze(1) - X.unsqueeze(0)) / width.pow(2)  # (i, m, D)
    mean_grad = -(K.unsqueeze(-1) * diff).mean(0)  # (m, D)
    beta = -math.sqrt(M) * (vecs.T @ mean_grad) / vals.unsqueeze(-1)  # (J, D)
    psi = math.sqrt(M) * (_rbf(P, X, width) @ vecs) / vals  # (N, J)
    return (psi @ beta).to(dtype)
