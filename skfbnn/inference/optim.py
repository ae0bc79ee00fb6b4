"""Adam as a pure update rule (ascent on an objective).

Kingma & Ba (2015). The state holds the first and second moment estimates of
every parameter; nothing is modified in place, so optimisation-based methods
stay pure like the samplers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from ..nn.functional import Params

__all__ = ["AdamState", "adam_init", "adam_step"]


class AdamState(NamedTuple):
    """First and second moments and the number of steps taken."""

    m: Params
    v: Params
    t: int


def adam_init(params: Params) -> AdamState:
    """Zero moments for ``params``."""
    zeros = {k: torch.zeros_like(p) for k, p in params.items()}
    return AdamState(zeros, dict(zeros), 0)


def adam_step(
    params: Params,
    grads: Params,
    state: AdamState,
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
) -> tuple[Params, AdamState]:
    """One Adam step **up** the gradient; returns new parameters and state.

    Examples
    --------
    >>> import torch
    >>> p = {"x": torch.tensor([1.0])}
    >>> new, s = adam_step(p, {"x": torch.tensor([2.0])}, adam_init(p), lr=0.1)
    >>> round(float(new["x"]), 6), s.t
    (1.1, 1)
    """
    b1, b2 = betas
    t = state.t + 1
    keys = list(grads)
    g = [grads[k] for k in keys]
    # torch._foreach_* (out-of-place) batch the element-wise maths over all tensors
    m = torch._foreach_add(torch._foreach_mul([state.m[k] for k in keys], b1), g,
                           alpha=1 - b1)
    v = torch._foreach_add(torch._foreach_mul([state.v[k] for k in keys], b2),
                           torch._foreach_mul(g, g), alpha=1 - b2)
    denom = torch._foreach_add(torch._foreach_sqrt(v), eps * math.sqrt(1 - b2**t))
    scale = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
    moved = torch._foreach_add([params[k] for k in keys], torch._foreach_div(m, denom),
                               alpha=scale)
    new = {**params, **dict(zip(keys, moved, strict=True))}
    return new, AdamState(dict(zip(keys, m, strict=True)), dict(zip(keys, v, strict=True)), t)
