"""Initialisation, shared hyperparameters and ``build`` of the wide-network samplers."""

from __future__ import annotations

import math
from functools import partial
from numbers import Real

import torch
from torch import Tensor

from ..._hyper import Param, param
from ..._validation import Interval, StrOptions
from ...likelihoods import GaussianLikelihood
from ...nn.functional import Params
from ..types import Batch, BayesProblem, Transform, member
from .body import ntk_layout
from .kernel import MHState, Proposal, evaluate, update
from .noise import empirical_bayes_log_noise
from .onehot import ShiftedOneHotGaussian
from .target import FEATURES_DTYPE, WideNetTarget

__all__ = ["ARCHITECTURE", "NTK_HYPER", "CLASSIFICATION_HYPER", "step_hyper", "init", "build_mh",
           "prior_draws", "gaussian_targets", "classification_likelihood"]


ARCHITECTURE = {"hidden_layer_sizes": (50, 50), "activation": "gelu"}
"""The family's network defaults (the library's are one tanh layer of 50): two GELU layers
of 50, the paper's activation. Chosen on validation rows of five UCI sets (pCNL, splits 0-1):
with the NTK prior's small biases (``sigma_b = 0.1``)
one tanh layer puts every kink near the origin and cannot follow yacht's steep rise (validation
RMSE 8.5); GELU alone gained on all five sets, a second layer again on all five."""


def _scale(name: str, default: float, doc: str) -> Param:
    return param(name, default, [Interval(Real, 0, None, closed="left")], "float", doc)


NTK_HYPER = (
    _scale("sigma_w", math.sqrt(2.0), "Hidden-layer weight scale of the NTK "
           "parameterisation: a layer with fan-in n computes ``sigma_w / sqrt(n) * W h + "
           "sigma_b * b`` with every entry of W and b standard normal a priori."),
    _scale("sigma_b", 0.1, "Hidden-layer bias scale."),
    _scale("sigma_w_out", 1.0, "Readout weight scale."),
    _scale("sigma_b_out", 0.1, "Readout bias scale."),
    param("reparametrize", True, ["boolean"], "bool",
          "Sample the readout in the data-dependent coordinates of Hron et al. (2022), "
          "in which the posterior tends to N(0, I) as the width grows."),
    param("marginalize_readout", False, ["boolean"], "bool",
          "Run the Metropolis-Hastings step on the hidden weights only (on the "
          "readout's negative log marginal likelihood) and draw the readout exactly "
          "from its conditional posterior at every step."),
)
"""Estimator parameters shared by pCN, pCNL and MALA."""

CLASSIFICATION_HYPER = (
    param("noise_std", 0.1, [Interval(Real, 0, None, closed="neither")], "float",
          "Std of the Gaussian likelihood of the shifted one-hot targets "
          "``onehot(y) - 1/K`` (the paper's 0.1); see ``predict_proba``."),
    param("proba", "argmax", [StrOptions({"clip", "argmax"})], "str",
          "How a draw's outputs become class probabilities: 'argmax' (the probability "
          "under the Gaussian noise that the class's output is the largest; better "
          "calibrated, the benchmarks page) or 'clip' (``f + 1/K`` clipped at 1e-3 and "
          "renormalised); ``predict_proba`` averages them over draws."),
)
"""Classifier parameters: classification is Gaussian regression on one-hot targets."""


def classification_likelihood(hyper: dict) -> ShiftedOneHotGaussian:
    """The classifiers' likelihood (:mod:`.onehot`)."""
    return ShiftedOneHotGaussian(hyper["noise_std"], hyper.get("proba", "argmax"))


def step_hyper(step: float, step_doc: str, target: float, bounded: bool) -> tuple[Param, ...]:
    """``step_size``, ``adapt_step_size`` and ``target_accept`` with these defaults."""
    high = Interval(Real, 0, 1, closed="right") if bounded else Interval(
        Real, 0, None, closed="neither")
    return (
        param("step_size", step, [high], "float", step_doc),
        param("adapt_step_size", True, ["boolean"], "bool",
              "Tune ``step_size`` during burn-in towards ``target_accept`` (Robbins-Monro "
              "on its logarithm); it is frozen afterwards, so the kept chain is a valid "
              "Metropolis-Hastings chain."),
        param("target_accept", target, [Interval(Real, 0, 1, closed="neither")], "float",
              "Mean acceptance probability aimed at by the burn-in adaptation."),
    )


def gaussian_targets(problem: BayesProblem, y: Tensor) -> Tensor:
    """Targets ``(n, k)`` of the Gaussian likelihood (one-hot coded labels for the
    classification likelihood, which defines ``targets``)."""
    make = member(problem.likelihood, "targets")
    return make(y) if make is not None else y


