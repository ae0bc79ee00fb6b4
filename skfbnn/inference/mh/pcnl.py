"""Preconditioned Crank-Nicolson Langevin (Cotter et al. 2013), correct potential.

With ``delta`` from the pCN step ``beta`` by ``beta^2 = 8 delta / (2 + delta)^2``
(the paper's convention) the proposal
``phi' = [(2 - delta) phi - 2 delta grad Phi(phi) + sqrt(8 delta) xi] / (2 + delta)``
is ``phi' = rho phi - (1 - rho) grad Phi(phi) + beta xi`` with
``rho = sqrt(1 - beta^2)``. The acceptance ratio is the Metropolis-Hastings ratio
of this Gaussian proposal for ``N(0, I) exp(-Phi)``, and ``Phi`` is the potential of
the reparametrised posterior (:mod:`.reparam`), not the likelihood of the mapped
readout that the reference implementation differentiates (METHODS.md §4.3 B2).
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
           "classification_likelihood", "delta_of"]

HYPER = (
    *step_hyper(0.1, "pCN step ``beta`` in (0, 1] (the noise coefficient); Cotter's "
                "``delta`` follows from beta^2 = 8 delta / (2 + delta)^2.", 0.5,
                bounded=True),
    *NTK_HYPER,
)


def delta_of(beta: float) -> float:
    """Cotter et al.'s ``delta`` in (0, 2] of a pCN step ``beta`` in (0, 1].

    Examples
    --------
    >>> d = delta_of(0.1)
    >>> round(8 * d / (2 + d) ** 2, 12)
    0.01
    """
    b2 = beta**2
    return (4 - 2 * b2 - 4 * (1 - b2) ** 0.5) / b2


def _mean(phi: Tensor, grad: Tensor | None, beta: Tensor) -> Tensor:
    rho = (1 - beta**2).clamp_min(0).sqrt()
    return rho * phi - (1 - rho) * grad


PROPOSAL = Proposal(_mean, lambda beta: beta, needs_grad=True, max_step=1.0)


build = partial(build_mh, proposal=PROPOSAL)
"""pCNL on ``problem``: ``build(problem, *, step_size, ...)`` (see
:func:`~.build.build_mh` for the parameters)."""
