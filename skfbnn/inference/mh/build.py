"""Initialisation, shared hyperparameters and ``build`` of the wide-network samplers."""

from __future__ import annotations

import math
from functools import partial
from numbers import Real

import torch
from torch import Tensor

from ..._validation import Interval
from ...nn.functional import Params
from ..hyper import Param, param
from ..types import Batch, BayesProblem, Transform
from .kernel import MHState, Proposal, evaluate, update
from .noise import empirical_bayes_log_noise
from .ntk import NTKLayout
from .onehot import ShiftedOneHotGaussian
from .target import WideNetTarget

__all__ = ["NTK_HYPER", "CLASSIFICATION_HYPER", "step_hyper", "init", "build_mh",
           "gaussian_targets", "classification_likelihood"]


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
)
"""Classifier parameters: classification is Gaussian regression on one-hot targets."""


def classification_likelihood(hyper: dict) -> ShiftedOneHotGaussian:
    """The classifiers' likelihood (:mod:`.onehot`)."""
    return ShiftedOneHotGaussian(hyper["noise_std"])


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
    make = getattr(problem.likelihood, "targets", None)
    return make(y) if make is not None else y


def _check_problem(problem: BayesProblem) -> None:
    if getattr(problem, "network", None) is None:
        raise ValueError("The Metropolis-Hastings samplers need problem.network (an MLP).")
    if not hasattr(problem.likelihood, "log_noise"):
        raise ValueError(
            "The Metropolis-Hastings samplers need a Gaussian likelihood with one noise "
            f"level per output. Got {type(problem.likelihood).__name__}."
        )


def init(params: Params, batch: Batch, gen: torch.Generator, *, problem: BayesProblem,
         proposal: Proposal, step_size: float, sigma_w: float, sigma_b: float,
         sigma_w_out: float, sigma_b_out: float, reparametrize: bool,
         marginalize_readout: bool, dual: bool | None = None) -> MHState:
    """Chains started at prior draws of the weights; a learned noise starts at its
    empirical-Bayes value (:mod:`.noise`) and is then sampled (:mod:`.target`).

    ``params`` gives the number of chains, the device and the dtype of the reported
    parameters; the chains compute in float64 (float32 on MPS).
    """
    _check_problem(problem)
    first = next(iter(params.values()))
    C, device = first.shape[0], first.device
    dtype = torch.float32 if device.type == "mps" else torch.float64
    layout = NTKLayout.from_network(problem.network, sigma_w, sigma_b, sigma_w_out,
                                    sigma_b_out)
    X = batch["x"].to(dtype)
    Y = gaussian_targets(problem, batch["y"]).to(dtype)
    hidden = torch.randn((C, layout.n_hidden), generator=gen, device=device, dtype=dtype)
    phi_out = torch.randn((C, layout.n_features, Y.shape[1]), generator=gen, device=device,
                          dtype=dtype)
    log_noise = problem.likelihood.log_noise
    if log_noise is not None:
        log_noise = torch.as_tensor(log_noise, dtype=dtype, device=device).reshape(-1).expand(
            Y.shape[1])
    target = WideNetTarget(layout, X, Y, log_noise, reparametrize=reparametrize,
                           marginalize_readout=marginalize_readout, dual=dual)
    parts = [hidden] if marginalize_readout else [hidden, phi_out.flatten(1)]
    if log_noise is None:  # learned: start every chain at the empirical-Bayes noise
        eb = empirical_bayes_log_noise(layout.features(hidden, X), Y)
        parts.insert(0, target.whiten_log_noise(eb).expand(C, -1))
    phi = torch.cat(parts, 1)
    potential, grad = evaluate(target, phi, proposal.needs_grad)
    log_step = torch.tensor(math.log(step_size), dtype=dtype, device=device)
    return MHState(phi, phi_out if marginalize_readout else None, potential, grad,
                   log_step, 0, target, first.dtype, proposal.max_step)


def build_mh(problem: BayesProblem, proposal: Proposal, *, step_size: float,
             sigma_w: float = math.sqrt(2.0), sigma_b: float = 0.1,
             sigma_w_out: float = 1.0, sigma_b_out: float = 0.1,
             reparametrize: bool = True, marginalize_readout: bool = False,
             dual: bool | None = None, **policy) -> Transform:
    """Bind ``problem`` and hyperparameters into a :class:`Transform`.

    ``policy`` takes the run-policy parameters the driver uses instead
    (``adapt_step_size``, ``target_accept``), which the kernel ignores.
    """
    return Transform(
        partial(init, problem=problem, proposal=proposal, step_size=step_size,
                sigma_w=sigma_w, sigma_b=sigma_b, sigma_w_out=sigma_w_out,
                sigma_b_out=sigma_b_out, reparametrize=reparametrize,
                marginalize_readout=marginalize_readout, dual=dual),
        partial(update, proposal=proposal),
    )