def _check_problem(problem: BayesProblem) -> None:
    if problem.network is None:
        raise ValueError("The Metropolis-Hastings samplers need problem.network (an "
                         "nn.Sequential ending in nn.Linear).")
    if not isinstance(problem.likelihood, (GaussianLikelihood, ShiftedOneHotGaussian)):
        raise ValueError(
            "The Metropolis-Hastings samplers need a Gaussian likelihood with one noise "
            f"level per output. Got {type(problem.likelihood).__name__}."
        )


def _target(problem: BayesProblem, batch: Batch, device: torch.device, *, sigma_w: float,
            sigma_b: float, sigma_w_out: float, sigma_b_out: float, reparametrize: bool,
            marginalize_readout: bool, dual: bool | None = None) -> WideNetTarget:
    """The target of ``problem`` on the (full) batch, in float64 (float32 on MPS), with
    its features in :data:`~.target.FEATURES_DTYPE`."""
    _check_problem(problem)
    dtype = torch.float32 if device.type == "mps" else torch.float64
    layout = ntk_layout(problem.network, sigma_w, sigma_b, sigma_w_out, sigma_b_out,
                        input_shape=problem.input_shape)
    X = batch["x"].to(dtype)
    Y = gaussian_targets(problem, batch["y"]).to(dtype)
    log_noise = problem.likelihood.log_noise
    if log_noise is not None:
        log_noise = torch.as_tensor(log_noise, dtype=dtype, device=device).reshape(-1).expand(
            Y.shape[1])
    weights = batch.get("w")
    return WideNetTarget(layout, X, Y, log_noise, reparametrize=reparametrize,
                         marginalize_readout=marginalize_readout, dual=dual,
                         weights=None if weights is None else weights.to(dtype),
                         features_dtype=FEATURES_DTYPE)


def prior_draws(problem: BayesProblem, batch: Batch, params: Params, gen: torch.Generator,
                **ntk) -> Params:
    """Starting parameters of the chains (the family's choice): a draw of the
    reference measure ``N(0, I)`` in the sampler's coordinates, i.e. prior draws of
    the hidden entries and (with the reparametrisation) the readout drawn from its
    conditional posterior, so that no chain starts far out in the tails of the
    whitened readout; a learned noise starts at its empirical-Bayes value on the
    features (:mod:`.noise`). Same keys, shapes and dtype as ``params``."""
    first = next(iter(params.values()))
    target = _target(problem, batch, first.device, **ntk)
    X, C = target.X, first.shape[0]
    phi = torch.randn((C, target.n_dim), generator=gen, device=X.device, dtype=X.dtype)
    phi_out = None
    if target.marginalize_readout:
        phi_out = torch.randn((C, *target.readout_shape), generator=gen, device=X.device,
                              dtype=X.dtype)
    if target.n_noise:
        hidden, _ = target.split(phi, phi_out)
        eb = empirical_bayes_log_noise(target.features(hidden).to(X.dtype), target.Y,
                                       target.extra_rows)
        phi[:, : target.n_noise] = target.whiten_log_noise(eb)
    draws = target.params(phi, phi_out, first.dtype)
    return {k: draws[k].clone() for k in params}


def init(params: Params, batch: Batch, gen: torch.Generator | None = None, *,
         problem: BayesProblem, proposal: Proposal, step_size: float,
         dual: bool | None = None, **ntk) -> MHState:
    """Chains started at ``params`` (mapped to the whitened coordinates).

    ``params`` also gives the number of chains, the device and the dtype of the
    reported parameters; the chains compute in float64 (float32 on MPS).
    """
    first = next(iter(params.values()))
    target = _target(problem, batch, first.device, dual=dual, **ntk)
    phi, phi_out = target.whiten(params)
    potential, grad = evaluate(target, phi, proposal.needs_grad)
    log_step = torch.tensor(math.log(step_size), dtype=phi.dtype, device=phi.device)
    return MHState(phi, phi_out, potential, grad, log_step, 0, target, first.dtype,
                   proposal.max_step, params)


def build_mh(problem: BayesProblem, *, proposal: Proposal, step_size: float,
             adapt_step_size: bool = True, target_accept: float = 0.5,
             sigma_w: float = math.sqrt(2.0), sigma_b: float = 0.1,
             sigma_w_out: float = 1.0, sigma_b_out: float = 0.1,
             reparametrize: bool = True, marginalize_readout: bool = False,
             dual: bool | None = None) -> Transform:
    """Bind ``problem`` and hyperparameters into a :class:`Transform`.

    ``adapt_step_size`` and ``target_accept`` are run policy: the driver's burn-in
    hook (:func:`~.kernel.adapt_step`) uses them, the kernel does not. ``dual``
    forces the ``n x n`` (True) or ``p x p`` (False) factorisation (benchmarks).
    """
    return Transform(
        partial(init, problem=problem, proposal=proposal, step_size=step_size,
                sigma_w=sigma_w, sigma_b=sigma_b, sigma_w_out=sigma_w_out,
                sigma_b_out=sigma_b_out, reparametrize=reparametrize,
                marginalize_readout=marginalize_readout, dual=dual),
        partial(update, proposal=proposal),
    )
