"""Anchored ensembles: randomise-then-optimise (Pearce et al. 2020; Osband et al. 2018).

Member ``c`` climbs its log-likelihood plus a Gaussian weight penalty centred at
its own draw from the prior, not at zero,

.. math::

    \\log p_c(w) = -\\frac{\\lVert w - a_c \\rVert^2}{2 s^2} + \\text{const},\\qquad
    a_c \\sim \\mathcal N(0, s^2 I),

with ``s = prior_std``. For a model linear in its weights with a Gaussian
likelihood of known noise ``sigma``, and targets perturbed per member,
``y + eps_c`` with ``eps_c ~ N(0, sigma^2 I)`` fixed through training
(:func:`perturb_targets`), the member's MAP is

.. math::

    w_c = A^{-1}\\big(a_c / s^2 + \\Phi^T (y + \\epsilon_c) / \\sigma^2\\big),\\qquad
    A = I / s^2 + \\Phi^T \\Phi / \\sigma^2,

whose mean is the posterior mean and whose covariance is
``A^{-1} (I / s^2 + Phi^T Phi / sigma^2) A^{-1} = A^{-1}``, the posterior
covariance: every member is an exact posterior draw. For a network this is
an approximation (Pearce et al. 2020).

The anchors live in the members' parameter dictionaries under reserved keys
(:data:`PREFIX`), drawn once per fit from the fit's generator: the update rule
never moves them, and the fitted :class:`~skfbnn.posterior.Ensemble` and its
pickles carry them (the network's forward ignores them).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ...nn.functional import Params
from ...priors.weight import isotropic_log_prior, network_params
from .random_function import PREFIX as RANDOM_FUNCTION

__all__ = ["PREFIX", "draw", "split", "AnchoredPrior", "perturb_targets"]

PREFIX = "anchor."
_FIXED = (PREFIX, RANDOM_FUNCTION)


def split(params: Params) -> tuple[Params, Params]:
    """``(own, fixed)``: the trainable entries, and the reserved ones (anchors and
    ifBDE's random function) that training never moves."""
    own = {k: v for k, v in params.items() if not k.startswith(_FIXED)}
    return own, {k: v for k, v in params.items() if k.startswith(_FIXED)}


def draw(params: Params, prior_std: float, gen: torch.Generator) -> Params:
    """One prior draw ``N(0, prior_std^2)`` per member for every network parameter.

    Parameters
    ----------
    params : dict of Tensor
        The members' parameters ``(C, ...)``; reserved entries and the observation
        noise parameter get no anchor.
    prior_std : float
        Standard deviation of the weight prior.
    gen : torch.Generator
        Source of the draws.

    Returns
    -------
    dict of Tensor
        ``anchor.<name>`` for every network parameter ``<name>``.

    Examples
    --------
    >>> p = {"w": torch.zeros(4000, 2), "log_noise": torch.zeros(4000, 1)}
    >>> a = draw(p, 2.0, torch.Generator().manual_seed(0))
    >>> sorted(a), round(float(a["anchor.w"].std()), 1)
    (['anchor.w'], 2.0)
    """
    own = network_params(split(params)[0])
    return {PREFIX + k: prior_std * torch.randn(v.shape, generator=gen, device=gen.device,
                                                dtype=v.dtype).to(v.device)
            for k, v in own.items()}


class AnchoredPrior:
    """Isotropic Gaussian weight prior centred at each member's anchor.

    ``log_prob`` is ``sum log N(w; a, std^2)`` over network parameters per member,
    with the anchors ``a`` read from the members' ``anchor.<name>`` entries: with
    zero anchors it equals :class:`~skfbnn.priors.weight.WeightPrior`.

    Parameters
    ----------
    std : float
        Prior standard deviation.

    Examples
    --------
    >>> from skfbnn.priors.weight import WeightPrior
    >>> p = {"w": torch.ones(3, 4)}
    >>> zero = {**p, "anchor.w": torch.zeros(3, 4)}
    >>> torch.equal(AnchoredPrior(2.0).log_prob(zero), WeightPrior(2.0).log_prob(p))
    True
    >>> AnchoredPrior(2.0).log_prob({**p, "anchor.w": torch.ones(3, 4)})[0] > 0
    tensor(False)
    """

    def __init__(self, std: float) -> None:
        self.std = float(std)

    def log_prob(self, params: Params, f_measure=None, measure=None) -> Tensor:
        """``sum log N(w; a, std^2)`` per member."""
        own = network_params(split(params)[0])
        return isotropic_log_prior({k: v - params[PREFIX + k] for k, v in own.items()},
                                   self.std)


def perturb_targets(y: Tensor, n_members: int, noise_std: float | Tensor,
                    gen: torch.Generator) -> Tensor:
    """Per-member targets ``y + eps_c``, ``eps_c ~ N(0, noise_std^2)``: ``(C, n, k)``.

    Draw them once and feed every step the same rows (full batch, or the same
    row indices of every member's perturbed copy); together with the anchors
    they make the members of a linear-Gaussian model exact posterior draws.

    Examples
    --------
    >>> y = torch.zeros(5, 1, dtype=torch.float64)
    >>> perturb_targets(y, 3, 0.1, torch.Generator().manual_seed(0)).shape
    torch.Size([3, 5, 1])
    """
    eps = torch.randn((n_members, *y.shape), generator=gen, device=gen.device, dtype=y.dtype)
    return y + torch.as_tensor(noise_std, dtype=y.dtype, device=y.device) * eps.to(y.device)
