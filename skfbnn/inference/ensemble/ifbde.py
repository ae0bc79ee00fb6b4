"""ifBDE: a deep ensemble regularised in function space through its Wasserstein barycenter.

Every member is trained as in the (Bayesian) deep ensemble, each on its own
minibatch, with one shared regulariser (the ifBNN paper's Eq. 16):

.. math::

    \\sum_c \\Big(\\frac{N}{n} \\sum_{i \\in B_c} \\log p(y_i \\mid f_c(x_i))
    + \\log p(w_c)\\Big) - \\beta\\, W_2^2\\big(\\bar q(f_M), p(f_M)\\big).

Member ``c`` linearised at its weights is a GP with the empirical NTK
``Theta_c = s^2 J_c J_c^T`` (``s = ntk_scale``; ``None``: ``prior_std``, the
linearised prior of its weights); conditioned on the member's minibatch with noise ``nu`` (the prior
nugget) it gives, at the measurement set ``X_M`` (the paper's Eq. 20),

.. math::

    q_c(f_M) = \\mathcal N\\big(f_c(X_M),\\; \\Theta_{MM} - \\Theta_{MB}
    (\\Theta_{BB} + \\nu I)^{-1} \\Theta_{BM} + \\nu I\\big).

``aggregate="barycenter"`` combines the members' Gaussians into their
2-Wasserstein barycenter (mean: the average mean; covariance: the
Álvarez-Esteban fixed point, started at the members' average covariance and
iterated ``barycenter_iter`` times without gradient, then one differentiable
application of the fixed-point map, which carries the barycenter's first-order
dependence on the members; with the default ``barycenter_iter=0`` that one map
from the average, whose squared W2 is within 3.4e-4 (relative) of the converged
barycenter's on the member covariances of real fits);
``"average"`` uses the plain average of the covariances (the paper's Eq. 19).
The squared W2 distance to the GP prior ``N(m_M, K_MM + nu I)`` (summed over
outputs, ``reduction="mean"``: per measurement point) is the regulariser.
With ``beta = 0`` an update is exactly the deep ensemble's. The predictive is
the members' mixture, as for the deep ensemble.

The squared W2 is computed as its mean part ``|m - m_M|^2`` (from the members'
outputs at ``X_M``, which the likelihood's forward pass computes beside the
minibatch's) plus its covariance part; ``w2_interval = k`` evaluates the covariance
part, most of a step's cost, at every ``k``-th step only and reuses the gradient of its
last evaluation in between (``k = 1``: the whole W2 at every step).

``random_function=True`` adds to every member the fixed random function
``g_c(x) = J(x; w_{c,0}) w*_c`` of He et al. (2020), the ifBNN paper's Eq. 17-18
(:mod:`.random_function`): members are ``f~_c = f_c + g_c`` in the likelihood, in
the regulariser's means, in the held-out scoring and in every prediction. He et
al. show that unregularised, noise-free gradient flow of the linearised ``f~``
ends at a draw of the NTK-GP posterior rather than at its mean; here the members
are MAP estimates under the weight prior, trained by Adam, so that is a motivation
and not an identity (for a network without hidden layer ``g = 0``).

``anchored=True`` centres each member's weight penalty at its own prior draw, as
for the deep ensemble (:mod:`.anchored`); the regulariser is unchanged.
"""

from __future__ import annotations

from functools import partial
from numbers import Integral, Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._hyper import param
from ..._validation import Interval, StrOptions
from ...nn.functional import Params
from ...priors.weight import WeightPrior, network_params
from ...stats.wasserstein import (
    barycenter_factor,
    barycenter_step,
    gaussian_barycenter,
    gaussian_w2_factor,
)
from ..objective import log_posterior_and_measure
from ..optim import adam_step
from ..types import Batch, BayesProblem, Schedule, Transform, member
from ..vi.ifbnn import check_functional, reduce_w2
from .anchored import AnchoredPrior
from .anchored import split as split_fixed
from .conditioned import conditioned_covariance
from .deep_ensemble import ARCHITECTURE, NOISE, EnsembleState, check_anchored
from .deep_ensemble import HYPER as ENSEMBLE_HYPER
from .deep_ensemble import REGRESSION_HYPER as ENSEMBLE_REGRESSION_HYPER
from .deep_ensemble import init as ensemble_init
from .random_function import draw, randomized, split

