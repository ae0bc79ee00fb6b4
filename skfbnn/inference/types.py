"""The contracts shared by every inference method."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor

from ..nn.functional import Params

__all__ = ["Batch", "BayesProblem", "Transform", "Schedule"]

Batch = dict[str, Any]
"""``{"x": (n, d) or (C, n, d), "y": ..., "measure": MeasurementDraw | None}``."""

Schedule = Callable[[int], float]
"""Step size as a function of the step index."""


class BayesProblem(NamedTuple):
    """Everything an update rule may know about the model.

    Attributes
    ----------
    forward : callable
        ``forward(params, X) -> (C, n, n_out)``.
    log_likelihood : callable
        ``log_likelihood(f, y, params) -> (C,)``, summed over the points given.
    log_prior : callable
        ``log_prior(params, f_measure, measure) -> (C,)``; ``f_measure`` are
        the network outputs at the measurement points (``None`` for weight priors).
    n_data : int
        Number of training points ``N``.
    """

    forward: Callable[[Params, Tensor], Tensor]
    log_likelihood: Callable[[Tensor, Tensor, Params], Tensor]
    log_prior: Callable[[Params, Tensor | None, Any], Tensor]
    n_data: int


class Transform(NamedTuple):
    """``init(params) -> state`` and ``update(state, batch, gen) -> (state, info)``."""

    init: Callable[[Params], Any]
    update: Callable[[Any, Batch, torch.Generator], tuple[Any, Any]]
