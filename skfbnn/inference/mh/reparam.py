"""The Bayesian linear readout: marginal potential and the Hron et al. (2022) map.

Given features ``Psi`` ``(C, n, p)``, targets ``Y`` ``(n, k)`` and noise variances
``lam`` ``(k,)``, the readout posterior is ``N(mu, Sigma)`` per output with
``Sigma = lam (Psi^T Psi + lam I)^{-1}``, ``mu = (Psi^T Psi + lam I)^{-1} Psi^T y``.
In the coordinates ``theta = mu + S phi`` (``S S^T = Sigma``) the potential of the
whole posterior with respect to ``N(0, I)`` is independent of ``phi``:

.. math::

    \\Phi = \\tfrac12 \\sum_j y_j^T (\\lambda_j I_n + \\Psi\\Psi^T)^{-1} y_j
    + \\tfrac12 \\sum_j \\log\\det(\\lambda_j I_n + \\Psi\\Psi^T)

(up to a constant), the readout's negative log marginal likelihood (METHODS.md
§4.3 B2: the reference pCNL code uses the likelihood of the mapped readout
instead, which targets a different distribution). It is computed from one
Cholesky of the ``p x p`` Gram or, when ``n < p``, of its ``n x n`` dual.

The features may come in a narrower dtype than the targets (float32 features of a
float64 chain, :class:`~.target.WideNetTarget`): the Gram and everything after it are
then computed in the targets' dtype (:func:`gram`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["use_dual", "gram", "marginal_potential", "likelihood_potential", "readout",
           "whiten"]


def use_dual(n: int, p: int) -> bool:
    """Whether the ``n x n`` dual is the smaller system (``n < p``)."""
    return n < p


def _per_chain(lam: Tensor, Psi: Tensor, Y: Tensor | None = None) -> Tensor:
    """Noise variances as ``(C, k)`` (one row shared by every chain, or one per chain), in
    the wider dtype of ``Psi`` and ``Y``."""
    dtype = Psi.dtype if Y is None else torch.promote_types(Psi.dtype, Y.dtype)
    lam = lam.to(device=Psi.device, dtype=dtype)
    return lam.expand(Psi.shape[0], lam.shape[-1])


class _Gram(torch.autograd.Function):
    # Forward in the targets' dtype, backward in the features' (see gram).

    @staticmethod
    def forward(ctx, Psi: Tensor, Y: Tensor) -> tuple[Tensor, Tensor]:
        wide = Psi.to(Y.dtype)
        ctx.save_for_backward(Psi, Y)
        return wide.mT @ wide, wide.mT @ Y

    @staticmethod
    def backward(ctx, grad_G: Tensor, grad_b: Tensor):
        Psi, Y = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None, None
        dtype = Psi.dtype
        # (C, p, n), the layout of the features (NTKLayout.features), then viewed as Psi;
        # the targets' term added in place by the same product
        grad = (grad_G + grad_G.mT).to(dtype) @ Psi.mT
        grad.baddbmm_(grad_b.to(dtype), Y.to(dtype).mT.expand(len(grad), *Y.mT.shape))
        return grad.mT, None


def gram(Psi: Tensor, Y: Tensor) -> tuple[Tensor, Tensor]:
    """``Psi^T Psi`` ``(C, p, p)`` and ``Psi^T Y`` ``(C, p, k)`` in the dtype of ``Y``.

    With float32 features and float64 targets the products are exact (a product of two
    float32 numbers fits a float64), so the Gram is that of the features as they are,
    rounded only by float64 sums; the Cholesky factor, the solves and the potential follow
    in float64. Sums of float32 products instead moved the potential of a protein-sized
    problem (41 157 rows) by 0.05-0.17 between nearby states, against 2e-4 this way. The
    gradient with respect to ``Psi`` is computed in the features' dtype (it only steers the
    proposal, whose Metropolis-Hastings correction uses the same values).

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> Psi = torch.randn(2, 5, 3, generator=g)
    >>> Y = torch.randn(5, 1, generator=g, dtype=torch.float64)
    >>> G, b = gram(Psi, Y)
    >>> G.dtype, bool(torch.allclose(G, Psi.double().mT @ Psi.double(), rtol=0, atol=1e-15))
    (torch.float64, True)
    """
    if Psi.dtype == Y.dtype:
        return Psi.mT @ Psi, Psi.mT @ Y
    return _Gram.apply(Psi, Y)


def _factor(A: Tensor, lam: Tensor) -> tuple[Tensor, Tensor]:
    """Lower Cholesky factors of ``A + lam_j I`` for ``lam`` ``(C, k)``: ``(C, 1, m, m)``
    when the outputs share their noise, else ``(C, k, m, m)``; and whether each
    chain's factorisation failed."""
    lam_b = lam[:, :1] if bool((lam == lam[:, :1]).all()) else lam
    eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    L, info = torch.linalg.cholesky_ex(A.unsqueeze(1) + lam_b.unsqueeze(-1).unsqueeze(-1) * eye)
    return L, (info != 0).any(1)


