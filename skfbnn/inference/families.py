"""Run policies, one per method family, with the estimator parameters they own.

A family says how many parallel parameter sets a fit carries (chains,
members), which run-policy parameters the estimator exposes, how those turn
into the kernel's step-size argument, and how the driver
(:func:`skfbnn.inference.run.run`) is called: samplers burn in and keep every
``thinning``-th state; optimisers and ensembles keep the final state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from typing import NamedTuple

from .._hyper import Param, count_param, param
from .._validation import Interval, StrOptions
from .holdout import BestOnHeldOut, calibrate_heads, gaussian_fit_score, split_rows
from .mh.policy import (
    ACCEPT_REJECT,
    accept_reject_steps,
    run_accept_reject,
    summarize_accept_reject,
)
from .objective import row_weights
from .run import RunResult, run
from .sgmcmc.policy import (
    SAMPLING,
    run_sampler,
    sampler_batch,
    sampler_kwargs,
    sampler_steps,
    summarize_sampler,
)
from .types import Schedule, member
from .vi.meanfield import (
    calibrate_noise,
    early_stopping_param,
    held_out_noise_param,
    variational_tensors,
    with_variational_tensors,
)

__all__ = ["Family", "FAMILIES", "lr_schedule", "optimisation_steps"]

LR_SCHEDULES = ("constant", "cosine")


class Family(NamedTuple):
    """A run policy.

    Attributes
    ----------
    params : tuple of Param
        Run-policy parameters shown on the estimators of this family.
    n_batch : callable
        ``n_batch(hyper) -> int``: the leading dimension (chains, members).
    build_kwargs : callable
        ``build_kwargs(hyper, n_data) -> dict``: the kernel's step-size
        schedule and other policy arguments of ``build``.
    run : callable
        ``run(transform, params, X, y, gen, hyper, **driver_kwargs) -> RunResult``.
    step_name : str
        The parameter to lower when a run diverges.
    n_steps : callable
        ``n_steps(hyper, n_data) -> int``: the number of updates of a fit.
    rows_per_step : callable
        ``rows_per_step(hyper, n_data) -> int``: the rows a step evaluates for each
        parameter set (the minibatch; every row for a full-batch run), for the threads of
        a fit (:func:`skfbnn.device.threads_for_work`).
    summarize : callable or None
        ``summarize(result, hyper) -> dict``: the family's own entries of
        ``diagnostics_`` (e.g. acceptance rates).
    chains : bool
        The run keeps draws of Markov chains (checked by R-hat and ESS); otherwise it
        ends in optimised parameter sets (checked on the objective's trace).
    """

    params: tuple[Param, ...]
    n_batch: Callable[[dict], int]
    build_kwargs: Callable[[dict, int], dict]
    run: Callable[..., RunResult]
    step_name: str
    n_steps: Callable[[dict, int], int]
    rows_per_step: Callable[[dict, int], int]
    summarize: Callable[[RunResult, dict], dict] | None = None
    chains: bool = False


_BATCH = count_param("batch_size", 64, "Minibatch size (full batch when larger than the data).")

def _optimisation(
    n_iter: int, learning_rate: float, min_epochs: int = 0
) -> tuple[Param, ...]:
    """The optimisers' run policy with these defaults (chosen per family on validation
    rows)."""
    return (
        count_param("n_iter", n_iter, "Optimisation steps (Adam), at least (see ``min_epochs``)."),
        count_param("min_epochs", min_epochs,
               "Minimum number of passes over the data: the run takes "
               "``max(n_iter, ceil(min_epochs * n_train / batch_size))`` steps, so large "
               "data sets are not under-trained by a fixed step count.", low=0),
        param("learning_rate", learning_rate, [Interval(Real, 0, None, closed="neither")],
              "float", "Adam step size (peak of the learning-rate schedule)."),
        _BATCH,
        param("lr_schedule", "cosine", [StrOptions(set(LR_SCHEDULES))], "str",
              "'constant', or 'cosine': constant for the first half of the run, then "
              "cosine annealing to zero, so the final iterate settles."),
    )


OPTIMISATION = (
    held_out_noise_param(0.0),
    early_stopping_param(False),
    *_optimisation(n_iter=10000, learning_rate=3e-3),
    count_param("n_samples", 100,
                "Posterior draws fixed at fit time and used for every prediction."),
)

ENSEMBLE = (
    count_param("n_estimators", 5, "Ensemble members, trained together (vectorised)."),
    param("validation_fraction", 0.1, [Interval(Real, 0, 0.5, closed="left")], "float",
          "Fraction of the training rows each member holds out (its own random subset); "
          "the member's parameters with the best held-out log-likelihood, scored 50 "
          "times over the run, are kept. 0 trains every member on all rows to the end."),
    *_optimisation(n_iter=10000, learning_rate=3e-3, min_epochs=100),
)


def lr_schedule(name: str, learning_rate: float, n_iter: int) -> Schedule:
    """``'constant'``, or ``'cosine'``: flat for half the run, then cosine to zero.

    Examples
    --------
    >>> s = lr_schedule("cosine", 1.0, 100)
    >>> s(0), s(50), round(s(75), 3), s(100)
    (1.0, 1.0, 0.5, 0.0)
    """
    if name == "constant":
        return lambda t: learning_rate
    if name != "cosine":
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}. Got {name!r}.")
    half = n_iter / 2

    def schedule(t: int) -> float:
        if t <= half:
            return learning_rate
        return 0.5 * learning_rate * (1 + math.cos(math.pi * min(1.0, (t - half) / half)))

    return schedule


def optimisation_steps(hyper: dict, n_data: int) -> int:
    """``max(n_iter, ceil(min_epochs * n_data / batch_size))``.

    Examples
    --------
    >>> optimisation_steps({"n_iter": 1000, "min_epochs": 100, "batch_size": 64}, 455)
    1000
    >>> optimisation_steps({"n_iter": 1000, "min_epochs": 100, "batch_size": 64}, 5000)
    7813
    """
    batch = min(hyper["batch_size"], n_data)
    return max(hyper["n_iter"], math.ceil(hyper.get("min_epochs", 0) * n_data / batch))


def _optimiser_rows(hyper: dict, n_data: int) -> int:
    return min(hyper["batch_size"], n_data)


def _optimiser_kwargs(hyper: dict, n_data: int) -> dict:
    return {"learning_rate": lr_schedule(hyper["lr_schedule"], hyper["learning_rate"],
                                         optimisation_steps(hyper, n_data))}


def _held_out_run(transform, params, X, y, gen, hyper, problem, checkpoint, **kwargs):
    """The optimiser run on all but ``validation_fraction`` of the rows (each of the
    parameter sets its own); with ``checkpoint`` (``BestOnHeldOut`` keyword arguments, or
    ``{}``) each set's best state on its held-out rows is tracked. Returns the result,
    the held-out rows ``(C, n_val)`` and the monitor (None without ``checkpoint``)."""
    n_sets = next(iter(params.values())).shape[0]
    held_out, pool = split_rows(len(X), n_sets, hyper["validation_fraction"], gen, X.device)
    monitor = None if checkpoint is None else BestOnHeldOut(
        problem, X, y, held_out, optimisation_steps(hyper, len(X)), **checkpoint)
    result = _run_optimiser(transform, params, X, y, gen, hyper, problem, pool=pool,
                            monitor=monitor, **kwargs)
    return result, held_out, monitor


def _run_ensemble(transform, params, X, y, gen, hyper, problem=None, **kwargs) -> RunResult:
    """The optimiser run; with ``validation_fraction`` each member holds out its own rows
    and keeps its parameters with the best held-out log-likelihood, and with
    ``calibrate_variance`` (True or 'auto') its variance heads then get the variance those
    rows call for (:func:`.holdout.calibrate_heads`); True without held-out rows is an error."""
    if not hyper.get("validation_fraction", 0.0):
        if hyper.get("calibrate_variance") is True:
            raise ValueError("calibrate_variance=True fits the heads' variance on each member's "
                             "held-out rows: it needs validation_fraction > 0. Got "
                             f"validation_fraction={hyper['validation_fraction']!r}.")
        return _run_optimiser(transform, params, X, y, gen, hyper, problem, **kwargs)
    result, held_out, monitor = _held_out_run(transform, params, X, y, gen, hyper, problem,
                                              {}, **kwargs)
    best = monitor.best
    if hyper.get("calibrate_variance"):
        weights = row_weights(problem)
        best = calibrate_heads(best, problem, X[held_out], y[held_out],
                               None if weights is None else weights[held_out])
    return result._replace(state=result.state._replace(params=best))


def _run_variational(transform, params, X, y, gen, hyper, problem=None, **kwargs) -> RunResult:
    """The optimiser run; with ``validation_fraction`` (regression with a learned noise)
    the held-out rows then raise the noise of the final ``q`` where they call for more, and
    with ``early_stopping`` ``q`` is the one whose mean fits them best."""
    learned = member(None if problem is None else problem.likelihood, "learned")
    if not hyper.get("validation_fraction", 0.0) or not learned:
        return _run_optimiser(transform, params, X, y, gen, hyper, problem, **kwargs)
    checkpoint = (dict(keep=variational_tensors, score=gaussian_fit_score)
                  if hyper.get("early_stopping") else None)
    result, held_out, monitor = _held_out_run(transform, params, X, y, gen, hyper, problem,
                                              checkpoint, **kwargs)
    state = result.state
    if monitor is not None:
        state = with_variational_tensors(state, monitor.best)
    state = calibrate_noise(state, problem, X[held_out], y[held_out], gen, hyper["n_samples"])
    return result._replace(state=state)


def _run_optimiser(transform, params, X, y, gen, hyper, problem=None, pool=None,
                   **kwargs) -> RunResult:
    return run(transform, params, X, y, gen, n_steps=optimisation_steps(hyper, len(X)), pool=pool,
               batch_size=hyper["batch_size"], step_name="learning_rate",
               weights=row_weights(problem), **kwargs)


FAMILIES: dict[str, Family] = {
    "sgmcmc": Family(SAMPLING, lambda h: h["n_chains"], sampler_kwargs, run_sampler,
                     "step_size", sampler_steps, lambda h, n: min(sampler_batch(h, n), n),
                     summarize_sampler, chains=True),
    "mh": Family(ACCEPT_REJECT, lambda h: h["n_chains"], lambda h, n: {}, run_accept_reject,
                 "step_size", accept_reject_steps, lambda h, n: n, summarize_accept_reject,
                 chains=True),
    "vi": Family(OPTIMISATION, lambda h: 1, _optimiser_kwargs, _run_variational,
                 "learning_rate", optimisation_steps, _optimiser_rows),
    "ensemble": Family(ENSEMBLE, lambda h: h["n_estimators"], _optimiser_kwargs,
                       _run_ensemble, "learning_rate", optimisation_steps, _optimiser_rows),
}
"""The run policies, named as the folders of their update rules. ``mh``
(Metropolis-Hastings) is a full-batch sampler run with an ``adapt`` hook during burn-in
(:mod:`.mh.policy`)."""
