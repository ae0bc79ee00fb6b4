"""The Metropolis-Hastings run policy: full-batch steps from prior draws, burn-in with
step-size adaptation and noise refreshes, thinning; and its ``diagnostics_`` entries.
Registered as the ``accept_reject`` family in :mod:`skfbnn.inference.families`.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch

from ..._hyper import count_param
from ..objective import row_weights
from ..run import RunResult, run
from . import kernel  # looked up per call: tests replace kernel.refresh_noise
from .build import NTK_HYPER, prior_draws

__all__ = ["ACCEPT_REJECT", "accept_reject_steps", "run_accept_reject",
           "summarize_accept_reject"]

ACCEPT_REJECT = (
    count_param("n_chains", 4, "Independent chains, vectorised over a leading batch dimension."),
    count_param("n_burnin", 1000, "Full-batch Metropolis-Hastings steps discarded before the "
           "first kept draw (the step size adapts during these).", low=0),
    count_param("n_samples", 100, "Draws kept per chain."),
    count_param("thinning", 10, "Steps between kept draws."),
)
"""The Metropolis-Hastings run policy: full-batch steps, burn-in, thinning."""


def accept_reject_steps(hyper: dict, n_data: int = 0) -> int:
    return hyper["n_burnin"] + hyper["n_samples"] * hyper["thinning"]


def run_accept_reject(transform, params, X, y, gen, hyper, problem=None, **kwargs
                       ) -> RunResult:
    """Full-batch run from prior draws (:func:`~.build.prior_draws`); with
    ``adapt_step_size`` the step is tuned during burn-in only. Row weights
    (``weights``, ``sample_weight``) enter the target exactly (:mod:`.target`)."""
    weights = row_weights(problem)
    if problem is not None:
        ntk = {p.name: hyper[p.name] for p in NTK_HYPER}
        batch = {"x": X, "y": y}
        if weights is not None:
            batch["w"] = weights
        params = prior_draws(problem, batch, params, gen, **ntk)
    step = (partial(kernel.adapt_step, target_accept=hyper["target_accept"])
            if hyper.get("adapt_step_size") else None)

    def adapt(state, info, i):
        state = kernel.refresh_noise(state, i)
        return state if step is None else step(state, info, i)

    return run(transform, params, X, y, gen, n_steps=accept_reject_steps(hyper),
               batch_size=len(X), n_burnin=hyper["n_burnin"], thinning=hyper["thinning"],
               adapt=adapt, weights=weights, **kwargs)


def summarize_accept_reject(result: RunResult, hyper: dict) -> dict:
    """Per-chain acceptance rate after burn-in and the final (frozen) step size."""
    kept = slice(hyper["n_burnin"], None)
    accepted = result.trace["accepted"][kept]
    rate = accepted.mean(0) if len(accepted) else torch.full_like(accepted[0:1].sum(0), math.nan)
    kept_steps = hyper["n_burnin"] + hyper["thinning"] * (1 + np.arange(hyper["n_samples"])) - 1
    return {
        "acceptance_rate": rate.cpu().numpy(),
        "kept_steps": kept_steps,
        "trace": {name: values.cpu().numpy() for name, values in result.trace.items()},
        "burnin_acceptance_rate":
            result.trace["accepted"][: hyper["n_burnin"]].mean(0).cpu().numpy(),
        "step_size": float(result.trace["step_size"][-1, 0]),
    }
