"""Measurement points X_M at which the functional prior is evaluated."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["MeasurementSampler"]


class MeasurementSampler:
    """Draw measurement sets: training inputs plus uniform points in a box, or context points.

    Each set holds ``round(train_fraction * n_points)`` training inputs drawn
    uniformly with replacement and the rest uniform in the per-feature
    training range widened by ``margin`` times its width on both sides, or, with
    ``points``, drawn from the user's context points or callable.

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
    points : Tensor of shape (m, d) or callable, optional
        Where the rest of each set comes from instead of the box: rows drawn uniformly
        with replacement from these context points, or ``points(k, gen)`` returning ``k``
        rows (an array-like of shape ``(k, d)``) from the fit's generator ``gen``.

    Examples
    --------
    >>> X = torch.zeros(4, 2)
    >>> context = torch.full((3, 2), 7.0)
    >>> s = MeasurementSampler(X, 6, 0.5, 0.1, points=context)
    >>> s.sample(2, torch.Generator().manual_seed(0))[:, 3:].unique().tolist()
    [7.0]
    >>> s = MeasurementSampler(X, 6, 0.5, 0.1, points=lambda k, gen: torch.ones(k, 2))
    >>> s.sample(2, torch.Generator().manual_seed(0)).shape
    torch.Size([2, 6, 2])
    """

    def __init__(
        self, X: Tensor, n_points: int, train_fraction: float, margin: float,
        points: Tensor | Callable[[int, torch.Generator], Any] | None = None,
    ) -> None:
        self.X = X
        self.points = points
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
        if self.points is not None and n_box:
            return torch.cat([X[idx], self._context(n_sets, n_box, gen)], dim=1)
        u = torch.rand(
            (n_sets, n_box, X.shape[1]), generator=gen, device=X.device, dtype=X.dtype
        )
        return torch.cat([X[idx], self.low + u * self.width], dim=1)

    def _context(self, n_sets: int, n: int, gen: torch.Generator) -> Tensor:
        """``(n_sets, n, d)`` rows from the context points or the callable."""
        X = self.X
        if isinstance(self.points, Tensor):
            idx = torch.randint(len(self.points), (n_sets, n), generator=gen,
                                device=self.points.device)
            return self.points[idx].to(X.device, X.dtype)
        rows = self.points(n_sets * n, gen)
        rows = torch.as_tensor(np.asarray(rows.detach().cpu() if isinstance(rows, Tensor)
                                          else rows), dtype=X.dtype).to(X.device)
        if rows.shape[0] != n_sets * n or rows.reshape(len(rows), -1).shape[1] != X.shape[1]:
            raise ValueError(
                f"measurement_points(n, generator) must return n rows of {X.shape[1]} values "
                f"(the training rows' width); asked for n={n_sets * n}, it returned an array "
                f"of shape {tuple(rows.shape)}.")
        return rows.reshape(n_sets, n, X.shape[1])
