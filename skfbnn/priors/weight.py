"""Isotropic Gaussian prior on network weights and biases."""

from __future__ import annotations

import math

from torch import Tensor

from ..nn.functional import Params

__all__ = ["NOISE_KEY", "WeightPrior", "network_params", "isotropic_log_prior"]

NOISE_KEY = "log_noise"
"""Reserved parameter name for the log observation-noise std (regression)."""


def network_params(params: Params) -> Params:
    """The parameters that belong to the network (drops the noise parameter)."""
    return {k: v for k, v in params.items() if k != NOISE_KEY}


def isotropic_log_prior(params: Params, prior_std: float) -> Tensor:
    """``sum log N(w; 0, prior_std^2)`` over network parameters, per leading batch row.

    Examples
    --------
    >>> import torch
    >>> p = {"w": torch.zeros(2, 3)}
    >>> isotropic_log_prior(p, 1.0).shape
    torch.Size([2])
    """
    total = 0.0
    n = 0
    for value in network_params(params).values():
        flat = value.reshape(value.shape[0], -1)
        total = total + flat.pow(2).sum(-1)
        n += flat.shape[1]
    var = prior_std**2
    return -0.5 * total / var - 0.5 * n * math.log(2 * math.pi * var)


class WeightPrior:
    """Isotropic Gaussian prior ``N(0, std^2 I)`` on every network weight and bias.

    Parameters
    ----------
    std : float
        Prior standard deviation, shared by all network parameters (the
        observation-noise parameter is not a weight and is excluded).

    Examples
    --------
    >>> import torch
    >>> prior = WeightPrior(2.0)
    >>> prior.log_prob({"w": torch.zeros(3, 4)}).shape
    torch.Size([3])
    """

    def __init__(self, std: float) -> None:
        self.std = float(std)

    def log_prob(self, params: Params, f_measure=None, measure=None) -> Tensor:
        """``sum log N(w; 0, std^2)`` per leading parameter set."""
        return isotropic_log_prior(params, self.std)
