"""The diagnostics of a finished run: what ``diagnostics_`` holds and the checks that raise.

Chains (SG-MCMC, Metropolis-Hastings) are checked on their log-posterior trace and on the
split R-hat and ESS of predictions at probe rows; optimisations (variational inference,
ensembles) on their objective's trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from ..device import to_numpy
from ..exceptions import SamplerDivergenceWarning, divergence_error
from .advice import FitAdvice
from .checks import (
    SamplerWarning,
    collapsed_chains,
    lagging_chains,
    optimisation_warnings,
    predictive_mixing,
)

__all__ = ["N_PROBE", "probe_rows", "chain_diagnostics", "optimisation_diagnostics"]

N_PROBE = 64
"""Training rows at which predictions are monitored (R-hat, ESS)."""


def probe_rows(n_rows: int) -> np.ndarray:
    """Up to :data:`N_PROBE` evenly spaced training rows.

    Examples
    --------
    >>> probe_rows(5).tolist()
    [0, 1, 2, 3, 4]
    >>> len(probe_rows(10_000))
    64
    """
    return np.unique(np.linspace(0, n_rows - 1, N_PROBE).round().astype(int))


def chain_diagnostics(trace: torch.Tensor, n_burnin: int, shape: tuple[int, int],
                      n_rows: int, probe_moments: Callable[[np.ndarray], tuple],
                      n_jitter_escalations: int = 0,
                      step_name: str = "step_size") -> dict[str, Any]:
    """The checks of a sampler run.

    Parameters
    ----------
    trace : Tensor of shape (n_steps, n_chains)
        The log posterior of every chain at every step.
    n_burnin : int
        Steps of burn-in (the trace after them is the sampling phase).
    shape : (n_chains, n_draws)
        The kept draws.
    n_rows : int
        Training rows.
    probe_moments : callable
        ``probe_moments(rows) -> (f, total_var)``: draws of the predictive mean at those
        training rows ``(D, n, k)`` and the total predictive variance there ``(n, k)``.
    n_jitter_escalations : int
        Jitter escalations a functional prior needed (0: none, or no functional prior).
    step_name : str
        The step parameter named in the messages.

    Raises
    ------
    SamplerDivergenceError
        When a chain ended with a log posterior more than 100 times below its start.
    """
    n_chains, n_draws = shape
    probe = probe_rows(n_rows)
    diagnostics: dict[str, Any] = {"log_posterior": to_numpy(trace), "probe_indices": probe,
                                   "warnings": []}
    collapsed = collapsed_chains(diagnostics["log_posterior"], n_burnin)
    if collapsed:
        raise divergence_error(
            step_name, f"chain(s) {collapsed} ended with a log posterior more than 100 times "
            "below their starting value (weights thrown to enormous values)")
    sampling = diagnostics["log_posterior"][n_burnin:]
    lagging = lagging_chains(sampling) if n_chains >= 2 and len(sampling) else []
    if lagging:
        diagnostics["warnings"].append(SamplerWarning(
            "divergence",
            f"chain(s) {lagging} have a log posterior far below the others during "
            "sampling (escaped to a region of negligible mass, e.g. a blown-up "
            "noise or weights); reduce step_size or raise friction.",
            extra={"chains": lagging},
        ))
    if n_jitter_escalations:
        diagnostics["warnings"].append(SamplerWarning(
            "jitter",
            f"the prior covariance needed {n_jitter_escalations} jitter "
            "escalation(s); consider a larger prior_nugget.",
            extra={"n_escalations": n_jitter_escalations},
        ))
    if n_chains >= 2 and n_draws >= 4:
        f, total_var = probe_moments(probe)
        summary, found = predictive_mixing(to_numpy(f).reshape(n_chains, n_draws, -1),
                                           to_numpy(total_var).reshape(-1))
        diagnostics.update(summary)
        diagnostics["warnings"].extend(found)
    return diagnostics


def optimisation_diagnostics(trace: dict[str, torch.Tensor], bounded_likelihood: bool,
                             step_name: str = "learning_rate",
                             advice: FitAdvice | None = None) -> dict[str, Any]:
    """The checks of an optimisation run: the objective's trace and its warnings.

    With a bounded likelihood (classification) the check on the predictions cannot see
    weights thrown to enormous values whose averaged probabilities stay moderate, so the
    objective itself is checked too: a run ending more than 100 times below its start
    over the second half of the trace raises :class:`OptimisationDivergenceError`. An
    objective that fell well below its best (the ``"divergence"`` warning of
    :func:`~skfbnn.diagnostics.optimisation_warnings`) is issued as a
    :class:`~skfbnn.exceptions.SamplerDivergenceWarning` naming the likely causes
    (``advice``, a :class:`~skfbnn.diagnostics.advice.FitAdvice`).
    """
    values = {name: to_numpy(v) for name, v in trace.items()}
    objective = next(iter(values.values()))
    if bounded_likelihood:
        collapsed = collapsed_chains(objective, len(objective) // 2)
        if collapsed:
            raise divergence_error(
                step_name, f"run(s) {collapsed} ended with an objective more than 100 times "
                "below their starting value (weights or scales thrown to enormous values)")
    advice = advice or FitAdvice(step_name)
    found = [replace(w, message=f"{w.message} {advice.causes(run=False)}",
                     category=SamplerDivergenceWarning) if w.kind == "divergence" else w
             for w in optimisation_warnings(objective)]
    return {"objective": objective, "trace": values, "warnings": found}
