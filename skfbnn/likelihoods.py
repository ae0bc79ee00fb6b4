"""Observation models: Gaussian (regression) and categorical (classification).

All functions return one log-likelihood per leading parameter set, shape ``(C,)``,
summed over the data points they receive.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = [
    "gaussian_log_likelihood",
    "categorical_log_likelihood",
    "noise_log_prior",
    "NOISE_PRIOR_LOC",
    "NOISE_PRIOR_SCALE",
]

NOISE_PRIOR_LOC = math.log(0.3)
"""Mean of the Gaussian prior on ``log sigma`` (sigma in standardised target units)."""
NOISE_PRIOR_SCALE = 1.5
"""Std of the Gaussian prior on ``log sigma``: weak, 95% mass on sigma in [0.016, 5.7]."""


def gaussian_log_likelihood(f: Tensor, y: Tensor, log_noise: Tensor) -> Tensor:
    """``sum_i log N(y_i; f_i, sigma^2)`` per parameter set.

    Parameters
    ----------
    f : Tensor of shape (C, n, k)
    y : Tensor of shape (n, k) or (C, n, k)
    log_noise : Tensor of shape (C, k) or (k,)
        Log observation-noise standard deviation per output.
    """
    log_noise = log_noise.expand(f.shape[0], f.shape[-1]).unsqueeze(1)
    z = (y - f) * torch.exp(-log_noise)
    return (-0.5 * z.pow(2) - log_noise - 0.5 * math.log(2 * math.pi)).sum((1, 2))


def categorical_log_likelihood(logits: Tensor, y: Tensor) -> Tensor:
    """``sum_i log softmax(logits_i)[y_i]`` per parameter set.

    Parameters
    ----------
    logits : Tensor of shape (C, n, K)
    y : LongTensor of shape (n,) or (C, n)
    """
    logp = torch.log_softmax(logits, dim=-1)
    index = y.expand(logits.shape[0], logits.shape[1]).unsqueeze(-1)
    return logp.gather(-1, index).squeeze(-1).sum(-1)


def noise_log_prior(log_noise: Tensor) -> Tensor:
    """Weak Gaussian prior on ``log sigma`` (standardised units), summed per set."""
    z = (log_noise - NOISE_PRIOR_LOC) / NOISE_PRIOR_SCALE
    return (-0.5 * z.pow(2) - math.log(NOISE_PRIOR_SCALE * math.sqrt(2 * math.pi))).sum(-1)
