"""Observation models: Gaussian (regression) and categorical (classification).

All functions return one log-likelihood per leading parameter set, shape ``(C,)``,
summed over the data points they receive. The likelihood objects bundle what
the methods and the predictive need: the log density, the prior of their own
parameters, how many network outputs they read per target, and how network
outputs become a predictive mean and noise.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .nn.functional import Params
from .priors.weight import NOISE_KEY

__all__ = [
    "GaussianLikelihood",
    "HeteroscedasticGaussianLikelihood",
    "CategoricalLikelihood",
    "gaussian_log_likelihood",
    "categorical_log_likelihood",
    "noise_log_prior",
    "NOISE_PRIOR_LOC",
    "NOISE_PRIOR_SCALE",
    "VARIANCE_FLOOR_KEY",
    "calibrated_variance_floor",
]

NOISE_PRIOR_LOC = math.log(0.3)
"""Mean of the Gaussian prior on ``log sigma`` (sigma in standardised target units)."""
NOISE_PRIOR_SCALE = 1.5
"""Std of the Gaussian prior on ``log sigma``: weak, 95% mass on sigma in [0.016, 5.7]."""


def gaussian_log_likelihood(f: Tensor, y: Tensor, log_noise: Tensor,
                            weights: Tensor | None = None) -> Tensor:
    """``sum_i w_i log N(y_i; f_i, sigma^2)`` per parameter set (``w_i = 1`` without
    ``weights``).

    Parameters
    ----------
    f : Tensor of shape (C, n, k)
    y : Tensor of shape (n, k) or (C, n, k)
    log_noise : Tensor of shape (C, k) or (k,)
        Log observation-noise standard deviation per output.
    weights : Tensor of shape (n,) or (C, n), optional
        Per-row weights (``sample_weight``): a row of weight 2 counts as two rows.

    Examples
    --------
    >>> f, y = torch.zeros(1, 2, 1), torch.tensor([[1.0], [2.0]])
    >>> twice = gaussian_log_likelihood(f, y, torch.zeros(1), torch.tensor([2.0, 1.0]))
    >>> rows = gaussian_log_likelihood(torch.zeros(1, 3, 1), y[[0, 0, 1]], torch.zeros(1))
    >>> bool(torch.allclose(twice, rows))
    True
    """
    log_noise = log_noise.expand(f.shape[0], f.shape[-1]).unsqueeze(1)
    z = (y - f) * torch.exp(-log_noise)
    terms = -0.5 * z.pow(2) - log_noise - 0.5 * math.log(2 * math.pi)
    if weights is not None:
        terms = terms * weights.to(terms.dtype).unsqueeze(-1)
    return terms.sum((1, 2))


def categorical_log_likelihood(logits: Tensor, y: Tensor,
                               weights: Tensor | None = None) -> Tensor:
    """``sum_i w_i log softmax(logits_i)[y_i]`` per parameter set (``w_i = 1`` without
    ``weights``).

    Parameters
    ----------
    logits : Tensor of shape (C, n, K)
    y : LongTensor of shape (n,) or (C, n)
    weights : Tensor of shape (n,) or (C, n), optional
        Per-row weights (``sample_weight``).
    """
    logp = torch.log_softmax(logits, dim=-1)
    index = y.expand(logits.shape[0], logits.shape[1]).unsqueeze(-1)
    terms = logp.gather(-1, index).squeeze(-1)
    if weights is not None:
        terms = terms * weights.to(terms.dtype)
    return terms.sum(-1)


def noise_log_prior(log_noise: Tensor) -> Tensor:
    """Weak Gaussian prior on ``log sigma`` (standardised units), summed per set."""
    z = (log_noise - NOISE_PRIOR_LOC) / NOISE_PRIOR_SCALE
    return (-0.5 * z.pow(2) - math.log(NOISE_PRIOR_SCALE * math.sqrt(2 * math.pi))).sum(-1)


class GaussianLikelihood:
    """Gaussian noise with one standard deviation per output.

    Parameters
    ----------
    noise_std : array-like of shape (k,) or None
        Fixed noise std in the units the network predicts (standardised
        targets), or ``None`` to read a learned ``log sigma`` from
        ``params["log_noise"]`` (with the weak log-normal prior
        :func:`noise_log_prior`).
    """

    def __init__(self, noise_std: np.ndarray | None = None) -> None:
        self.log_noise = None if noise_std is None else np.log(np.asarray(noise_std, float))

    @property
    def learned(self) -> bool:
        """Whether the noise is a parameter of the posterior/optimisation."""
        return self.log_noise is None

    def n_outputs(self, k: int) -> int:
        """Network outputs needed for ``k`` targets."""
        return k

    def init_params(self, n_batch: int, k: int, device, dtype) -> Params:
        """Initial noise parameter (learned noise only)."""
        if not self.learned:
            return {}
        return {NOISE_KEY: torch.full((n_batch, k), NOISE_PRIOR_LOC, dtype=dtype, device=device)}

    def _log_noise(self, f: Tensor, params: Params) -> Tensor:
        if self.learned:
            return params[NOISE_KEY]
        return torch.as_tensor(self.log_noise, dtype=f.dtype, device=f.device)

    def log_prob(self, f: Tensor, y: Tensor, params: Params,
                 weights: Tensor | None = None) -> Tensor:
        """``sum_i w_i log N(y_i; f_i, sigma^2)``, ``(C,)``; ``weights`` ``(n,)`` or
        ``(C, n)`` (default: 1 each)."""
        return gaussian_log_likelihood(f, y, self._log_noise(f, params), weights)

    def log_prior(self, params: Params) -> Tensor | float:
        """Weak prior of the learned ``log sigma``; 0 for a fixed noise."""
        return noise_log_prior(params[NOISE_KEY]) if self.learned else 0.0

    def predictive(self, out: Tensor, params: Params) -> tuple[Tensor, Tensor]:
        """Mean ``(D, n, k)`` and log noise std ``(D, 1, k)`` of each draw."""
        log_noise = self._log_noise(out, params).to(out.dtype)
        return out, log_noise.expand(out.shape[0], out.shape[-1]).unsqueeze(1)


VARIANCE_FLOOR_KEY = "variance_floor"
"""Members' key of the per-member, per-output variance added to the variance heads."""


