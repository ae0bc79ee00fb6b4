"""The stochastic-gradient MCMC run policy: the minibatch and run length (stretched to
``min_epochs`` passes), the step-size schedule, the burn-in hooks (the curvature cap,
Gibbs steps of a prior's hyperparameters), thinning; and its ``diagnostics_`` entries.
Registered as the ``sgmcmc`` family in :mod:`skfbnn.inference.families`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from ..._hyper import count_param, param
from ..._validation import Interval, StrOptions
from ..objective import make_log_posterior, row_weights
from ..run import RunResult, run
from ..schedules import SCHEDULES, make_schedule
from ..types import member
from .curvature import cap_hook
from .diffusions import update_step

__all__ = ["GIBBS_EVERY", "MAX_BATCH", "MIN_BATCH", "SAMPLING", "SMALL_DATA_BATCH",
           "SMALL_DATA_ROWS", "run_sampler", "sampler_batch", "sampler_kwargs",
           "sampler_lengths", "sampler_steps", "summarize_sampler"]

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


def sampler_steps(hyper: dict, n_data: int = 0) -> int:
    n_burnin, thinning = sampler_lengths(hyper, n_data)
    return n_burnin + hyper["n_samples"] * thinning


def sampler_kwargs(hyper: dict, n_data: int) -> dict:
    n_steps = sampler_steps(hyper, n_data)
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
                    at=n_burnin - 1, measure=measure, until=sampler_steps(hyper, len(X)),
                    step_size=sampler_kwargs(hyper, len(X))["step_size"])


def _with_weights(log_posterior, weights):
    """``log_posterior`` on batches of every row with the rows' weights; a batch of other
    rows (the step cap's random subset above ``CAP_ROWS`` rows) is left unweighted, so the
    cap then measures the curvature of the unweighted posterior."""
    def weighted(params, batch):
        if "w" not in batch and batch["x"].shape[-2] == len(weights):
            batch = {**batch, "w": weights}
        return log_posterior(params, batch)

    return weighted


def run_sampler(transform, params, X, y, gen, hyper, problem=None, **kwargs) -> RunResult:
    n_burnin, thinning = sampler_lengths(hyper, len(X))
    kwargs["adapt"] = _step_cap(transform, problem, X, y, gen, hyper, n_burnin,
                                kwargs.get("measure"))
    resample = member(None if problem is None else problem.prior, "resample")
    if resample is not None:  # Gibbs steps of the prior's hyperparameters, whole run
        def monitor(step, state):
            if step >= n_burnin // 2 and (step + 1) % GIBBS_EVERY == 0:
                resample(state.params, gen)

        kwargs["monitor"] = monitor
    return run(transform, params, X, y, gen, n_steps=sampler_steps(hyper, len(X)),
               batch_size=sampler_batch(hyper, len(X)), n_burnin=n_burnin, thinning=thinning,
               weights=row_weights(problem), **kwargs)


def summarize_sampler(result: RunResult, hyper: dict) -> dict:
    """``step_scale``: the factor (per chain) by which the curvature cap scaled the
    step; absent when no cap was applied."""
    scale = member(member(result.state, "preconditioner"), "scale")
    return {} if scale is None else {"step_scale": scale.cpu().numpy()}
