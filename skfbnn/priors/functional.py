"""Functional prior: ``log N(f_theta(X_M); m, K_MM + nugget I)`` at fresh measurement points.

Its gradient with respect to the network parameters, obtained by autograd,
is ``J^T (K + nugget I)^{-1} (m - f)`` with ``J`` the Jacobian of the network
outputs at ``X_M`` (Wu, Xuan & Lu 2025, Eq. 6). The prior term carries no
``N/n`` scaling.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from ..stats.gaussian import jittered_cholesky
from .gp import GPPrior
from .measurement import MeasurementSampler
from .weight import isotropic_log_prior

__all__ = ["MeasurementDraw", "FunctionalPrior", "FunctionPrior"]

_LOG_2PI = math.log(2 * math.pi)


class MeasurementDraw(NamedTuple):
    """One measurement set with its prior mean and Cholesky factor (float64).

    ``log_norm``, the Gaussian's log normalising constant summed over the
    outputs, is precomputed per block by :class:`FunctionalPrior`; left out,
    :meth:`FunctionalPrior.log_prob` computes it from ``chol``.
    """

    x: Tensor  # (M, d), network dtype/device
    mean: Tensor  # (n_out, M)
    chol: Tensor  # (n_out, M, M)
    log_norm: Tensor | None = None  # (), sum_o -log|chol_o| - M log(2 pi) / 2


class FunctionalPrior:
    """GP prior evaluated at measurement points that are redrawn every step.

    Measurement sets are drawn ``block_size`` at a time and their covariance
    matrices factorised in one batched call, which amortises the Python
    overhead of gpytorch; every step still sees a fresh, independent set.

    Parameters
    ----------
    gp : GPPrior
        The fitted GP prior.
    sampler : MeasurementSampler
        Draws the measurement sets.
    nugget : float
        Variance added to the diagonal of ``K_MM`` (absolute, in the units of
        the function values squared). A further relative jitter of 1e-6 is
        escalated only if the Cholesky factorisation fails.
    block_size : int, default=64
        Number of sets prepared per batched factorisation.
    """

    def __init__(
        self, gp: GPPrior, sampler: MeasurementSampler, nugget: float, block_size: int = 64
    ) -> None:
        self.gp = gp
        self.sampler = sampler
        self.nugget = nugget
        self.block_size = block_size
        self.n_escalations = 0
        self._block: list[MeasurementDraw] = []

    def draw(self, gen: torch.Generator) -> MeasurementDraw:
        """The next measurement set."""
        if not self._block:
            self._block = self._prepare_block(gen)
        return self._block.pop()

    def _prepare_block(self, gen: torch.Generator) -> list[MeasurementDraw]:
        """``block_size`` fresh sets with their factors, last one first (for ``pop``)."""
        x = self.sampler.sample(self.block_size, gen)
        mean, K = self.gp.mean_cov(x)
        chol = self._factorise(K)
        log_norm = _log_norm(chol)
        # float64 wherever the network's device has it (not on MPS).
        dtype = torch.float32 if x.device.type == "mps" else torch.float64
        mean, chol, log_norm = (t.to(x.device, dtype) for t in (mean, chol, log_norm))
        parts = (t.unbind() for t in (x, mean, chol, log_norm))
        block = [MeasurementDraw(*d) for d in zip(*parts, strict=True)]
        block.reverse()
        return block

    def _factorise(self, K: Tensor) -> Tensor:
        """Cholesky factors of ``K + nugget I`` plus the relative jitter 1e-6.

        One shifted copy and one factorisation in the usual case; only if it
        fails (or gives NaN) does :func:`jittered_cholesky` escalate the
        jitter, counted in ``n_escalations``.
        """
        jitter = 1e-6
        diag = K.diagonal(dim1=-2, dim2=-1).mean(-1) + self.nugget  # of K + nugget I
        shift = self.nugget + jitter * diag.clamp_min(1e-30)
        eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
        chol, info = torch.linalg.cholesky_ex(K + shift[..., None, None] * eye)
        # NaN in K propagates to the diagonal of its factor.
        finite = torch.isfinite(chol.diagonal(dim1=-2, dim2=-1)).all()
        if not bool((info != 0).any()) and bool(finite):
            return chol
        res = jittered_cholesky(K + self.nugget * eye, jitter)
        self.n_escalations += res.n_escalations
        return res.chol

    @staticmethod
    def log_prob(f: Tensor, draw: MeasurementDraw) -> Tensor:
        """Log prior density of function values ``f (C, M, n_out)``, shape ``(C,)``."""
        # (n_out, M, C): one triangular solve per output, all chains as its columns.
        residual = f.to(draw.chol.dtype).permute(2, 1, 0) - draw.mean.unsqueeze(-1)
        white = torch.linalg.solve_triangular(draw.chol, residual, upper=False)
        log_norm = _log_norm(draw.chol) if draw.log_norm is None else draw.log_norm
        return log_norm - 0.5 * white.pow(2).sum((0, 1))


def _log_norm(chol: Tensor) -> Tensor:
    """``sum_o (-log|L_o| - M log(2 pi) / 2)`` for factors ``chol (..., n_out, M, M)``."""
    half_logdet = chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return -(half_logdet + 0.5 * chol.shape[-1] * _LOG_2PI).sum(-1)


class FunctionPrior:
    """The GP prior on function values as a network prior, optionally with weak weights.

    ``log_prob(params, f_measure, measure) = log N(f_measure; m, K + nugget I)``
    plus ``sum log N(w; 0, weight_std^2)`` when ``weight_std`` is given.

    Parameters
    ----------
    functional : FunctionalPrior
        The GP prior and its measurement-set sampler.
    weight_std : float or None
        Optional isotropic Gaussian weight prior added to the functional one.
    """

    resample = None  # no Gibbs step (the prior contract's optional member)

    def __init__(self, functional: FunctionalPrior, weight_std: float | None = None) -> None:
        self.functional = functional
        self.weight_std = weight_std

    @property
    def gp(self) -> GPPrior:
        """The fitted GP prior."""
        return self.functional.gp

    def draw_measure(self, gen: torch.Generator) -> MeasurementDraw:
        """A fresh measurement set with its prior mean and Cholesky factor."""
        return self.functional.draw(gen)

    def log_prob(self, params, f_measure: Tensor, measure: MeasurementDraw) -> Tensor:
        """Log prior density per parameter set, ``(C,)``."""
        lp = FunctionalPrior.log_prob(f_measure, measure)
        if self.weight_std is not None:
            lp = lp + isotropic_log_prior(params, self.weight_std)
        return lp
