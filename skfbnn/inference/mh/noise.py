"""Empirical-Bayes observation noise for the wide-network samplers.

``noise_std="learn"`` fixes the noise before sampling at the maximiser of the
readout's log marginal likelihood ``log N(y; 0, sigma^2 I + Psi Psi^T)``, summed
over the chains' prior draws of the hidden layers (Monte-Carlo features of the
wide network's NNGP kernel), plus the library's weak log-normal noise prior
(:func:`skfbnn.likelihoods.noise_log_prior`). Why not sample it: the
reparametrisation is built with ``lam = sigma^2`` and is exact only for that
noise, and a Gibbs step on the noise given the weights mixes slowly when a wide
network can interpolate the data.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ...likelihoods import noise_log_prior

__all__ = ["log_marginal_likelihood", "empirical_bayes_log_noise"]


def _spectrum(Psi: Tensor, Y: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Eigenvalues ``s`` ``(C, m)`` of ``Psi Psi^T`` (the ``m = min(n, p)`` non-trivial
    ones), squared projections ``z2`` ``(C, m, k)`` of ``Y`` on their eigenvectors and
    the squared norm of ``Y`` outside their span ``(C, k)``."""
    n, p = Psi.shape[-2:]
    if n <= p:
        s, U = torch.linalg.eigh(Psi @ Psi.mT)
        z2 = (U.mT @ Y).pow(2)
        return s.clamp_min(0), z2, torch.zeros_like(z2[:, 0])
    s, V = torch.linalg.eigh(Psi.mT @ Psi)
    s = s.clamp_min(0)
    w = V.mT @ (Psi.mT @ Y)
    keep = (s > s.amax(-1, keepdim=True) * 1e-12).unsqueeze(-1)
    z2 = torch.where(keep, w.pow(2) / s.clamp_min(1e-300).unsqueeze(-1), torch.zeros_like(w))
    return s, z2, (Y.pow(2).sum(0) - z2.sum(1)).clamp_min(0)


def log_marginal_likelihood(Psi: Tensor, Y: Tensor, log_noise: Tensor,
                            extra_rows: float = 0.0) -> Tensor:
    """``log N(y_j; 0, sigma^2 I + Psi Psi^T)`` for a grid of ``log sigma`` ``(G,)``:
    ``(G, C, k)``.

    With row weights ``w`` (``sample_weight``), ``Psi`` and ``Y`` come with their rows
    scaled by ``sqrt(w_i)`` and ``extra_rows = sum w - n``: the result is then the log
    marginal likelihood of the weighted likelihood ``prod_i N(y_i; f_i, sigma^2)^{w_i}``
    (that of the rows repeated ``w_i`` times), which is the scaled rows' plus
    ``-extra_rows / 2 * log(2 pi sigma^2)``.

    Examples
    --------
    >>> import torch
    >>> Psi = torch.zeros(1, 4, 2, dtype=torch.float64)
    >>> Y = torch.ones(4, 1, dtype=torch.float64)
    >>> ll = log_marginal_likelihood(Psi, Y, torch.zeros(1, dtype=torch.float64))
    >>> round(float(ll), 4)  # four standard-normal log densities at 1
    -5.6758
    """
    n = Psi.shape[-2]
    s, z2, rest = _spectrum(Psi, Y)
    var = torch.exp(2 * log_noise).view(-1, 1, 1, 1)  # (G, 1, 1, 1)
    quad = (z2 / (s.unsqueeze(-1) + var)).sum(-2) + rest / var[..., 0]
    n_zero = n - s.shape[-1]
    logdet = torch.log(s.unsqueeze(-1) + var).sum(-2) + n_zero * torch.log(var[..., 0])
    value = -0.5 * (quad + logdet + n * math.log(2 * math.pi))
    if extra_rows:
        value = value - 0.5 * extra_rows * (2 * log_noise.view(-1, 1, 1)
                                            + math.log(2 * math.pi))
    return value


def empirical_bayes_log_noise(Psi: Tensor, Y: Tensor, extra_rows: float = 0.0,
                              n_grid: int = 801) -> Tensor:
    """MAP ``log sigma`` per output ``(k,)`` on a grid over ``[1e-3, 10]``
    (standardised units), pooled over the chains' features ``Psi`` ``(C, n, p)``
    (``extra_rows``: see :func:`log_marginal_likelihood`)."""
    grid = torch.linspace(math.log(1e-3), math.log(10.0), n_grid, dtype=Psi.dtype,
                          device=Psi.device)
    score = log_marginal_likelihood(Psi, Y, grid, extra_rows).sum(1)  # (G, k)
    score = score + noise_log_prior(grid.unsqueeze(-1)).unsqueeze(-1)
    return grid[score.argmax(0)]