__all__ = ["ARCHITECTURE", "HYPER", "REGRESSION_HYPER", "NOISE", "IFBDEInfo", "update", "build",
           "member_covariances", "conditioned_covariance", "aggregate_w2", "init"]

HYPER = (
    *(p for p in ENSEMBLE_HYPER if p.name != "prior_std"),
    param("prior_std", 3.0, [None, Interval(Real, 0, None, closed="neither")],
          "float or None",
          "Standard deviation of an isotropic Gaussian weight prior on each member; "
          "None: none. 3, the deep ensemble's (with ``ntk_scale=0.25``; chosen on the "
          "validation rows of six UCI sets)."),
    param("beta", 0.3, [Interval(Real, 0, None, closed="left")], "float",
          "Weight of the 2-Wasserstein regulariser (0: the deep ensemble). 0.3: the best "
          "mean rank among 1, 0.3 and 0.1 on the validation rows of five UCI sets at the "
          "10 000-step runs."),
    param("ntk_scale", 0.25, [None, Interval(Real, 0, None, closed="neither")],
          "float or None",
          "Each member's linearised GP has the kernel ``ntk_scale**2 J J^T`` (``J`` the "
          "member's Jacobian). None: ``prior_std`` (1 without a weight prior), the "
          "linearisation of the weight prior; 1: the plain empirical NTK of the ifBNN paper. "
          "0.25: the best mean rank on the validation rows of six UCI sets among 1, 0.5, "
          "0.25, 0.1 and None (with ``prior_std=3``, None puts a covariance nine times the "
          "plain NTK's against the GP prior, and loses to the deep ensemble on five of six)."),
    param("w2_interval", 4, [Interval(Integral, 1, None, closed="left")], "int",
          "Steps between evaluations of the covariance part of the squared W2 (most of a "
          "step's cost; the steps between reuse its last gradient, the mean part is fresh "
          "at every step). 1: the paper's method. 4: level with 1 on validation rows."),
    param("n_measurement_points", 32, [Interval(Integral, 1, None, closed="left")], "int",
          "Size of the measurement set redrawn at every step (each evaluation of the W2's "
          "covariance part computes a barycenter of n_estimators covariances of this size, "
          "by an eigendecomposition of each)."),
    param("aggregate", "barycenter", [StrOptions({"barycenter", "average"})], "str",
          "How the members' linearised Gaussians are combined: their 2-Wasserstein "
          "'barycenter' or the plain 'average' of means and covariances."),
    param("random_function", False, ["boolean"], "bool",
          "Add to every member the fixed random function g(x) = J(x; w_0) w* of He et al. "
          "(2020) (the ifBNN paper's Eq. 17-18): J the Jacobian at the member's initial "
          "weights w_0, w* a draw of the initialisation distribution on the hidden layers "
          "and 0 on the readout, so that g ~ GP(0, the hidden layers' part of the NTK at "
          "w_0). Used in training and in every prediction."),
)
"""Estimator parameters of this method (beyond its family's and its prior's)."""

REGRESSION_HYPER = (
    *(p for p in ENSEMBLE_REGRESSION_HYPER if p.name != "prior_std"),
    param("measurement_train_fraction", 1.0, [Interval(Real, 0, 1, closed="both")], "float",
          "Fraction of the measurement set drawn from the training inputs; the rest is "
          "uniform in the widened training box. 1 for the ifBDE regressor: the W2's mean part "
          "pulls the ensemble's mean towards the GP prior's constant mean, and off the data "
          "(in the box) that pull costs a function far from any constant (yacht, validation "
          "rows of 8 splits, against the deep ensemble: -0.103 with 0, -0.034 with 0.5, "
          "+0.050 with 1). Chosen on UCI validation rows: mean -0.811 against -0.830 for 0.5 "
          "over six sets (the benchmarks page)."),
)
"""Regression-only parameters: the variance heads' options (the deep ensemble's) and the
measurement set on the training inputs (the classifier keeps the prior's 0.5)."""


