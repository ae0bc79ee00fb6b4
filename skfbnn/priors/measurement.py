"""Measurement points X_M at which the functional prior is evaluated."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["MeasurementSampler"]


class MeasurementSampler:
    """Draw measurement sets: training inputs plus uniform points in a box.

    Each set holds ``round(train_fraction * n_points)`` training inputs drawn
    uniformly with replacement and the rest uniform in the per-feature
    training range widened by ``margin`` times its width on both sides.

    Parameters
    ----------
    X : Tensor of shape (n, d)
        Training inputs.
    n_points : int
        Size ``M`` of each measurement set.
    train_fraction : float
        Fraction of the set taken from the training inputs.
    margin : float
        Relative widening of the training box.
    """

    def __init__(
        self, X: Tensor, n_points: int, train_fraction: float, margin: float
    ) -> None:
        self.X = X
        self.n_points = n_points
        self.n_train = int(round(train_fraction * n_points))
        lo, hi = X.min(0).values, X.max(0).values
        width = (hi - lo).clamp_min(1e-12)
        self.low = lo - margin * width
        self.width = width * (1 + 2 * margin)

    def sample(self, n_sets: int, gen: torch.Generator) -> Tensor:
        """``n_sets`` measurement sets, shape ``(n_sets, M, d)``."""
        X = self.X
        idx = torch.randint(
            X.shape[0], (n_sets, self.n_train), generator=gen, device=X.device
        )
        n_box = self.n_points - self.n_train
        u = torch.rand(
            (n_sets, n_box, X.shape[1]), generator=gen, device=X.device, dtype=X.dtype
        )
        return torch.cat([X[idx], self.low + u * self.width], dim=1)
