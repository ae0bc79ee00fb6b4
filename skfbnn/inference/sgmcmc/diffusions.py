"""Gaussian noise from an explicit generator, shared by the Langevin-type rules."""

from __future__ import annotations

from numbers import Real

import torch
from torch import Tensor

from ..._validation import Interval
from ..hyper import Param, param

__all__ = ["noise_like", "step_size_param"]


def step_size_param(default: float) -> Param:
    """The ``step_size`` parameter of a Langevin-type kernel, with its default."""
    return param("step_size", default, [Interval(Real, 0, None, closed="neither")], "float",
                 "Step size per datum: the update uses ``step_size / n_train`` so the same "
                 "value suits data sets of any size.")


def noise_like(p: Tensor, gen: torch.Generator) -> Tensor:
    """Standard normal noise with ``p``'s shape, dtype and device, drawn from ``gen``."""
    return torch.randn(p.shape, generator=gen, device=p.device, dtype=p.dtype)
