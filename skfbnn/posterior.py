"""Fitted posterior containers."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .nn.functional import Params

__all__ = ["Particles"]


class Particles:
    """Posterior draws stored as parameter dictionaries of shape ``(C, S, ...)``.

    Parameters
    ----------
    draws : dict of Tensor
        Kept draws, chain-major (``C`` chains by ``S`` draws), ArviZ's
        ``(chain, draw, *shape)`` convention.
    """

    def __init__(self, draws: Params) -> None:
        self.draws = draws

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_chains, n_draws)``."""
        first = next(iter(self.draws.values()))
        return int(first.shape[0]), int(first.shape[1])

    def flat(self) -> Params:
        """Draws with chains and draws merged into one leading dimension."""
        return {k: v.reshape(-1, *v.shape[2:]) for k, v in self.draws.items()}

    @torch.no_grad()
    def predict_f(
        self, forward: Callable[[Params, Tensor], Tensor], X: Tensor, chunk: int = 4096
    ) -> Tensor:
        """Network outputs of every draw, shape ``(C, S, n, n_out)``."""
        flat = self.flat()
        out = torch.cat([forward(flat, X[i : i + chunk]) for i in range(0, len(X), chunk)], 1)
        return out.reshape(*self.shape, *out.shape[1:])

    def to(self, device: torch.device, dtype: torch.dtype | None = None) -> Particles:
        """A copy on ``device`` (and in ``dtype`` if given)."""
        return Particles({k: v.to(device, dtype) for k, v in self.draws.items()})