CHI2_1_95 = 3.841
"""The 95% quantile of the chi-squared distribution with one degree of freedom."""


def calibrated_variance_floor(mean: Tensor, var: Tensor, y: Tensor, n_grid: int = 49,
                              threshold: float = CHI2_1_95,
                              spread: Tensor | None = None,
                              weights: Tensor | None = None) -> Tensor:
    """Per set and output, the variance ``a >= 0`` that, added to every predicted variance,
    scores held-out rows best: ``max_a sum_i log N(y_i; mu_i, var_i + s_i + a)`` over ``a = 0`` and
    ``n_grid`` values from ``2^-8`` to ``2^4`` times the median predicted variance (a factor
    of about 1.19 apart); 0 unless twice the gain in log-likelihood over ``a = 0`` reaches
    ``threshold`` (a likelihood-ratio test, 5% level by default; 0 keeps every gain).

    ``mean``, ``var``, ``y`` and ``spread`` (the variance ``s`` the predictive adds beside
    ``var``, scored but not part of the floor; 0 when None) are ``(C, n, k)``; returns
    ``(C, k)``; ``weights`` ``(C, n)`` weigh each row's score (``sample_weight``). An
    added variance,
    rather than a factor on the variances, because a factor fitted by ``mean z^2`` on a few
    dozen rows is dominated by the rows where a head is nearly certain. Only raised, as the
    noise of the mean-field methods (``inference.vi.meanfield.calibrate_noise``), and only
    where the rows call for it beyond their noise: on the ensembles' UCI validation rows the
    test removed the floor's losses on yacht and cut those on energy (deep ensemble mean +0.001
    against -0.003 without it; the benchmarks page).

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> y = 2.0 * torch.randn(1, 4000, 1, generator=g)  # variance 4, heads say 1
    >>> a = calibrated_variance_floor(torch.zeros_like(y), torch.ones_like(y), y)
    >>> bool(2.5 < float(a) < 3.5)
    True
    >>> calibrated_variance_floor(torch.zeros_like(y), 4 * torch.ones_like(y), y / 4)
    tensor([[0.]])
    """
    scale = var.median(dim=-2).values  # (C, k)
    grid = torch.cat([torch.zeros(1, dtype=var.dtype, device=var.device),
                      torch.logspace(-8, 4, n_grid, base=2.0, dtype=var.dtype, device=var.device)])
    added = grid[:, None, None] * scale  # (G, C, k)
    base = var if spread is None else var + spread
    total = base.unsqueeze(0) + added.unsqueeze(-2)  # (G, C, n, k)
    terms = -0.5 * ((y - mean).pow(2).unsqueeze(0) / total + total.log())  # (G, C, n, k)
    if weights is not None:
        terms = terms * weights.to(terms.dtype).unsqueeze(-1)
    score = terms.sum(-2)  # (G, C, k)
    best = score.argmax(0)  # (C, k); ties go to the smallest (0 first)
    gain = score.max(0).values - score[0]
    best = torch.where(2 * gain < threshold, torch.zeros_like(best), best)
    return added.gather(0, best.unsqueeze(0)).squeeze(0)