def _solve(L: Tensor, B: Tensor) -> Tensor:
    """``L^{-1} B_j`` per output, as ``(C, m, k)``, for ``B`` ``(C, m, k)``."""
    if L.shape[1] == 1:
        return torch.linalg.solve_triangular(L[:, 0], B, upper=False)
    z = torch.linalg.solve_triangular(L, B.transpose(1, 2).unsqueeze(-1), upper=False)
    return z.squeeze(-1).transpose(1, 2)


def _solve_t(L: Tensor, B: Tensor) -> Tensor:
    """``L_j^{-T} B_j`` per output, as ``(C, m, k)``."""
    if L.shape[1] == 1:
        return torch.linalg.solve_triangular(L[:, 0].mT, B, upper=True)
    z = torch.linalg.solve_triangular(L.mT, B.transpose(1, 2).unsqueeze(-1), upper=True)
    return z.squeeze(-1).transpose(1, 2)


def marginal_potential(Psi: Tensor, Y: Tensor, lam: Tensor, dual: bool | None = None) -> Tensor:
    """``Phi`` of the module docstring per chain, ``(C,)``; ``inf`` where the
    Cholesky fails.

    Parameters
    ----------
    Psi : Tensor of shape (C, n, p)
    Y : Tensor of shape (n, k)
    lam : Tensor of shape (k,) or (C, k)
        Observation-noise variances (shared by the chains, or per chain).
    dual : bool or None
        Factorise ``Psi Psi^T + lam I`` (True) or ``Psi^T Psi + lam I`` (False);
        None picks the smaller (:func:`use_dual`).

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> Psi = torch.randn(2, 5, 3, generator=g, dtype=torch.float64)
    >>> Y, lam = torch.randn(5, 1, generator=g, dtype=torch.float64), torch.ones(1)
    >>> a = marginal_potential(Psi, Y, lam, dual=True)
    >>> b = marginal_potential(Psi, Y, lam, dual=False)
    >>> bool(torch.allclose(a, b))
    True
    """
    n, p = Psi.shape[-2:]
    lam = _per_chain(lam, Psi, Y)
    dual = use_dual(n, p) if dual is None else dual
    if dual:
        Psi = Psi.to(lam.dtype)  # the n x n system of few rows: all in the wider dtype
        L, failed = _factor(Psi @ Psi.mT, lam)
        quad = _solve(L, Y.expand(Psi.shape[0], n, Y.shape[-1])).pow(2).sum(1)
        logdet = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    else:
        G, b = gram(Psi, Y.to(lam.dtype))
        L, failed = _factor(G, lam)
        z = _solve(L, b)
        quad = (Y.pow(2).sum(0) - z.pow(2).sum(1)) / lam
        logdet = (n - p) * lam.log() + 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    phi = 0.5 * (quad + logdet).sum(-1)
    return torch.where(failed, torch.full_like(phi, math.inf), phi)


