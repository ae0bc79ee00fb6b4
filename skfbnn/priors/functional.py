"""Functional prior: ``log N(f_theta(X_M); m, K_MM + nugget I)`` at fresh measurement points.

Its gradient with respect to the network parameters, obtained by autograd,
is ``J^T (K + nugget I)^{-1} (m - f)`` with ``J`` the Jacobian of the network
outputs at ``X_M`` (Wu, Xuan & Lu 2025, Eq. 6). The prior term carries no
``N/n`` scaling.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from ..stats.gaussian import jittered_cholesky, mvn_log_prob_chol
from .gp import GPPrior
from .measurement import MeasurementSampler
from .weight import isotropic_log_prior

__all__ = ["MeasurementDraw", "FunctionalPrior", "FunctionPrior"]


class MeasurementDraw(NamedTuple):
    """One measurement set with its prior mean and Cholesky factor (float64)."""

    x: Tensor  # (M, d), network dtype/device
    mean: Tensor  # (n_out, M)
    chol: Tensor  # (n_out, M, M)


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
            x = self.sampler.sample(self.block_size, gen)
            mean, K = self.gp.mean_cov(x)
            K = K + self.nugget * torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
            res = jittered_cholesky(K, 1e-6)
            self.n_escalations += res.n_escalations
            # float64 wherever the network's device has it (not on MPS).
            dtype = torch.float32 if x.device.type == "mps" else torch.float64
            chol = res.chol.to(x.device, dtype)
            mean = mean.to(x.device, dtype)
            self._block = [
                MeasurementDraw(x[i], mean[i], chol[i]) for i in range(len(x) - 1, -1, -1)
            ]
        return self._block.pop()

    @staticmethod
    def log_prob(f: Tensor, draw: MeasurementDraw) -> Tensor:
        """Log prior density of function values ``f (C, M, n_out)``, shape ``(C,)``."""
        residual = f.to(draw.chol.dtype).transpose(1, 2) - draw.mean  # (C, n_out, M)
        return mvn_log_prob_chol(residual, draw.chol).sum(-1)


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