class IFBDEInfo(NamedTuple):
    """Per-member objective (log posterior per datum), the shared squared W2 and the
    gradient norm, ``(M,)`` each."""

    objective: Tensor
    w2: Tensor
    grad_norm: Tensor


def member_covariances(problem: BayesProblem, params: Params, x: Tensor, xm: Tensor,
                       n_out: int, scale: float, nugget: float) -> tuple[Tensor, Tensor]:
    """Each member's mean ``(C, k, M)`` and conditioned NTK covariance ``(C, k, M, M)`` at
    ``xm``, given its minibatch inputs ``x`` (``(n, d)`` or ``(C, n, d)``), in float64."""
    C = next(iter(params.values())).shape[0]
    x = x.expand(C, *x.shape) if x.dim() == 2 else x
    n, M = x.shape[1], xm.shape[0]
    points = torch.cat([x, xm.to(x.dtype).expand(C, -1, -1)], dim=1)
    f, ntk = problem.ntk(network_params(params), points, n_out)
    theta = ntk.double() if scale == 1 else scale**2 * ntk.double()  # (C, k, n + M, n + M)
    cov = conditioned_covariance(theta, n, max(nugget, 1e-6))
    cov = cov + nugget * torch.eye(M, dtype=cov.dtype, device=cov.device)
    return f[:, n:].double().transpose(1, 2), cov


def aggregate_w2(means: Tensor | None, covs: Tensor, measure, aggregate: str,
                 barycenter_iter: int = 0) -> Tensor:
    """Squared W2 between the members' aggregate and the GP prior, summed over outputs.

    ``means (C, k, M)``, ``covs (C, k, M, M)``; ``measure`` carries the prior's
    mean ``(k, M)`` and Cholesky factor ``(k, M, M)``. ``means=None`` gives the
    covariance part alone (the squared W2 without its mean part ``|m - m_0|^2``).
    The barycenter's covariance is ``barycenter_iter`` fixed-point maps without
    gradient from the members' average covariance, then one differentiable map.
    """
    C = covs.shape[0]
    if means is None:
        mean, means = measure.mean, covs.new_zeros(covs.shape[:-1])
    else:
        mean = means.mean(0).to(measure.mean.dtype)
    if aggregate == "average":
        factor = _cholesky(covs.mean(0))
    else:  # all outputs at once: (C, k, M, M) is k problems of C members
        weights = torch.full((C,), 1.0 / C, dtype=covs.dtype, device=covs.device)
        with torch.no_grad():  # the average covariance, then barycenter_iter maps
            _, fixed = gaussian_barycenter(means, covs, max_iter=barycenter_iter, tol=0.0,
                                           warn=False)
        # one differentiable fixed-point map from there, as a factor F F^T
        factor = barycenter_factor(fixed, covs, weights)
        if factor is None:  # a singular barycenter (not seen in practice)
            factor = _cholesky(barycenter_step(fixed, covs, weights))
    return gaussian_w2_factor(mean, factor.to(measure.chol.dtype), measure.mean,
                              measure.chol).sum()


