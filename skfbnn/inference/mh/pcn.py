"""Preconditioned Crank-Nicolson (Cotter et al. 2013; Pezzetti et al. 2024).

.. math::

    \\phi' = \\sqrt{1 - \\beta^2}\\, \\phi + \\beta \\xi, \\qquad
    \\log a = \\Phi(\\phi) - \\Phi(\\phi'),

a proposal that leaves the reference measure ``N(0, I)`` invariant, so the
acceptance depends on the potential only and does not degrade with the
dimension. With the reparametrisation the acceptance tends to 1 as the width
grows, for any fixed ``beta`` (Pezzetti, Favaro & Peluchetti 2024, Thm 2.1).
"""

from __future__ import annotations

from functools import partial

from torch import Tensor

from .build import (  # noqa: F401  (re-exported)
    ARCHITECTURE,
    CLASSIFICATION_HYPER,
    NTK_HYPER,
    build_mh,
    classification_likelihood,
    step_hyper,
)
from .kernel import Proposal

__all__ = ["ARCHITECTURE", "HYPER", "CLASSIFICATION_HYPER", "PROPOSAL", "build",
           "classification_likelihood"]

HYPER = (
    *step_hyper(0.1, "pCN step ``beta`` in (0, 1]: ``phi' = sqrt(1 - beta^2) phi + beta "
                "xi`` (the paper's default 0.1).", 0.25, bounded=True),
    *NTK_HYPER,
)


def _mean(phi: Tensor, grad: Tensor | None, beta: Tensor) -> Tensor:
    return (1 - beta**2).clamp_min(0).sqrt() * phi


def _log_ratio(potential: Tensor, potential_new: Tensor) -> Tensor:
    return potential - potential_new


PROPOSAL = Proposal(_mean, lambda beta: beta, needs_grad=False, max_step=1.0,
                    log_ratio=_log_ratio)


build = partial(build_mh, proposal=PROPOSAL)
"""pCN on ``problem``: ``build(problem, *, step_size, ...)`` (see
:func:`~.build.build_mh` for the parameters)."""
