"""Aggregate per-draw outputs into predictive summaries (mixture over draws)."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["regression_moments", "regression_cov", "sample_regression", "class_probabilities"]


def regression_moments(f: Tensor, noise_var: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Mean, epistemic variance and aleatoric variance of the draw mixture.

    Parameters
    ----------
    f : Tensor of shape (D, n, k)
        Function values of ``D`` posterior draws.
    noise_var : Tensor of shape (D, k), (D, 1, k) or (D, n, k)
        Observation-noise variance of each draw (per point for
        heteroscedastic models).

    Returns
    -------
    mean, epistemic, aleatoric : Tensor of shape (n, k)
        The total predictive variance is ``epistemic + aleatoric``.
    """
    mean = f.mean(0)
    epistemic = f.var(0, unbiased=False)
    aleatoric = noise_var.mean(0).expand_as(mean)
    return mean, epistemic, aleatoric


def regression_cov(f: Tensor, noise_var: Tensor) -> Tensor:
    """Predictive covariance across points, shape ``(k, n, n)``."""
    centred = (f - f.mean(0)).permute(2, 1, 0)  # (k, n, D)
    cov = centred @ centred.transpose(1, 2) / f.shape[0]
    noise = _per_point(noise_var, f).mean(0).expand(f.shape[1:])  # (n, k)
    return cov + torch.diag_embed(noise.T)


def _per_point(noise: Tensor, f: Tensor) -> Tensor:
    """Noise of shape ``(D, k)`` as ``(D, 1, k)``; per-point noise unchanged."""
    return noise.unsqueeze(1) if noise.dim() == 2 else noise


def sample_regression(
    f: Tensor, noise_std: Tensor, n_samples: int, gen: torch.Generator
) -> Tensor:
    """Draws from the predictive mixture, shape ``(n, k, n_samples)``.

    ``noise_std`` has shape ``(D, k)``, or ``(D, n, k)`` per point.

    Each sample picks a posterior draw uniformly at random and adds its
    observation noise.
    """
    which = torch.randint(f.shape[0], (n_samples,), generator=gen, device=gen.device)
    which = which.to(f.device)
    eps = torch.randn(
        (n_samples, *f.shape[1:]), generator=gen, device=gen.device, dtype=f.dtype
    ).to(f.device)
    samples = f[which] + _per_point(noise_std, f)[which] * eps
    return samples.permute(1, 2, 0)


def class_probabilities(logits: Tensor) -> Tensor:
    """Mean over draws of the per-draw softmax probabilities, ``(n, K)``."""
    return torch.softmax(logits, dim=-1).mean(0)
