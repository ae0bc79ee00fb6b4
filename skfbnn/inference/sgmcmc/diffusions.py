"""Gaussian noise from an explicit generator, shared by the Langevin-type rules."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["noise_like"]


def noise_like(p: Tensor, gen: torch.Generator) -> Tensor:
    """Standard normal noise with ``p``'s shape, dtype and device, drawn from ``gen``."""
    return torch.randn(p.shape, generator=gen, device=p.device, dtype=p.dtype)
