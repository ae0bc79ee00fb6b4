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
from numbers import Integral, Real
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
from .objective import make_log_posterior, row_weights
from .run import RunResult, run
from .schedules import SCHEDULES, make_schedule
from .sgmcmc.curvature import cap_hook
from .sgmcmc.diffusions import update_step
from .types import Schedule, member
from .vi.meanfield import (
    calibrate_noise,
    early_stopping_param,
    held_out_noise_param,
    variational_tensors,
    with_variational_tensors,
)

__all__ = ["Family", "FAMILIES",
           "lr_schedule", "optimisation_steps", "sampler_batch", "sampler_lengths"]

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
    summarize: Callable[[RunResult, dict], dict] | None = None
    chains: bool = False


_BATCH = count_param("batch_size", 64, "Minibatch size (full batch when larger than the data).")

SMALL_DATA_ROWS = 2048
"""Data sets up to this many rows are sampled with ``SMALL_DATA_BATCH`` rows per step."""
SMALL_DATA_BATCH = 256
"""The sampler's ``batch_size="auto"`` on small data sets (nearly the full batch)."""
MIN_BATCH = 64
"""The sampler's ``batch_size="auto"`` above ``SMALL_DATA_ROWS`` rows, on data sets
small enough for ``min_epochs`` passes of this many rows within ``max_steps`` steps."""
MAX_BATCH = 1024
"""The largest batch ``batch_size="auto"`` grows to."""