def _cholesky(cov: Tensor) -> Tensor:
    """Cholesky factor of ``cov`` plus a relative jitter of 1e-10."""
    M = cov.shape[-1]
    eye = torch.eye(M, dtype=cov.dtype, device=cov.device)
    jitter = 1e-10 * cov.diagonal(dim1=-2, dim2=-1).mean(-1)[..., None, None]
    return torch.linalg.cholesky(cov + jitter * eye)


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None, *,
    network=None, n_function_outputs: int | None = None, anchor_std: float | None = None,
    n_outputs: int | None = None,
) -> EnsembleState:
    """Members at ``params``; with ``network`` (``random_function=True``) each also gets
    its random function (:func:`.random_function.draw`, from ``gen``), and with
    ``anchor_std`` its anchor (:func:`.anchored.draw`), stored with its parameters.
    Adam moments cover the trainable entries only."""
    if network is None:
        return ensemble_init(params, batch, gen, anchor_std=anchor_std)
    own = dict(params)
    state = ensemble_init(own, batch, gen, anchor_std=anchor_std)
    return state._replace(params={**state.params,
                                  **draw(network, own, gen, n_function_outputs, n_outputs)})


class _OwnPrior:
    """A weight prior that ignores the random function's reserved entries."""

    def __init__(self, prior) -> None:
        self.prior = prior

    def log_prob(self, params: Params, f_measure=None, measure=None) -> Tensor:
        return self.prior.log_prob(split(params)[0], f_measure, measure)


def update(
    state: EnsembleState, batch: Batch, gen: torch.Generator, *, problem: BayesProblem,
    members: BayesProblem, learning_rate: Schedule, beta: float, reduction: str,
    aggregate: str, scale: float, interval: int = 1, barycenter_iter: int = 0,
    w2_scale: str = "full",
) -> tuple[EnsembleState, IFBDEInfo]:
    """One Adam step of every member up the ifBDE objective; pure. ``members`` is the
    members' own problem (likelihood, weight prior, and the forward pass of ``f + g``
    with ``random_function=True``).

    The squared W2 is computed in its two parts, ``|m - m_0|^2 + B(S, K)``: the mean
    part from the members' outputs at the measurement points, which the likelihood's
    forward pass computes beside the minibatch's, at every step; the covariance part
    ``B`` (the members' NTKs, their barycenter, most of a step's cost) at every
    ``interval``-th step (and the first), the steps in between reusing the gradient of
    its last evaluation, cached in ``state.regularizer``."""
    measure = batch.get("measure") if beta else None
    if w2_scale == "batch":  # the objective is divided by N below: count the W2 N / n times
        beta = beta * problem.n_data / batch["x"].shape[-2]
    own, fixed = split_fixed(state.params)
    leaves = {k: v.detach().requires_grad_(True) for k, v in own.items()}
    cached = state.regularizer if measure is not None else None
    with torch.enable_grad():
        log_post, f_measure = log_posterior_and_measure(members, {**leaves, **fixed},
                                                        {**batch, "measure": measure})
        objective = log_post.sum()
        w2 = log_post.new_zeros(())
        if measure is not None:
            n_out = measure.mean.shape[0]
            mean_part = reduce_w2(_squared_distance(
                f_measure[..., :n_out].double().transpose(1, 2), measure), measure, reduction)
            objective = objective - beta * mean_part.to(log_post.dtype)
            if cached is None or state.step % interval == 0:
                covs = member_covariances(problem, leaves, batch["x"], measure.x, n_out, scale,
                                          problem.prior.functional.nugget)[1]
                bures = reduce_w2(aggregate_w2(None, covs, measure, aggregate,
                                               barycenter_iter), measure, reduction)
                cached = (_gradient(beta * bures.to(log_post.dtype), leaves), bures.detach())
            w2 = mean_part.detach() + cached[1]
        grads = torch.autograd.grad(objective, list(leaves.values()), materialize_grads=True)
    if cached is not None:
        grads = [g - b for g, b in zip(grads, cached[0], strict=True)]
    N = problem.n_data
    grads = {k: g / N for k, g in zip(leaves, grads, strict=True)}
    grad_norm = sum(g.reshape(len(g), -1).pow(2).sum(-1) for g in grads.values()).sqrt()
    params, adam = adam_step(own, grads, state.adam, learning_rate(state.step))
    params = {**params, **fixed}
    objective = log_post.detach() / N
    info = IFBDEInfo(objective, w2.expand_as(objective).to(objective.dtype), grad_norm)
    return EnsembleState(params, adam, objective, state.step + 1, cached), info


