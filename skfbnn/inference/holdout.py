"""Held-out rows per ensemble member, and keeping each member's best state on them.

With ``validation_fraction > 0`` every member holds out its own random subset
of the training rows, trains on the rest, and scores its held-out rows every
``1/50`` of the run; the member's parameters with the best held-out
log-likelihood are kept (early stopping by checkpoint, as scikit-learn's
``MLPRegressor(early_stopping=True)`` does, one split per member).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from ..nn.functional import Params
from .types import BayesProblem

__all__ = ["split_rows", "BestOnHeldOut"]


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
    """

    def __init__(self, problem: BayesProblem, X: Tensor, y: Tensor, held_out: Tensor,
                 n_steps: int) -> None:
        self.problem, self.x, self.y = problem, X[held_out], y[held_out]
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
        likelihood = self.problem.likelihood
        score_fn = getattr(likelihood, "log_density", likelihood.log_prob)
        f = self.problem.forward(state.params, self.x)
        score = (score_fn(f, self.y, state.params) / self.x.shape[1]).to(torch.float64)
        better = score > self.best_score
        if self.best is None:
            self.best = {k: v.clone() for k, v in state.params.items()}
        else:
            for k, v in state.params.items():
                mask = better.view(-1, *([1] * (v.dim() - 1)))
                self.best[k] = torch.where(mask, v, self.best[k])
        self.best_score = torch.where(better, score, self.best_score)
        self.best_step[better.cpu()] = step + 1