_SAMPLER_BATCH = param(
    "batch_size", "auto",
    [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")], "int or 'auto'",
    f"Minibatch size (full batch when larger than the data). 'auto': {SMALL_DATA_BATCH} "
    f"rows on data sets of up to {SMALL_DATA_ROWS} rows (less minibatch noise: a chain "
    f"heated by it gave a predictive too wide on small data), else {MIN_BATCH} rows, "
    "grown on large data sets so that ``min_epochs`` passes fit in ``max_steps`` steps "
    f"(at most {MAX_BATCH} rows; see ``sampler_batch``).")

SAMPLING = (
    count_param("n_chains", 8, "Independent chains, vectorised over a leading batch dimension "
           "(8 beat 4 on the validation rows for all four samplers, at about the same "
           "fit time on a CPU)."),
    count_param("n_burnin", 4000, "Steps discarded before the first kept draw (an adaptive "
           "preconditioner adapts during these).", low=0),
    count_param("n_samples", 25, "Draws kept per chain."),
    count_param("thinning", 40, "Steps between kept draws."),
    count_param("min_epochs", 200,
           "Minimum number of passes over the data: when ``n_burnin + n_samples * "
           "thinning`` steps of ``batch_size`` rows cover fewer, ``n_burnin`` and "
           "``thinning`` are stretched by the same factor (see ``sampler_lengths``), so "
           "large data sets are not under-sampled by a fixed step count.", low=0),
    param("max_steps", 20000, [None, Interval(Integral, 1, None, closed="left")], "int or None",
          "Cap on the run length that ``min_epochs`` asks for (the unstretched "
          "``n_burnin + n_samples * thinning`` steps always run); None: no cap."),
    _SAMPLER_BATCH,
    param("schedule", "decay", [StrOptions(set(SCHEDULES))], "str",
          "Step-size schedule: 'constant', 'decay' (x0.9 nine times over the run) or "
          "'cyclical' (cosine cycles)."),
    param("temperature", 1.0, [Interval(Real, 0, None, closed="left")], "float",
          "Posterior temperature multiplying the injected noise (1 = Bayes; below 1 a "
          "'cold' posterior). A learned prior scale (``prior_std='learn'``) is drawn "
          "given the weights in untempered units, so it does not shrink with ``T``; "
          "it needs ``temperature > 0``."),
    param("step_cap", 0.5, [None, Interval(Real, 0, 1, closed="right")], "float or None",
          "With the adaptive preconditioner: the largest step, as a fraction of the "
          "kernel's stability limit in the sharpest direction of the preconditioned log "
          "posterior (SGLD: ``2 / lambda``; SGHMC: ``2 (2 - friction) / lambda``), "
          "measured at the end of burn-in; a chain above it gets its step scaled down "
          "(``skfbnn.inference.sgmcmc.curvature``). Near the limit chains blow up now and "
          "then and the variance of the stiff directions is inflated. None: steps as given."),
)


def sampler_batch(hyper: dict, n_data: int) -> int:
    """The minibatch size of a sampler run on ``n_data`` rows.

    An integer ``batch_size`` is used as given. ``"auto"`` is ``SMALL_DATA_BATCH``
    rows on data sets of up to ``SMALL_DATA_ROWS`` rows; above, ``MIN_BATCH`` rows
    or, when ``min_epochs`` passes of those would take more than ``max_steps``
    steps, the smallest batch with which they take ``max_steps`` (at most
    ``MAX_BATCH``). On the validation rows of the small UCI sets 256 rows (nearly the full
    batch) beat 64 on average for the samplers; on large sets a batch that makes
    ``min_epochs`` passes within ``max_steps`` steps matched doubling the steps at the same
    cost per step, where 64 rows capped at ``max_steps`` underfitted.

    Examples
    --------
    >>> h = {"batch_size": "auto", "min_epochs": 200, "max_steps": 20000}
    >>> sampler_batch(h, 1000), sampler_batch(h, 6400), sampler_batch(h, 32925)
    (256, 64, 330)
    >>> sampler_batch(h, 10**6), sampler_batch({**h, "batch_size": 32}, 10**6)
    (1024, 32)
    """
    batch = hyper["batch_size"]
    if batch != "auto":
        return batch
    if n_data <= SMALL_DATA_ROWS:
        return SMALL_DATA_BATCH
    if not hyper.get("min_epochs") or hyper.get("max_steps") is None:
        return MIN_BATCH
    wanted = math.ceil(hyper["min_epochs"] * n_data / hyper["max_steps"])
    return min(max(MIN_BATCH, wanted), MAX_BATCH)


def sampler_lengths(hyper: dict, n_data: int) -> tuple[int, int]:
    """``(n_burnin, thinning)`` of a sampler run, stretched to ``min_epochs`` passes
    of :func:`sampler_batch` rows.

    Examples
    --------
    >>> h = {"n_burnin": 2000, "n_samples": 25, "thinning": 40, "min_epochs": 100,
    ...      "batch_size": 64, "max_steps": 20000}
    >>> sampler_lengths(h, 455), sampler_lengths(h, 6000), sampler_lengths(h, 40000)
    ((2000, 40), (6250, 125), (13334, 267))
    >>> sampler_lengths({**h, "batch_size": "auto"}, 40000)   # batch 200: 20000 steps
    (13334, 267)
    """
    n_burnin, thinning = hyper["n_burnin"], hyper["thinning"]
    if not hyper.get("min_epochs", 0) or not n_data:
        return n_burnin, thinning
    n_steps = n_burnin + hyper["n_samples"] * thinning
    wanted = hyper["min_epochs"] * n_data / min(sampler_batch(hyper, n_data), n_data)
    if hyper.get("max_steps") is not None:
        wanted = min(wanted, hyper["max_steps"])
    factor = wanted / n_steps
    if factor <= 1:
        return n_burnin, thinning
    return math.ceil(n_burnin * factor), math.ceil(thinning * factor)


def _n_steps(hyper: dict, n_data: int = 0) -> int:
    n_burnin, thinning = sampler_lengths(hyper, n_data)
    return n_burnin + hyper["n_samples"] * thinning


def _sampler_kwargs(hyper: dict, n_data: int) -> dict:
    n_steps = _n_steps(hyper, n_data)
    step = update_step(hyper["step_size"], n_data, hyper.get("preconditioner", "identity"))
    schedule = make_schedule(hyper["schedule"], step, n_steps)
    return {"step_size": schedule, "temperature": hyper["temperature"],
            "n_burnin": sampler_lengths(hyper, n_data)[0]}


GIBBS_EVERY = 50
"""Steps between the Gibbs steps of a prior with resampled hyperparameters
(``prior_std="learn"``). The first comes after half of burn-in: a Gibbs step at the
small initial weights sets a small prior scale that keeps them small (yacht,
SGHMC: the first layer's learned scale ended at 0.40 with Gibbs steps from the
start, at 0.65-0.80 with the first one after half of burn-in)."""


def _step_cap(transform, problem, X, y, gen, hyper, n_burnin, measure=None):
    """The burn-in hook capping each chain's step at ``step_cap`` times the kernel's
    stability limit over its sharpest preconditioned curvature, or None when it does
    not apply."""
    fraction, limit = hyper.get("step_cap"), member(transform, "stability_limit")
    if fraction is None or limit is None or problem is None or not n_burnin \
            or hyper.get("preconditioner") != "adaptive":
        return None
    log_posterior, weights = make_log_posterior(problem), row_weights(problem)
    if weights is not None:  # weighted rows: exact when the cap sees every row
        log_posterior = _with_weights(log_posterior, weights)
    return cap_hook(log_posterior, X, y, gen, cap=fraction * limit,
                    at=n_burnin - 1, measure=measure, until=_n_steps(hyper, len(X)),
                    step_size=_sampler_kwargs(hyper, len(X))["step_size"])


def _with_weights(log_posterior, weights):
    """``log_posterior`` on batches of every row with the rows' weights; a batch of other
    rows (the step cap's random subset above ``CAP_ROWS`` rows) is left unweighted, so the
    cap then measures the curvature of the unweighted posterior."""
    def weighted(params, batch):
        if "w" not in batch and batch["x"].shape[-2] == len(weights):
            batch = {**batch, "w": weights}
        return log_posterior(params, batch)

    return weighted


def _run_sampler(transform, params, X, y, gen, hyper, problem=None, **kwargs) -> RunResult:
    n_burnin, thinning = sampler_lengths(hyper, len(X))
    kwargs["adapt"] = _step_cap(transform, problem, X, y, gen, hyper, n_burnin,
                                kwargs.get("measure"))
    resample = member(None if problem is None else problem.prior, "resample")
    if resample is not None:  # Gibbs steps of the prior's hyperparameters, whole run
        def monitor(step, state):
            if step >= n_burnin // 2 and (step + 1) % GIBBS_EVERY == 0:
                resample(state.params, gen)

        kwargs["monitor"] = monitor
    return run(transform, params, X, y, gen, n_steps=_n_steps(hyper, len(X)),
               batch_size=sampler_batch(hyper, len(X)), n_burnin=n_burnin, thinning=thinning,
               weights=row_weights(problem), **kwargs)


def _summarize_sampler(result: RunResult, hyper: dict) -> dict:
    """``step_scale``: the factor (per chain) by which the curvature cap scaled the
    step; absent when no cap was applied."""
    scale = member(member(result.state, "preconditioner"), "scale")
    return {} if scale is None else {"step_scale": scale.cpu().numpy()}


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
    "sgmcmc": Family(SAMPLING, lambda h: h["n_chains"], _sampler_kwargs, _run_sampler,
                     "step_size", _n_steps, _summarize_sampler, chains=True),
    "mh": Family(ACCEPT_REJECT, lambda h: h["n_chains"], lambda h, n: {}, run_accept_reject,
                 "step_size", accept_reject_steps, summarize_accept_reject, chains=True),
    "vi": Family(OPTIMISATION, lambda h: 1, _optimiser_kwargs, _run_variational,
                 "learning_rate", optimisation_steps),
    "ensemble": Family(ENSEMBLE, lambda h: h["n_estimators"], _optimiser_kwargs,
                       _run_ensemble, "learning_rate", optimisation_steps),
}
"""The run policies, named as the folders of their update rules. ``mh``
(Metropolis-Hastings) is a full-batch sampler run with an ``adapt`` hook during burn-in
(:mod:`.mh.policy`)."""
