"""Deep ensembles (Lakshminarayanan, Pritzel & Blundell, 2017), trained as one batch.

``n_estimators`` networks from independent random initialisations, each fed
its own minibatch order, climb their own (penalised) log-likelihood with Adam.
The members are a leading dimension of every parameter, so one step updates
all of them with batched matrix products, not a Python loop over members.
For regression each member has Gaussian heads (a mean and a variance per
output, :class:`~skfbnn.likelihoods.HeteroscedasticGaussianLikelihood`) when
the noise is learned. With ``prior_std`` set, each member is a MAP estimate
under the isotropic Gaussian weight prior (the Bayesian deep ensemble, BDE,
baseline of the ifBNN paper); without it, maximum likelihood as in the paper.
With ``anchored=True`` each member's penalty is centred at its own prior draw
instead of zero (randomise-then-optimise, :mod:`.anchored`).
"""

from __future__ import annotations

from functools import partial
from numbers import Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._hyper import param
from ..._validation import Interval, StrOptions
from ...nn.functional import Params
from ..objective import grad_and_value, make_log_posterior
from ..optim import AdamState, adam_init, adam_step
from ..types import Batch, BayesProblem, Schedule, Transform
from . import anchored as anchors

__all__ = [
    "ARCHITECTURE", "HYPER", "REGRESSION_HYPER", "NOISE", "EnsembleState", "EnsembleInfo", "init",
    "update", "build", "check_anchored",
]

ARCHITECTURE = {"hidden_layer_sizes": (50, 50), "activation": "gelu"}
"""The ensembles' own network: two GELU layers of 50, as ifBNN's (the library's
default is one tanh layer); ifBDE shares it. On UCI validation rows (splits 0-3) the deep
ensemble's mean log-likelihood rose from -1.350 to -1.276 (yacht +0.31 on every split, energy
+0.05, concrete +0.03, wine level, Boston -0.02), ifBDE's from -1.362 to -1.275 (yacht +0.34,
energy +0.07, concrete +0.04, wine +0.01, Boston -0.03; the benchmarks page)."""

HYPER = (
    param("prior_std", 3.0, [None, Interval(Real, 0, None, closed="neither")],
          "float or None",
          "Standard deviation of an isotropic Gaussian weight prior making each "
          "member a MAP estimate (BDE); None trains by maximum likelihood. 3 (the "
          "classifier's default) beat 1 on the regression validation rows of four of six "
          "UCI sets and was level on two, on one tanh layer."),
    param("anchored", False, ["boolean"], "bool",
          "Centre each member's weight penalty at its own draw from the prior, "
          "|w - a|^2 / (2 prior_std^2) with a ~ N(0, prior_std^2), drawn once per fit "
          "(anchored ensembles, Pearce et al. 2020: randomise-then-optimise). Targets "
          "are not perturbed (a learned noise head would absorb the perturbation). "
          "Needs prior_std."),
)
"""Estimator parameters of this method (beyond its family's)."""

REGRESSION_HYPER = (
    param("prior_std", None, [None, Interval(Real, 0, None, closed="neither")],
          "float or None",
          "Standard deviation of an isotropic Gaussian weight prior making each "
          "member a MAP estimate (BDE); None (the regressor's default) trains by maximum "
          "likelihood, as the paper. On the ensembles' two GELU layers None beat 3 on the "
          "UCI validation rows (splits 0-3 of five sets: mean +0.027, yacht +0.109, energy "
          "+0.028, the rest level), where "
          "on one tanh layer 3 had won; the classifier keeps 3."),
    param("calibrate_variance", "auto", [StrOptions({"auto"}), "boolean"], "'auto' or bool",
          "After the run, add to each member's predicted variances the variance that scores "
          "its own held-out rows best, where those rows call for it (at least 0, and 0 unless "
          "it passes a likelihood-ratio test at 5%; each member is scored with the members' "
          "spread at those rows added, as the predictive adds it; "
          "``skfbnn.likelihoods.calibrated_variance_floor``). A member fits its training rows "
          "closer than new ones, so its heads learn too small a noise (the deep ensemble on "
          "diabetes: predictive variance 0.68 of the test error, coverage 0.86; with it 0.98 "
          "and 0.946). 'auto' (the default): where there are variance heads and held-out rows "
          "(``validation_fraction > 0``); True: the same, and without held-out rows an error; "
          "False: never. On the UCI validation rows (splits 0-3 of five sets) it raised the "
          "mean log-likelihood by 0.008 (deep ensemble) and 0.006 (ifBDE), Boston by 0.03, and "
          "no set lost more than 0.007."),
    param("nll_beta", 0.5, [Interval(Real, 0, 1, closed="both")], "float",
          "beta-NLL weight of the variance heads (Seitzer et al. 2022): each point's "
          "log-likelihood is weighted by its predicted variance to the power beta "
          "(constant for the gradient); 0 is the plain Gaussian likelihood. Used "
          "only with noise_std='learn'."),
)
"""Regression-only parameters: the weight prior's scale (none: maximum likelihood) and
options of the variance heads."""