class HeteroscedasticGaussianLikelihood:
    """Gaussian noise predicted by the network: a mean and a variance head per output.

    The network has ``2k`` outputs; the second half ``r`` gives the variance
    ``softplus(r) + min_variance`` (Lakshminarayanan et al. 2017).

    Parameters
    ----------
    min_variance : float, default=1e-6
        Floor of the predicted variance (standardised units).
    beta : float, default=0.0
        beta-NLL weighting (Seitzer et al. 2022): each point's log density's
        gradient is multiplied by its predicted variance to the power ``beta``,
        held constant for the gradient (the value of :meth:`log_prob` stays the
        Gaussian log-likelihood). ``0`` is the Gaussian log-likelihood's gradient; with
        ``beta > 0`` points with a large predicted variance keep pulling the
        mean, so the fit cannot settle on explaining residuals as noise.
    """

    learned = False

    def __init__(self, min_variance: float = 1e-6, beta: float = 0.0) -> None:
        self.min_variance = min_variance
        self.beta = beta

    def n_outputs(self, k: int) -> int:
        """Network outputs needed for ``k`` targets."""
        return 2 * k

    def init_params(self, n_batch: int, k: int, device, dtype) -> Params:
        """No parameters of its own."""
        return {}

    def split(self, out: Tensor, params: Params | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance ``(C, n, k)`` from the outputs ``(C, n, 2k)``; the variance gets
        ``params[VARIANCE_FLOOR_KEY]`` ``(C, k)`` added where present (a member's held-out
        calibration, :func:`calibrated_variance_floor`)."""
        k = out.shape[-1] // 2
        var = torch.nn.functional.softplus(out[..., k:]) + self.min_variance
        if params is not None and VARIANCE_FLOOR_KEY in params:
            var = var + params[VARIANCE_FLOOR_KEY].unsqueeze(-2).to(var.dtype)
        return out[..., :k], var

    def log_prob(self, out: Tensor, y: Tensor, params: Params,
                 weights: Tensor | None = None) -> Tensor:
        """``sum_i log N(y_i; mu_i, var_i)``, times the row weights ``weights`` (``(n,)`` or
        ``(C, n)``) when given, ``(C,)``, whose gradient is beta-NLL's: that of
        ``sum_i v_i log N(y_i; mu_i, var_i)`` with ``v_i = sg(var_i)^beta``.

        The value is the Gaussian log-likelihood (:meth:`log_density`) and not the
        weighted sum: the weights ``v_i`` move as the heads learn, so the weighted sum is
        no fixed function of the parameters. As the heads' variances shrink it falls
        towards 0 while the fit improves, which a run's objective trace would read as a
        divergence (:func:`skfbnn.diagnostics.optimisation_warnings`).
        """
        if not self.beta:
            return self.log_density(out, y, params, weights)
        mean, var = self.split(out, params)
        terms = -0.5 * ((y - mean).pow(2) / var + var.log() + math.log(2 * math.pi))
        # the value of the terms, the gradient of the terms times v_i
        terms = terms.detach() + (terms - terms.detach()) * var.detach().pow(self.beta)
        if weights is not None:
            terms = terms * weights.to(terms.dtype).unsqueeze(-1)
        return terms.sum((1, 2))

    def log_density(self, out: Tensor, y: Tensor, params: Params,
                    weights: Tensor | None = None) -> Tensor:
        """``sum_i w_i log N(y_i; mu_i, var_i)`` without the beta weighting, ``(C,)``
        (``w_i`` the row weights, 1 without ``weights``)."""
        mean, var = self.split(out, params)
        terms = -0.5 * ((y - mean).pow(2) / var + var.log() + math.log(2 * math.pi))
        if weights is not None:
            terms = terms * weights.to(terms.dtype).unsqueeze(-1)
        return terms.sum((1, 2))

    def log_prior(self, params: Params) -> float:
        """No parameters of its own."""
        return 0.0

    def predictive(self, out: Tensor, params: Params) -> tuple[Tensor, Tensor]:
        """Mean and log noise std, both ``(D, n, k)``."""
        mean, var = self.split(out, params)
        return mean, 0.5 * var.log()


class CategoricalLikelihood:
    """Softmax over one logit per class."""

    learned = False

    def n_outputs(self, k: int) -> int:
        """One logit per class."""
        return k

    def init_params(self, n_batch: int, k: int, device, dtype) -> Params:
        """No parameters of its own."""
        return {}

    def log_prob(self, logits: Tensor, y: Tensor, params: Params,
                 weights: Tensor | None = None) -> Tensor:
        """``sum_i w_i log softmax(logits_i)[y_i]``, ``(C,)`` (``w_i`` the row weights,
        1 without ``weights``)."""
        return categorical_log_likelihood(logits, y, weights)

    def probabilities(self, logits: Tensor) -> Tensor:
        """Class probabilities of each draw, the softmax of its logits."""
        return torch.softmax(logits, dim=-1)

    def log_prior(self, params: Params) -> float:
        """No parameters of its own."""
        return 0.0
