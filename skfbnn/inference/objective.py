"""The log-posterior convention, stated once.

``log_posterior(params, batch) = (N / n) * sum_{i in batch} w_i log p(y_i | f(x_i)) + log prior``

with ``N`` the training-set size (rows), ``n`` the minibatch size and ``w_i`` the row
weights (``sample_weight``, the batch's ``"w"``; 1 each when the batch has none), so that
a row of weight 2 counts as two rows and the minibatch sum is an unbiased estimate of the
weighted full-data sum. The log prior
is the network prior's (``problem.prior``, absent for maximum likelihood) plus
that of the likelihood's own parameters (the observation noise). For a
functional prior the network is evaluated on the minibatch and the
measurement points in one forward pass, and the prior term gets no ``N/n``
factor. Update rules maximise this quantity; nothing here returns a "loss".
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..nn.functional import Params
from .types import Batch, BayesProblem

__all__ = ["make_log_posterior", "log_posterior_and_measure", "log_prior", "grad_and_value",
           "log_likelihood", "row_weights"]

LogPosterior = Callable[[Params, Batch], Tensor]


def make_log_posterior(problem: BayesProblem) -> LogPosterior:
    """Bind ``problem`` into ``log_posterior(params, batch) -> (C,)``."""

    def log_posterior(params: Params, batch: Batch) -> Tensor:
        return log_posterior_and_measure(problem, params, batch)[0]

    return log_posterior


def log_posterior_and_measure(problem: BayesProblem, params: Params, batch: Batch
                              ) -> tuple[Tensor, Tensor | None]:
    """The log posterior ``(C,)`` and the network's outputs at the batch's measurement
    points ``(C, M, n_out)`` (None without them), from one forward pass."""
    x, y = batch["x"], batch["y"]
    measure = batch.get("measure")
    n = x.shape[-2]
    if measure is None:
        f, f_measure = problem.forward(params, x), None
    else:
        xm = measure.x if x.dim() == 2 else measure.x.expand(x.shape[0], -1, -1)
        out = problem.forward(params, torch.cat([x, xm], dim=-2))
        f, f_measure = out[:, :n], out[:, n:]
    loglik = log_likelihood(problem.likelihood, f, y, params, batch.get("w"))
    value = (problem.n_data / n) * loglik + log_prior(problem, params, f_measure, measure)
    return value, f_measure


def log_likelihood(likelihood, f: Tensor, y: Tensor, params: Params,
                   weights: Tensor | None = None) -> Tensor:
    """``likelihood.log_prob`` summed over the rows, each row's term times its weight
    (``weights`` ``(n,)`` or ``(C, n)``; the unweighted sum when None), ``(C,)``.

    A likelihood that takes no weights (a plain function wrapped by
    :class:`~skfbnn.inference.types.BayesProblem`) is called without them, and only
    when no weights are given."""
    if weights is None:
        return likelihood.log_prob(f, y, params)
    return likelihood.log_prob(f, y, params, weights=weights)


def row_weights(problem: BayesProblem | None) -> Tensor | None:
    """The problem's row weights ``(N,)`` (``sample_weight``), or None (also without a
    problem: the run policies take ``problem=None``).

    The run policies (:mod:`skfbnn.inference.families`) hand them to the driver, which puts
    each batch's share in ``batch["w"]``."""
    return None if problem is None else problem.sample_weight


def log_prior(problem: BayesProblem, params: Params, f_measure=None, measure=None):
    """Network prior plus the likelihood's parameter prior, ``(C,)`` or 0."""
    lp = problem.likelihood.log_prior(params)
    if problem.prior is not None:
        lp = lp + problem.prior.log_prob(params, f_measure, measure)
    return lp


def grad_and_value(
    log_posterior: LogPosterior, params: Params, batch: Batch
) -> tuple[Params, Tensor]:
    """Gradient of each chain's log posterior and its value, without touching ``params``."""
    leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    with torch.enable_grad():
        value = log_posterior(leaves, batch)
        grads = torch.autograd.grad(value.sum(), list(leaves.values()))
    return dict(zip(leaves, grads, strict=True)), value.detach()
