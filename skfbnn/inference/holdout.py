"""Held-out rows: an ensemble member's best state on them, a learned noise fitted to them.

With ``validation_fraction > 0`` every member holds out its own random subset
of the training rows, trains on the rest, and scores its held-out rows every
``1/50`` of the run; the member's parameters with the best held-out
log-likelihood are kept (early stopping by checkpoint, as scikit-learn's
``MLPRegressor(early_stopping=True)`` does, one split per member).

The variational methods use held-out rows differently: after the run, the
learned observation noise is set to the value under which the predictive
(the mixture over posterior draws plus Gaussian noise) scores the held-out
rows best (:func:`calibrated_log_noise`). Training rows cannot do that for a
network that fits them closer than new rows. Ensemble members with variance heads can
likewise have their heads raised on their own held-out rows (:func:`calibrate_heads`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ..likelihoods import (
    VARIANCE_FLOOR_KEY,
    HeteroscedasticGaussianLikelihood,
    calibrated_variance_floor,
)
from ..nn.functional import Params
from .objective import row_weights
from .types import BayesProblem, member

__all__ = ["split_rows", "BestOnHeldOut", "gaussian_fit_score", "calibrated_log_noise",
           "calibrate_heads"]


def split_rows(n_data: int, n_members: int, fraction: float, gen: torch.Generator,
               device: torch.device) -> tuple[Tensor, Tensor]:
    """Per-member ``(held_out, train)`` row indices, shapes ``(M, n_val)`` and ``(M, n - n_val)``.

    Examples
    --------
    >>> val, fit = split_rows(10, 3, 0.2, torch.Generator().manual_seed(0), torch.device("cpu"))
    >>> val.shape, fit.shape
    (torch.Size([3, 2]), torch.Size([3, 8]))
    >>> bool((torch.sort(torch.cat([val, fit], 1), 1).values == torch.arange(10)).all())
    True
    """
    n_val = min(n_data - 1, max(1, math.ceil(fraction * n_data)))
    keys = torch.rand((n_members, n_data), generator=gen, device=gen.device).to(device)
    order = keys.argsort(dim=1)
    return order[:, :n_val], order[:, n_val:]


class BestOnHeldOut:
    """A ``monitor(step, state)`` for the driver that keeps each member's best parameters.

    Parameters
    ----------
    problem : BayesProblem
        Supplies ``forward`` and the likelihood; the score is the plain log
        density (``likelihood.log_density`` when it has one, e.g. unweighted
        beta-NLL heads, else ``log_prob``), per held-out point.
    X, y : Tensor
        Training inputs and targets.
    held_out : Tensor
        ``(M, n_val)`` row indices of every member.
    n_steps : int
        Length of the run; the members are scored 50 times, and at the end.
    keep : callable, optional
        ``keep(state) -> dict`` of the tensors to keep (leading dimension ``M``);
        default ``state.params``.
    score : callable, optional
        ``score(f, y, params) -> (M,)``, higher is better, in place of the log density
        per held-out point (e.g. :func:`gaussian_fit_score`).
    """

    def __init__(self, problem: BayesProblem, X: Tensor, y: Tensor, held_out: Tensor,
                 n_steps: int, keep: Callable[[Any], Params] | None = None,
                 score: Callable[[Tensor, Tensor, Params], Tensor] | None = None) -> None:
        self.problem, self.x, self.y = problem, X[held_out], y[held_out]
        weights = row_weights(problem)
        self.w = None if weights is None else weights[held_out]  # (M, n_val)
        self.keep = keep or (lambda state: state.params)
        self.score = score or self._log_density
        self.every = max(1, n_steps // 50)
        self.n_steps = n_steps
        self.best: Params | None = None
        self.best_score = torch.full((held_out.shape[0],), -math.inf, device=X.device,
                                     dtype=torch.float64)
        self.best_step = torch.zeros(held_out.shape[0], dtype=torch.long)

    @torch.no_grad()
    def __call__(self, step: int, state: Any) -> None:
        if (step + 1) % self.every and step + 1 != self.n_steps:
            return
        f = self.problem.forward(state.params, self.x)
        score = (self.score(f, self.y, state.params) if self.w is None else
                 self.score(f, self.y, state.params, weights=self.w)).to(torch.float64)
        better = score > self.best_score
        kept = self.keep(state)
        if self.best is None:
            self.best = {k: v.clone() for k, v in kept.items()}
        else:
            for k, v in kept.items():
                mask = better.view(-1, *([1] * (v.dim() - 1)))
                self.best[k] = torch.where(mask, v, self.best[k])
        self.best_score = torch.where(better, score, self.best_score)
        self.best_step[better.cpu()] = step + 1

    def _log_density(self, f: Tensor, y: Tensor, params: Params,
                     weights: Tensor | None = None) -> Tensor:
        likelihood = self.problem.likelihood
        score_fn = member(likelihood, "log_density") or likelihood.log_prob
        if weights is None:
            return score_fn(f, y, params) / y.shape[1]
        return score_fn(f, y, params, weights=weights) / weights.sum(-1).clamp_min(1e-300)


def gaussian_fit_score(f: Tensor, y: Tensor, params: Params | None = None,
                       weights: Tensor | None = None) -> Tensor:
    """``-sum_k log MSE_k`` of outputs ``f`` ``(C, n, k)`` against ``y`` ``(C, n, k)``:
    up to constants, twice the per-point Gaussian log-likelihood under the noise that
    fits the rows best, so a held-out checkpoint does not depend on the noise learned
    at the time (the noise is fitted to the rows afterwards). With row weights
    ``(C, n)`` the MSE is their weighted mean.

    Examples
    --------
    >>> y = torch.zeros(1, 4, 1)
    >>> gaussian_fit_score(y + 1.0, y), gaussian_fit_score(y + 2.0, y)
    (tensor([-0.]), tensor([-1.3863]))
    """
    if weights is None:
        return -(f - y).pow(2).mean(dim=1).log().sum(dim=-1)
    w = weights.to(f.dtype).unsqueeze(-1)
    mse = ((f - y).pow(2) * w).sum(dim=1) / w.sum(dim=1).clamp_min(1e-300)
    return -mse.log().sum(dim=-1)


def _mixture_log_likelihood(r2: Tensor, log_std: Tensor) -> Tensor:
    """Mean over points of ``log mean_s N(r; 0, sigma^2)`` for squared residuals ``r2``
    ``(C, S, n, k)`` and ``log_std`` ``(G, C, k)``: shape ``(G, C, k)``."""
    ls = log_std[:, :, None, None, :]
    lp = -ls - 0.5 * r2 * torch.exp(-2 * ls) - 0.5 * math.log(2 * math.pi)
    return (torch.logsumexp(lp, dim=2) - math.log(r2.shape[1])).mean(dim=2)


@torch.no_grad()
def calibrated_log_noise(f: Tensor, y: Tensor, low: float = -9.0, high: float = 5.0,
                         n_grid: int = 141, n_refine: int = 40) -> Tensor:
    """The log noise std that maximises the held-out log-likelihood of a draw mixture.

    For every set ``c`` and output ``k`` it maximises over ``sigma``
    ``mean_i log( mean_s N(y_ik; f_csik, sigma^2) )`` (the predictive the
    benchmarks score): a grid over ``log sigma`` in ``[low, high]``, then a
    golden-section search in the bracket around the best grid point.

    Parameters
    ----------
    f : Tensor
        Draws of the function at the held-out rows, ``(C, S, n, k)``.
    y : Tensor
        The held-out targets, ``(C, n, k)``.

    Returns
    -------
    Tensor
        ``log sigma``, shape ``(C, k)``. With one draw it is the log of the root
        mean squared residual (the Gaussian maximum-likelihood noise).

    Examples
    --------
    >>> f = torch.zeros(1, 1, 4, 1, dtype=torch.float64)
    >>> y = torch.tensor([[[1.0], [-1.0], [2.0], [-2.0]]], dtype=torch.float64)
    >>> round(float(calibrated_log_noise(f, y).exp()), 6)   # sqrt(mean(y^2)) = sqrt(2.5)
    1.581139
    """
    f64 = f.to(torch.float64)
    r2 = (y.to(torch.float64).unsqueeze(1) - f64).pow(2)
    C, k = f.shape[0], f.shape[-1]
    grid = torch.linspace(low, high, n_grid, dtype=torch.float64, device=f.device)
    scores = torch.stack([_mixture_log_likelihood(r2, g.expand(1, C, k))[0] for g in grid])
    best = scores.argmax(dim=0)  # (C, k)
    step = (high - low) / (n_grid - 1)
    a, b = grid[best] - step, grid[best] + step
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(n_refine):
        c, d = b - golden * (b - a), a + golden * (b - a)
        fc, fd = (_mixture_log_likelihood(r2, x.unsqueeze(0))[0] for x in (c, d))
        a, b = torch.where(fc > fd, a, c), torch.where(fc > fd, d, b)
    return ((a + b) / 2).to(f.dtype)


def calibrate_heads(params: Params, problem: BayesProblem, x: Tensor, y: Tensor,
                    weights: Tensor | None = None) -> Params:
    """``params`` with a variance added to each member's heads, fitted on its held-out rows
    ``x (C, n, d)``, ``y (C, n, k)`` (:func:`~skfbnn.likelihoods.calibrated_variance_floor`;
    with the rows' weights ``(C, n)`` when given); unchanged without variance heads (a fixed
    noise, a classifier).

    Each member is scored as the ensemble's predictive is built: its heads plus the spread of
    the members' means at those rows (``spread``). The predictive adds that spread to the
    heads, and a member's error on its held-out rows already contains its distance from the
    other members; a floor fitted on the heads alone counts the spread twice (the deep
    ensemble on diabetes: predictive variance 1.12 of the test error, against 0.98 with it).
    The other members have trained on a member's held-out rows, so the spread there
    approximates the spread on new rows."""
    if not isinstance(problem.likelihood, HeteroscedasticGaussianLikelihood):
        return params
    with torch.no_grad():
        C, n = x.shape[:2]
        rows = x.reshape(1, C * n, -1).expand(C, -1, -1)  # every member on every member's rows
        means, vars_ = (t.reshape(C, C, n, -1) for t in
                        problem.likelihood.split(problem.forward(params, rows)))
        own = torch.arange(C, device=x.device)  # member c on its own held-out rows
        spread = means.var(dim=0, unbiased=False)  # (C rows, n, k)
        floor = calibrated_variance_floor(means[own, own], vars_[own, own],
                                          y.to(means.dtype), spread=spread, weights=weights)
    return {**params, VARIANCE_FLOOR_KEY: floor}
