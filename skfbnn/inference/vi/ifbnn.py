"""ifBNN: mean-field VI with a 2-Wasserstein functional regulariser (implicit functional BNN).

The variational family is Bayes by backprop's, ``q(w) = prod N(mu_i, sigma_i^2)``.
Its distribution over functions at the measurement points ``X_M`` is replaced
by the network linearised at the mean (the paper's Eq. 13),

.. math::

    q(f_M) \\approx \\mathcal N\\big(f(X_M; \\mu),\\; J_\\mu\\, \\mathrm{diag}(\\sigma^2)\\,
    J_\\mu^\\top + \\nu I\\big), \\qquad J_\\mu = \\partial f(X_M; \\mu) / \\partial w,

and the weight-space KL of Bayes by backprop is replaced by the squared
2-Wasserstein distance to the GP prior ``N(m_M, K_MM + nu I)`` (``nu`` is the
prior nugget, added to both sides). Each step climbs, per datum,

.. math::

    \\frac{1}{N}\\Big(\\frac{N}{n} \\mathbb E_q \\sum_{i \\in B} \\log p(y_i \\mid f(x_i; w))
    - \\beta\\, W_2^2\\big(q(f_M), p(f_M)\\big)\\Big).

The covariance is never formed: ``W2^2 = |m_q - m_p|^2 + |A|_F^2 + |L|_F^2 -
2 |L^T A|_*`` with ``A = [J diag(sigma), sqrt(nu) I]`` and ``L`` the prior's
Cholesky factor (:func:`~skfbnn.stats.wasserstein.gaussian_w2_factor`); the
Jacobian comes in closed form (:func:`~skfbnn.nn.jacobian.mlp_jacobian`) and
the gradient flows through it. Several outputs (classes) are independent
under the GP prior; their distances are summed, each with its own output's
linearised covariance (the cross-output covariance of ``q`` is dropped).
``reduction="mean"`` divides the distance by the number of measurement points.
The paper (Wang et al.) further pushes ``q(f)`` through the infinite-training
NTK limit (its Eq. 14); that step needs the NTK on all training rows and is
not done here.
"""

from __future__ import annotations

from functools import partial
from numbers import Integral, Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._validation import Interval, StrOptions
from ...nn.functional import Params
from ...nn.jacobian import flat_jacobian
from ...priors.functional import FunctionPrior, MeasurementDraw
from ...priors.weight import network_params
from ...stats.wasserstein import gaussian_w2_factor
from ..hyper import param
from ..types import Batch, BayesProblem, Schedule, Transform
from .bbb import expected_log_likelihood
from .meanfield import MeanFieldState, ascend, floor_noise, init, split
from .meanfield import noise_floor as _noise_floor

__all__ = ["HYPER", "IFBNNInfo", "update", "build", "linearized_w2", "check_functional"]

HYPER = (
    param("n_mc", 1, [Interval(Integral, 1, None, closed="left")], "int",
          "Monte-Carlo weight draws per step for the expected log-likelihood."),
    param("beta", 1.0, [Interval(Real, 0, None, closed="left")], "float",
          "Weight of the 2-Wasserstein regulariser (0: maximum likelihood in the means)."),
    param("w2_reduction", "mean", [StrOptions({"sum", "mean"})], "str",
          "'sum': the squared distance between the Gaussians on the measurement set; "
          "'mean': divided by the number of measurement points (per-point scale; chosen on "
          "validation rows, docs/benchmarks.md)."),
    param("noise_floor", "gp", [None, StrOptions({"gp"})], "'gp' or None",
          "Regression with a learned noise: 'gp' keeps the noise std at least the pre-fitted "
          "GP's noise std after every step (as the fBNN reference code does), so a network "
          "that interpolates the training rows cannot shrink the predictive below the noise "
          "the GP finds in the data (without it, Boston validation coverage 0.36); None: no "
          "floor."),
    param("init_std", 1e-2, [Interval(Real, 0, None, closed="neither")], "float",
          "Initial standard deviation of every variational factor."),
)
"""Estimator parameters of this method (beyond its family's and its prior's)."""


class IFBNNInfo(NamedTuple):
    """Per-step objective per datum, squared W2 to the prior and gradient norm, ``(C,)``."""

    objective: Tensor
    w2: Tensor
    grad_norm: Tensor


def check_functional(problem: BayesProblem, method: str) -> None:
    """A GP prior on functions and a Jacobian are what the linearised methods need."""
    if not isinstance(problem.prior, FunctionPrior):
        raise ValueError(f"{method} needs a GP prior on functions (FunctionPrior). "
                         f"Got {type(problem.prior).__name__}.")
    if problem.jacobian is None:
        raise ValueError(f"{method} needs the network's Jacobian: build the BayesProblem "
                         "with network=<the nn.Module> (or jacobian=...).")


def linearized_w2(problem: BayesProblem, mean: Params, std: Params, measure: MeasurementDraw,
                  reduction: str = "sum") -> Tensor:
    """Squared W2 between the linearised ``q(f_M)`` and the GP prior, per set ``(C,)``."""
    n_out = measure.mean.shape[0]
    f, jac = problem.jacobian(network_params(mean), measure.x, n_out)
    A = flat_jacobian(jac, std).to(measure.chol.dtype)  # (C, k, M, P)
    f = f.to(A.dtype).transpose(1, 2)  # (C, k, M)
    nugget = problem.prior.functional.nugget  # C1 = A A^T + nugget I
    w2 = gaussian_w2_factor(f, A, measure.mean, measure.chol, shift1=nugget).sum(-1)
    return w2 / measure.x.shape[0] if reduction == "mean" else w2


def _objective(variational: Params, batch: Batch, gen, *, problem: BayesProblem, n_mc: int,
               beta: float, reduction: str):
    mean, std = split(variational)
    loglik = expected_log_likelihood(mean, std, batch, gen, problem, n_mc)
    w2 = linearized_w2(problem, mean, std, batch["measure"], reduction)
    n, N = batch["x"].shape[-2], problem.n_data
    value = (N / n) * loglik + problem.likelihood.log_prior(mean) - beta * w2.to(loglik.dtype)
    return value / N, (w2,)


def update(
    state: MeanFieldState, batch: Batch, gen: torch.Generator, *, problem: BayesProblem,
    learning_rate: Schedule, n_mc: int, beta: float, w2_reduction: str, log_floor=None,
) -> tuple[MeanFieldState, IFBNNInfo]:
    """One Adam step up the ifBNN objective; pure (``state`` is not modified)."""
    objective = partial(_objective, problem=problem, n_mc=n_mc, beta=beta,
                        reduction=w2_reduction)
    state, value, (w2,), grad_norm = ascend(state, batch, gen, objective, learning_rate)
    return floor_noise(state, log_floor), IFBNNInfo(value, w2, grad_norm)


def build(
    problem: BayesProblem, *, learning_rate: Schedule, n_mc: int = 1, beta: float = 1.0,
    w2_reduction: str = "mean", init_std: float = 1e-2, noise_floor: str | None = "gp",
) -> Transform:
    """Bind ``problem`` (a :class:`~skfbnn.priors.functional.FunctionPrior` and a Jacobian)."""
    check_functional(problem, "ifBNN")
    return Transform(
        partial(init, init_std=init_std),
        partial(update, problem=problem, learning_rate=learning_rate, n_mc=n_mc, beta=beta,
                w2_reduction=w2_reduction, log_floor=_noise_floor(problem, noise_floor)),
    )
