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
from .types import Batch, BayesProblem, member

__all__ = ["ProblemLogPosterior", "make_log_posterior", "log_posterior_and_measure", "log_prior",
           "grad_and_value",
           "log_likelihood", "row_weights"]

LogPosterior = Callable[[Params, Batch], Tensor]


class ProblemLogPosterior:
    """``log_posterior(params, batch) -> (C,)`` of ``problem`` (what
    :func:`make_log_posterior` returns), which :func:`grad_and_value` differentiates with
    the prior's closed-form gradient where the prior has one (``log_prob_grad``).

    A Gaussian weight prior built from autograd's pieces adds a power, a sum and a product
    per parameter tensor, and their backward nodes, to every gradient; in closed form it is
    one product per tensor (``benchmarks/speed.py prior-grad`` times the two ways).
    """

    def __init__(self, problem: BayesProblem) -> None:
        self.problem = problem
        self.prior_grad = member(problem.prior, "log_prob_grad")

    def __call__(self, params: Params, batch: Batch) -> Tensor:
        return log_posterior_and_measure(self.problem, params, batch)[0]

    def grad_and_value(self, params: Params, batch: Batch) -> tuple[Params, Tensor]:
        """Gradient and value per chain: the likelihood by autograd, the prior (when it
        has ``log_prob_grad``) in closed form; the same numbers as autograd of the whole."""
        if self.prior_grad is None:
            return _autograd_grad_and_value(self, params, batch)
        leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        with torch.enable_grad():
            scaled, lik_prior, _ = _terms(self.problem, leaves, batch)
            rest = scaled + lik_prior
            grads = torch.autograd.grad(rest.sum(), list(leaves.values()), allow_unused=True)
        plain = {k: v.detach() for k, v in params.items()}
        with torch.no_grad():
            prior_value = self.problem.prior.log_prob(plain, None, None)
            extra = self.prior_grad(plain)
            grads = {k: (torch.zeros_like(leaves[k]) if g is None else g)
                     for k, g in zip(leaves, grads, strict=True)}
            keys = list(extra)
            summed = torch._foreach_add([grads[k] for k in keys], [extra[k] for k in keys])
            grads.update(zip(keys, summed, strict=True))
            # the whole's order of sums: (N/n) loglik + (likelihood's prior + prior)
            value = scaled.detach() + (_detached(lik_prior) + prior_value)
        return grads, value


def _detached(value):
    """A tensor detached from its graph; a number (a likelihood without a prior's term)
    as it is."""
    return value.detach() if isinstance(value, Tensor) else value


def make_log_posterior(problem: BayesProblem) -> ProblemLogPosterior:
    """Bind ``problem`` into ``log_posterior(params, batch) -> (C,)``
    (a :class:`ProblemLogPosterior`)."""
    return ProblemLogPosterior(problem)


def _terms(problem: BayesProblem, params: Params, batch: Batch, network_prior: bool = False
           ) -> tuple[Tensor, Tensor, Tensor | None]:
    """``(N / n) log-likelihood``, the log prior (the likelihood's own, plus the network
    prior's with ``network_prior``) and the outputs at the measurement points, from one
    forward pass."""
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
    prior = (log_prior(problem, params, f_measure, measure) if network_prior
             else problem.likelihood.log_prior(params))
    return (problem.n_data / n) * loglik, prior, f_measure


def log_posterior_and_measure(problem: BayesProblem, params: Params, batch: Batch
                              ) -> tuple[Tensor, Tensor | None]:
    """The log posterior ``(C,)`` and the network's outputs at the batch's measurement
    points ``(C, M, n_out)`` (None without them), from one forward pass."""
    scaled, prior, f_measure = _terms(problem, params, batch, network_prior=True)
    return scaled + prior, f_measure


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
    """Gradient of each chain's log posterior and its value, without touching ``params``
    (a problem's log posterior, :class:`ProblemLogPosterior`, takes the prior's gradient
    in closed form where it can)."""
    if isinstance(log_posterior, ProblemLogPosterior):
        return log_posterior.grad_and_value(params, batch)
    return _autograd_grad_and_value(log_posterior, params, batch)


def _autograd_grad_and_value(log_posterior: LogPosterior, params: Params, batch: Batch
                             ) -> tuple[Params, Tensor]:
    """:func:`grad_and_value` by autograd of the whole log posterior."""
    leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    with torch.enable_grad():
        value = log_posterior(leaves, batch)
        grads = torch.autograd.grad(value.sum(), list(leaves.values()))
    return dict(zip(leaves, grads, strict=True)), value.detach()