def _gradient(value: Tensor, leaves: Params) -> list[Tensor]:
    """``d value / d leaves``; zeros where ``value`` does not depend on them (the NTK of
    a network without hidden layer is constant)."""
    if not value.requires_grad:
        return [torch.zeros_like(v) for v in leaves.values()]
    return list(torch.autograd.grad(value, list(leaves.values()), materialize_grads=True))


def _squared_distance(means: Tensor, measure) -> Tensor:
    """``|mean of the members' means (C, k, M) - the prior mean (k, M)|^2``."""
    return (means.mean(0).to(measure.mean.dtype) - measure.mean).pow(2).sum()


def _ntk_scale(ntk_scale: float | None, prior_std: float | None) -> float:
    """The members' NTK scale: ``ntk_scale``, else ``prior_std``, else 1."""
    if ntk_scale is not None:
        return float(ntk_scale)
    return 1.0 if prior_std is None else float(prior_std)


def build(
    problem: BayesProblem, *, learning_rate: Schedule, prior_std: float | None = 3.0,
    beta: float = 0.3, w2_reduction: str = "sum", aggregate: str = "barycenter",
    n_measurement_points: int | None = None, random_function: bool = False,
    anchored: bool = False, ntk_scale: float | None = 0.25, w2_interval: int = 4,
    barycenter_iter: int = 0, w2_scale: str = "full",
) -> Transform:
    """Bind ``problem`` (a :class:`~skfbnn.priors.functional.FunctionPrior` and a Jacobian).

    The members' own objective is the deep ensemble's: the likelihood plus, with
    ``prior_std``, an isotropic Gaussian weight prior. ``n_measurement_points`` is consumed
    by the estimator, which builds the prior.

    With ``random_function`` (which needs ``problem.network``), ``problem.forward`` is
    replaced by that of ``f~ = f + g`` (:func:`.random_function.randomized`, the plain
    one while no member holds a term), so that whatever else the run gives ``problem``
    to, such as the held-out monitor of ``validation_fraction``, scores the members
    that are trained.

    With ``anchored`` the members' weight penalty is centred at their anchors
    (:class:`.anchored.AnchoredPrior`, which ignores the random function's entries).
    """
    check_functional(problem, "ifBDE")
    anchor_std = check_anchored(anchored, prior_std)
    prior = None if prior_std is None else WeightPrior(prior_std)
    base = member(problem.forward, "base") or problem.forward
    start = partial(init, anchor_std=anchor_std)
    if random_function:
        if problem.network is None:
            raise ValueError("random_function=True needs the network's architecture "
                             "(BayesProblem(network=...)).")
        problem.forward = randomized(base)
        prior = None if prior is None else _OwnPrior(prior)
        outputs = member(problem.likelihood, "n_outputs")
        per_target = 1 if outputs is None else outputs(1)
        n_out = problem.n_outputs  # the network's outputs; else an MLP's readout bias
        n_out = list(problem.network.parameters())[-1].shape[0] if n_out is None else n_out
        start = partial(init, network=problem.network, anchor_std=anchor_std,
                        n_function_outputs=max(1, n_out // per_target), n_outputs=n_out)
    if anchor_std is not None:
        prior = AnchoredPrior(anchor_std)
    members = BayesProblem(problem.forward, problem.likelihood, prior, problem.n_data)
    return Transform(
        start,
        partial(update, problem=problem, members=members,
                learning_rate=learning_rate, beta=beta, reduction=w2_reduction,
                aggregate=aggregate, scale=_ntk_scale(ntk_scale, prior_std),
                interval=w2_interval, barycenter_iter=barycenter_iter, w2_scale=w2_scale),
    )
