"""The method registry: one line per inference method.

``prior`` says which prior the estimator builds (``"weight"``: isotropic
Gaussian on the weights; ``"function"``: GP prior at measurement points);
``hyper`` lists the update rule's hyperparameters beyond the step size, and
``step_size`` is the default step size per datum (chosen on validation data,
see ``docs/benchmarks.md``).
A functional variant is the same ``build`` with ``prior="function"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .sgmcmc import sghmc, sgld
from .types import Transform

__all__ = ["MethodSpec", "METHODS"]


class MethodSpec(NamedTuple):
    """How to build a method and which prior it needs."""

    build: Callable[..., Transform]
    prior: str
    hyper: tuple[str, ...] = ()
    step_size: float = 1e-2


_SGHMC = ("friction", "n_leapfrog")

METHODS: dict[str, MethodSpec] = {
    "sgld": MethodSpec(sgld.build, prior="weight", step_size=3e-2),
    "fsgld": MethodSpec(sgld.build, prior="function", step_size=3e-2),
    "sghmc": MethodSpec(sghmc.build, prior="weight", hyper=_SGHMC, step_size=3e-3),
    "fsghmc": MethodSpec(sghmc.build, prior="function", hyper=_SGHMC, step_size=3e-3),
}
