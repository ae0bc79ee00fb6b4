"""One inference run of a registered method: the problem, the run, the fitted posterior.

The estimators compose these steps (:meth:`skfbnn.estimators._base.BayesianNetBase.fit`):
validate, build the problem here, run it here, store, check. Nothing here knows about
scikit-learn.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..posterior import from_run
from ..priors.build import make_prior
from ..priors.functional import FunctionPrior
from .families import FAMILIES
from .progress import progress_bar
from .registry import MethodSpec
from .run import RunResult
from .types import BayesProblem, member

__all__ = ["Fitted", "build_problem", "infer"]


class Fitted(NamedTuple):
    """What :func:`infer` returns: the run's result and the fitted posterior container."""

    result: RunResult
    posterior: Any


def build_problem(spec: MethodSpec, hyper: dict, network: torch.nn.Module, forward,
                  likelihood, X: torch.Tensor, y: torch.Tensor, n_out: int,
                  gen: torch.Generator, classification: bool,
                  sample_weight: torch.Tensor | None = None,
                  input_shape: tuple[int, ...] | None = None,
                  prior_start=None) -> BayesProblem:
    """The model of method ``spec``: the network's ``forward``, the likelihood (weighted
    by ``sample_weight``, one per row) and the prior
    (:func:`skfbnn.priors.build.make_prior`) on ``n_out`` outputs, fitted to the training
    inputs ``X`` and encoded targets ``y`` where the prior needs data (unweighted);
    ``input_shape`` is the shape of a row inside ``network`` (None: flat rows);
    ``prior_start`` a previous fit's GP prior to start the GP's fit from (``warm_start``)."""
    prior = make_prior(spec.prior, hyper, X, y, n_out, gen, classification, start=prior_start)
    outputs = member(likelihood, "n_outputs")
    n_outputs = None if outputs is None else outputs(n_out)
    return BayesProblem(forward, likelihood, prior, len(X), network=network,
                        sample_weight=sample_weight, n_outputs=n_outputs,
                        input_shape=input_shape)


def infer(spec: MethodSpec, hyper: dict, problem: BayesProblem, params: dict,
          X: torch.Tensor, y: torch.Tensor, gen: torch.Generator, verbose: int = 0) -> Fitted:
    """Build the update rule of ``spec``, run its family's policy from ``params`` and
    collect the posterior of its kind (``hyper["n_samples"]`` fixed draws where that
    kind draws them)."""
    family = FAMILIES[spec.family]
    # The family's policy arguments (e.g. the step size as a schedule) replace the values
    # of the same names.
    transform = spec.build(problem, **{**{name: hyper[name] for name in spec.hyper},
                                       **family.build_kwargs(hyper, len(X))})
    measure = problem.prior.draw_measure if isinstance(problem.prior, FunctionPrior) else None
    with progress_bar(verbose, family.chains, family.n_steps(hyper, len(X))) as progress:
        result = family.run(transform, params, X, y, gen, hyper, problem=problem,
                            measure=measure, progress=progress)
    return Fitted(result, from_run(spec.posterior, result, hyper.get("n_samples", 1), gen))
