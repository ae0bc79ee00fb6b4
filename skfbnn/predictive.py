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
    noise_var : Tensor of shape (D, k)
        Observation-noise variance of each draw.

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
    return cov + torch.diag_embed(noise_var.mean(0).unsqueeze(-1).expand(-1, f.shape[1]))


def sample_regression(
    f: Tensor, noise_std: Tensor, n_samples: int, gen: torch.Generator
) -> Tensor:
    """Draws from the predictive mixture, shape ``(n, k, n_samples)``.

    Each sample picks a posterior draw uniformly at random and adds its
    observation noise.
    """
    which = torch.randint(f.shape[0], (n_samples,), generator=gen, device=gen.device)
    which = which.to(f.device)
    eps = torch.randn(
        (n_samples, *f.shape[1:]), generator=gen, device=gen.device, dtype=f.dtype
    ).to(f.device)
    samples = f[which] + noise_std[which].unsqueeze(1) * eps
    return samples.permute(1, 2, 0)


def class_probabilities(logits: Tensor) -> Tensor:
    """Mean over draws of the per-draw softmax probabilities, ``(n, K)``."""
    return torch.softmax(logits, dim=-1).mean(0)