def likelihood_potential(Psi: Tensor, theta: Tensor, Y: Tensor, lam: Tensor) -> Tensor:
    """Negative Gaussian log-likelihood of readout ``theta`` ``(C, p, k)``, ``(C,)``
    (the potential without reparametrisation, up to ``n/2 log 2 pi``), in the dtype of
    ``theta`` (features in a narrower dtype are widened first)."""
    lam = _per_chain(lam, theta, Y)
    r = Y - Psi.to(theta.dtype) @ theta
    return 0.5 * (r.pow(2).sum(1) / lam + Y.shape[0] * lam.log()).sum(-1)


def readout(Psi: Tensor, Y: Tensor, lam: Tensor, phi: Tensor, dual: bool | None = None
            ) -> Tensor:
    """The readout ``theta = mu + S phi`` ``(C, p, k)`` of whitened ``phi`` ``(C, p, k)``.

    Primal: ``S = sqrt(lam) L^{-T}`` with ``L L^T = Psi^T Psi + lam I`` (Hron et
    al.). Dual: the symmetric root ``S = I - Psi^T U diag(g) U^T Psi`` from the
    eigendecomposition ``Psi Psi^T = U diag(s) U^T``, ``g = 1 / ((s + lam)(1 +
    sqrt(lam / (s + lam))))``. Both satisfy ``S S^T = Sigma``, so ``phi ~ N(0, I)``
    gives ``theta ~ N(mu, Sigma)`` exactly.
    """
    n, p = Psi.shape[-2:]
    lam = _per_chain(lam, Psi)
    dual = use_dual(n, p) if dual is None else dual
    if not dual:
        L, _ = _factor(Psi.mT @ Psi, lam)
        return _solve_t(L, _solve(L, Psi.mT @ Y) + lam.sqrt().unsqueeze(1) * phi)
    lam = lam.unsqueeze(1)  # (C, 1, k)
    s, U = torch.linalg.eigh(Psi @ Psi.mT)
    s = s.clamp_min(0).unsqueeze(-1)  # (C, n, 1)
    mu = Psi.mT @ (U @ ((U.mT @ Y) / (s + lam)))
    g = 1.0 / ((s + lam) * (1.0 + (lam / (s + lam)).sqrt()))
    return mu + phi - Psi.mT @ (U @ (g * (U.mT @ (Psi @ phi))))


def whiten(Psi: Tensor, Y: Tensor, lam: Tensor, theta: Tensor, dual: bool | None = None
           ) -> Tensor:
    """Inverse of :func:`readout`: the whitened ``phi`` ``(C, p, k)`` of ``theta``.

    Primal: ``phi = L^T (theta - mu) / sqrt(lam)``; dual:
    ``phi = (I + Psi^T U diag(r) U^T Psi)(theta - mu)`` with
    ``r = 1 / (lam (1 + sqrt(1 + s / lam)))``, the inverse of the symmetric root.
    """
    n, p = Psi.shape[-2:]
    lam = _per_chain(lam, Psi)
    dual = use_dual(n, p) if dual is None else dual
    zero = torch.zeros_like(theta)
    delta = theta - readout(Psi, Y, lam, zero, dual)
    if not dual:
        L, _ = _factor(Psi.mT @ Psi, lam)
        if L.shape[1] == 1:
            return (L[:, 0].mT @ delta) / lam.sqrt().unsqueeze(1)
        z = (L.mT @ delta.transpose(1, 2).unsqueeze(-1)).squeeze(-1).transpose(1, 2)
        return z / lam.sqrt().unsqueeze(1)
    lam = lam.unsqueeze(1)
    s, U = torch.linalg.eigh(Psi @ Psi.mT)
    s = s.clamp_min(0).unsqueeze(-1)
    r = 1.0 / (lam * (1.0 + (1.0 + s / lam).sqrt()))
    return delta + Psi.mT @ (U @ (r * (U.mT @ (Psi @ delta))))
