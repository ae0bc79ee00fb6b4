"""Metropolis-adjusted Langevin algorithm (Roberts & Tweedie 1996), the baseline.

.. math::

    \\phi' = \\phi + h \\nabla \\log \\pi(\\phi) + \\sqrt{2h}\\, \\xi, \\qquad
    \\log \\pi(\\phi) = -\\tfrac12 \\|\\phi\\|^2 - \\Phi(\\phi),

accepted with the usual Metropolis-Hastings ratio. Unlike pCN and pCNL its
proposal does not preserve the reference measure, so at a fixed ``h`` the
acceptance falls as the dimension (the width) grows.
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
    *step_hyper(0.005, "Langevin step ``h`` in ``phi' = phi + h grad log pi(phi) + "
                "sqrt(2h) xi`` (noise coefficient ``sqrt(2h)``).", 0.57, bounded=False),
    *NTK_HYPER,
)


def _mean(phi: Tensor, grad: Tensor | None, h: Tensor) -> Tensor:
    return phi - h * (phi + grad)


PROPOSAL = Proposal(_mean, lambda h: (2 * h).sqrt(), needs_grad=True, max_step=10.0,
                    scale_power=2)


build = partial(build_mh, proposal=PROPOSAL)
"""MALA on ``problem``: ``build(problem, *, step_size, ...)`` (see
:func:`~.build.build_mh` for the parameters)."""