NOISE = "heads"
"""Learned regression noise comes from per-member variance heads."""


class EnsembleState(NamedTuple):
    """Member parameters ``(M, ...)``, Adam moments, last objective ``(M,)``, step index,
    and a method's cached regulariser (ifBDE: the gradient and value of its last W2
    evaluation; None for the deep ensemble)."""

    params: Params
    adam: AdamState
    log_post: Tensor
    step: int
    regularizer: tuple | None = None


class EnsembleInfo(NamedTuple):
    """Per-member objective (log posterior per datum) and gradient norm, ``(M,)`` each."""

    objective: Tensor
    grad_norm: Tensor


def init(
    params: Params, batch: Batch | None = None, gen: torch.Generator | None = None, *,
    anchor_std: float | None = None,
) -> EnsembleState:
    """Members at ``params`` (one independent initialisation per member); with
    ``anchor_std`` each also gets its anchor (:func:`.anchored.draw`, from ``gen``),
    stored with its parameters. Adam moments cover the trainable entries only."""
    own = anchors.split(params)[0]
    if anchor_std is not None:
        if gen is None:
            raise ValueError("anchored=True draws the anchors from a generator: pass gen.")
        params = {**params, **anchors.draw(params, anchor_std, gen)}
    n = next(iter(params.values())).shape[0]
    return EnsembleState(params, adam_init(own), torch.full((n,), float("nan")), 0)


def update(
    state: EnsembleState, batch: Batch, gen: torch.Generator, *, log_posterior,
    n_data: int, learning_rate: Schedule,
) -> tuple[EnsembleState, EnsembleInfo]:
    """One Adam step of every member up its log posterior per datum; pure. Reserved
    entries (anchors) are inputs of the objective, never moved."""
    own, fixed = anchors.split(state.params)
    grads, log_post = grad_and_value(lambda p, b: log_posterior({**p, **fixed}, b), own, batch)
    grads = {k: g / n_data for k, g in grads.items()}
    grad_norm = sum(g.reshape(len(g), -1).pow(2).sum(-1) for g in grads.values()).sqrt()
    params, adam = adam_step(own, grads, state.adam, learning_rate(state.step))
    params = {**params, **fixed}
    objective = log_post / n_data
    return EnsembleState(params, adam, objective, state.step + 1), EnsembleInfo(
        objective, grad_norm
    )


def build(
    problem: BayesProblem, *, learning_rate: Schedule, prior_std: float | None = None,
    anchored: bool = False,
) -> Transform:
    """Bind ``problem``; its prior (``None`` for maximum likelihood) sets the penalty.

    ``prior_std`` is consumed by the estimator, which builds ``problem.prior``;
    it is accepted here so that a method's parameters all reach ``build``. With
    ``anchored`` the penalty is :class:`.anchored.AnchoredPrior` (``prior_std``),
    centred at anchors that ``init`` draws from its generator.
    """
    anchor_std = check_anchored(anchored, prior_std)
    if anchor_std is not None:
        problem = BayesProblem(problem.forward, problem.likelihood,
                               anchors.AnchoredPrior(anchor_std), problem.n_data)
    return Transform(
        partial(init, anchor_std=anchor_std),
        partial(update, log_posterior=make_log_posterior(problem), n_data=problem.n_data,
                learning_rate=learning_rate),
    )


def check_anchored(anchored: bool, prior_std: float | None) -> float | None:
    """The anchors' standard deviation (None without anchors); ``anchored=True``
    needs a Gaussian weight prior.

    Examples
    --------
    >>> check_anchored(True, 0.5), check_anchored(False, 0.5)
    (0.5, None)
    """
    if not anchored:
        return None
    if prior_std is None or isinstance(prior_std, str):
        raise ValueError("anchored=True centres a Gaussian weight prior at a draw from it: "
                         f"it needs a float prior_std. Got prior_std={prior_std!r}.")
    return float(prior_std)
