"""Fit-time checks built on the convergence diagnostics: the warnings a fit reports.

:func:`summarize` turns R-hat and ESS of monitored quantities into
:class:`SamplerWarning` records; the other checks look at the log-posterior
trace (lagging or collapsed chains), an optimiser's objective, and the
predictive draws (spread across chains, Monte-Carlo error of the mean).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .convergence import ess_bulk, ess_tail, split_rhat

__all__ = ["DISAGREEMENT_LIMIT", "MC_ERROR_LIMIT", "SamplerWarning", "summarize",
           "lagging_chains", "optimisation_warnings", "predictive_spread",
           "predictive_mixing", "collapsed_chains"]

DISAGREEMENT_LIMIT = 0.5
"""Chains whose predictive means differ by more than this many predictive std."""
MC_ERROR_LIMIT = 0.2
"""Monte-Carlo standard error of the predictive mean above this many predictive std."""


@dataclass(frozen=True)
class SamplerWarning:
    """A sampler or convergence problem to be reported to the user.

    Parameters
    ----------
    kind : str
        Category, e.g. ``"rhat"``, ``"ess"``, ``"divergence"`` or ``"jitter"``.
    message : str
        Human-readable explanation including a suggested remedy.
    level : str, default="warning"
        Severity, e.g. ``"info"``, ``"warning"`` or ``"error"``.
    extra : dict, default={}
        Machine-readable details (thresholds, observed values, counts).
    category : type of Warning or None, default=None
        If set, ``fit`` also issues the message as a Python warning of this
        category (for problems that must not go unnoticed without ``verbose``).
    """

    kind: str
    message: str
    level: str = "warning"
    extra: dict = field(default_factory=dict)
    category: type[Warning] | None = None



def _nan_reduce(values: np.ndarray, func: Any) -> float:
    """Apply ``func`` to the non-NaN entries; NaN if there are none."""
    finite = values[~np.isnan(values)]
    return float(func(finite)) if finite.size else float("nan")


def summarize(
    draws: Any,
    *,
    rhat_threshold: float = 1.01,
    min_ess_per_chain: float = 100,
    label: str = "quantities",
) -> tuple[dict[str, Any], list[SamplerWarning]]:
    """Compute R-hat and ESS for all elements and collect convergence warnings.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, *event_shape)
        Draws of monitored quantities, e.g. predictions at probe inputs.
    rhat_threshold : float, default=1.01
        An ``"rhat"`` warning is issued if the largest R-hat exceeds this
        (only with ``n_chains >= 2``).
    min_ess_per_chain : float, default=100
        An ``"ess"`` warning is issued if the smallest bulk or tail ESS is
        below ``min_ess_per_chain * n_chains``, or if ESS is undefined (NaN)
        for some element (constant or non-finite draws, too few draws).
    label : str, default="quantities"
        Name of the monitored elements used in the messages.

    Returns
    -------
    summary : dict
        ``"r_hat"``, ``"ess_bulk"``, ``"ess_tail"`` (arrays of shape
        event_shape) and the NaN-ignoring scalars ``"max_r_hat"``,
        ``"min_ess_bulk"``, ``"min_ess_tail"`` (NaN if all are NaN).
    warnings : list of SamplerWarning
        At most one ``"rhat"`` and one ``"ess"`` warning.
    """
    x = np.asarray(draws, dtype=float)
    n_chains = x.shape[0]
    n_elem = int(np.prod(x.shape[2:], dtype=int))
    r_hat = np.asarray(split_rhat(x))
    bulk = np.asarray(ess_bulk(x))
    tail = np.asarray(ess_tail(x))
    summary: dict[str, Any] = {"r_hat": r_hat, "ess_bulk": bulk, "ess_tail": tail}
    summary["max_r_hat"] = _nan_reduce(r_hat, np.max)
    summary["min_ess_bulk"] = _nan_reduce(bulk, np.min)
    summary["min_ess_tail"] = _nan_reduce(tail, np.min)
    warnings: list[SamplerWarning] = []
    max_rhat = summary["max_r_hat"]
    if n_chains >= 2 and max_rhat > rhat_threshold:
        n_bad = int(np.sum(r_hat > rhat_threshold))
        message = (
            f"max R-hat {max_rhat:.3g} > {rhat_threshold:g} over {n_elem} {label} "
            f"({n_bad} above threshold): chains have not mixed; increase n_burnin "
            "or n_samples"
        )
        extra = {"max_r_hat": max_rhat, "threshold": rhat_threshold}
        extra.update(n_above=n_bad, n_elements=n_elem)
        warnings.append(SamplerWarning("rhat", message, extra=extra))
    required = min_ess_per_chain * n_chains
    min_ess = float(np.fmin(summary["min_ess_bulk"], summary["min_ess_tail"]))
    n_undefined = int(np.sum(np.isnan(bulk) | np.isnan(tail)))
    problems = []
    if min_ess < required:  # False when NaN
        problems.append(
            f"min ESS {min_ess:.0f} (bulk {summary['min_ess_bulk']:.0f}, tail "
            f"{summary['min_ess_tail']:.0f}) < {required:g} "
            f"({min_ess_per_chain:g} per chain x {n_chains} chains) over "
            f"{n_elem} {label}: estimates are noisy; increase n_samples (or the "
            "thinning interval) or tune the step size"
        )
    if n_undefined:
        problems.append(
            f"ESS undefined for {n_undefined} of {n_elem} {label} (constant or "
            "non-finite draws, or fewer than 4 draws per chain): the sampler may "
            "be stuck or diverging"
        )
    if problems:
        extra = {k: summary[k] for k in ("min_ess_bulk", "min_ess_tail")}
        extra.update(required=required, n_undefined=n_undefined, n_elements=n_elem)
        warnings.append(SamplerWarning("ess", "; ".join(problems), extra=extra))
    return summary, warnings


def lagging_chains(log_post: np.ndarray, *, tolerance: float = 10.0) -> list[int]:
    """Chains whose log posterior sits far below the others' (escaped or stuck).

    A chain is flagged when its median log posterior over ``log_post`` (shape
    ``(n_steps, n_chains)``, usually the sampling phase) is lower than the median
    of all chains' medians by more than ``tolerance`` times the median
    within-chain standard deviation plus ``tolerance`` nats. Such a chain explores
    a region of negligible posterior mass (for example after a blow-up of the
    learned noise) and can dominate the predictive spread.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> trace = rng.normal(size=(200, 4))
    >>> trace[:, 2] -= 500.0
    >>> lagging_chains(trace)
    [2]
    """
    trace = np.asarray(log_post, dtype=float)
    medians = np.median(trace, axis=0)
    spread = float(np.median(trace.std(axis=0)))
    threshold = np.median(medians) - tolerance * (spread + 1.0)
    return [int(c) for c in np.flatnonzero(medians < threshold)]


def optimisation_warnings(
    objective: np.ndarray, *, rising: float = 0.01, falling: float = 0.1
) -> list[SamplerWarning]:
    """Warnings for an optimisation trace ``(n_steps, n_members)`` (higher is better).

    The trace is cut into blocks of 5% of the run. ``"convergence"``: the
    last block's mean exceeds the one before by more than three standard
    errors *and* by more than ``rising`` of the whole run's progress (still
    climbing steeply at the end: raise ``n_iter``). ``"divergence"``: the last
    block sits more than three standard errors *and* more than ``falling`` of
    the progress below the best block (the objective fell back: lower the
    learning rate). Non-finite values raise earlier, in the driver.

    Examples
    --------
    >>> t = np.linspace(0, 1, 400)[:, None]
    >>> [w.kind for w in optimisation_warnings(t)]
    ['convergence']
    >>> optimisation_warnings(1 - np.exp(-30 * t))
    []
    """
    trace = np.asarray(objective, dtype=float)
    n_steps = len(trace)
    w = max(5, n_steps // 20)
    if n_steps < 4 * w:
        return []
    n_blocks = n_steps // w
    blocks = trace[n_steps - n_blocks * w:].reshape(n_blocks, w, -1)
    means, var = blocks.mean(1), blocks.var(1, ddof=1)
    progress = means[-1] - means[0]
    se_last = np.sqrt((var[-1] + var[-2]) / w)
    climbing = (means[-1] - means[-2] > 3 * se_last) & (
        means[-1] - means[-2] > rising * np.abs(progress))
    best = means.argmax(0)
    cols = np.arange(means.shape[1])
    se_best = np.sqrt((var[-1] + var[best, cols]) / w)
    drop = means[best, cols] - means[-1]
    fell = (drop > 3 * se_best) & (drop > falling * np.abs(means[best, cols] - means[0]))
    checks = [
        ("convergence", climbing, "was still rising steeply at the end of the run; raise "
         "n_iter (or learning_rate)."),
        ("divergence", fell, "fell well below its best during the run."),
    ]
    return [
        SamplerWarning(kind, f"the objective of member(s) {np.flatnonzero(flags).tolist()} "
                       f"{what}", extra={"members": np.flatnonzero(flags).tolist()})
        for kind, flags, what in checks if flags.any()
    ]


def predictive_spread(
    f: Any, noise_std: Any, y: Any, scale: Any = None
) -> np.ndarray:
    """Root-mean-square distance of predictive draws from the targets' mean, per output.

    With ``f`` the function values ``(D, n, k)`` of ``D`` posterior draws at
    the ``n`` training inputs, ``noise_std`` their observation-noise std
    ``(D, 1 or n, k)`` and ``y`` the training targets ``(n, k)``,

    .. math::

        r_k = \\sqrt{\\tfrac{1}{Dn} \\sum_{d,i} \\big[(f_{dik} - \\bar y_k)^2
        + \\sigma_{dik}^2\\big]} \\big/ s_k,

    the RMS of posterior-predictive samples about ``mean(y)`` in units of
    ``scale`` ``s`` (default: the standard deviation of ``y``, which makes the
    ratio independent of the units of ``y``). A fit that explains ``y`` gives
    about 1, a prior-dominated one a few; draws that escaped to a blown-up
    noise or function give orders of magnitude more.

    Parameters
    ----------
    f : array_like of shape (D, n, k)
    noise_std : array_like of shape (D, 1, k) or (D, n, k), or None
        None leaves the noise out (e.g. a noise level fixed by the user).
    y : array_like of shape (n, k)
    scale : array_like of shape (k,), optional

    Returns
    -------
    ndarray of shape (k,)
        ``inf`` where a value is not finite, NaN where the scale is zero.

    Examples
    --------
    >>> y = np.array([[-1.0], [1.0]])
    >>> f = np.zeros((3, 2, 1))                  # every draw predicts mean(y) ...
    >>> predictive_spread(f, np.ones((3, 1, 1)), y)   # ... with noise sd(y)
    array([1.])
    >>> predictive_spread(f, np.full((3, 1, 1), 1e4), y)
    array([10000.])
    >>> predictive_spread(f, None, y)
    array([0.])
    """
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    noise = np.zeros(1) if noise_std is None else np.asarray(noise_std, dtype=float)
    scale = y.std(0) if scale is None else np.asarray(scale, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        dev = ((f - y.mean(0)) / scale) ** 2
        var = np.broadcast_to((noise / scale) ** 2, f.shape)
        ratio = np.sqrt((dev + var).mean(axis=(0, 1)))
    finite = np.isfinite(f).all(axis=(0, 1)) & np.isfinite(var).all(axis=(0, 1))
    return np.where(scale > 0, np.where(finite, ratio, np.inf), np.nan)


def predictive_mixing(
    draws: Any,
    total_var: Any,
    *,
    disagreement_limit: float = DISAGREEMENT_LIMIT,
    mc_error_limit: float = MC_ERROR_LIMIT,
) -> tuple[dict[str, Any], list[SamplerWarning]]:
    """R-hat and ESS of predictions, with warnings that say when they matter.

    Neural-network posteriors are multimodal, and chains of a few dozen draws
    rarely reach R-hat < 1.01 and 100 effective draws per chain
    (:func:`summarize`'s strict thresholds) even when the predictive they
    give is accurate. Both failures are therefore measured in units of the
    predictive standard deviation ``sqrt(total_var)`` at each monitored point:

    - ``chain_disagreement``: the standard deviation of the chains' means,
      i.e. how much the prediction depends on which chain was run (this is
      what a large R-hat means, ``R^2 - 1 ~ between / within`` variance);
    - ``mc_error``: the Monte-Carlo standard error of the predictive mean,
      ``sd(draws) / sqrt(ess_bulk)``.

    An ``"rhat"`` warning is raised when the disagreement exceeds
    ``disagreement_limit`` (0.5: two chains would predict half a predictive
    std apart), an ``"ess"`` warning when the Monte-Carlo error exceeds
    ``mc_error_limit`` (0.2: the 95% Monte-Carlo band of the mean is +-0.4
    predictive std).

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, n_points)
        Draws of the predictive mean at monitored points (function values, or
        class probabilities).
    total_var : array_like of shape (n_points,)
        Total predictive variance there (epistemic plus observation noise; for
        class probabilities ``p (1 - p)``).

    Returns
    -------
    summary : dict
        :func:`summarize`'s entries plus ``chain_disagreement``, ``mc_error``
        (arrays) and their maxima ``max_chain_disagreement``, ``max_mc_error``.
    warnings : list of SamplerWarning

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mixed = rng.normal(size=(4, 50, 3))
    >>> stuck = mixed + np.arange(4)[:, None, None]  # each chain in its own mode
    >>> [w.kind for w in predictive_mixing(mixed, np.ones(3))[1]]
    []
    >>> [w.kind for w in predictive_mixing(stuck, np.full(3, 2.0))[1]]
    ['rhat', 'ess']
    """
    x = np.asarray(draws, dtype=float)
    summary, _ = summarize(x)
    sd = np.sqrt(np.maximum(np.asarray(total_var, dtype=float), 1e-300))
    between = x.mean(axis=1).std(axis=0, ddof=1) if x.shape[0] >= 2 else np.zeros(x.shape[2])
    within = x.reshape(-1, x.shape[2]).std(axis=0)
    disagreement = between / sd
    mc_error = within / np.sqrt(np.asarray(summary["ess_bulk"], dtype=float)) / sd
    summary.update(chain_disagreement=disagreement, mc_error=mc_error,
                   max_chain_disagreement=_nan_reduce(disagreement, np.max),
                   max_mc_error=_nan_reduce(mc_error, np.max))
    warnings: list[SamplerWarning] = []
    worst = summary["max_chain_disagreement"]
    if worst > disagreement_limit:
        warnings.append(SamplerWarning(
            "rhat",
            f"the chains disagree: their predictive means differ by up to {worst:.2g} "
            f"predictive std (max R-hat {summary['max_r_hat']:.3g}); the prediction depends "
            "on which chain was run. Increase n_burnin, n_chains or min_epochs.",
            extra={"max_chain_disagreement": worst, "threshold": disagreement_limit,
                   "max_r_hat": summary["max_r_hat"]},
        ))
    worst = summary["max_mc_error"]
    if worst > mc_error_limit:
        warnings.append(SamplerWarning(
            "ess",
            f"the Monte-Carlo error of the predictive mean is up to {worst:.2g} predictive "
            f"std (min bulk ESS {summary['min_ess_bulk']:.0f}); increase n_samples or "
            "n_chains.",
            extra={"max_mc_error": worst, "threshold": mc_error_limit,
                   "min_ess_bulk": summary["min_ess_bulk"]},
        ))
    return summary, warnings


def collapsed_chains(log_post: np.ndarray, n_burnin: int, *, factor: float = 100.0) -> list[int]:
    """Chains whose log posterior during sampling fell far below their starting value.

    A sampler started at a prior draw improves on it; a step size far too large
    throws the chain to weights of enormous size, where the log posterior (the
    log prior alone) is orders of magnitude below the start while staying
    finite (e.g. a classifier's bounded likelihood). A chain counts as collapsed
    when its median log posterior after burn-in is below ``factor`` times a
    negative starting value (``-|start|`` otherwise).

    Examples
    --------
    >>> trace = np.array([[-100.0, -100.0], [-50.0, -1e6], [-40.0, -2e6]])
    >>> collapsed_chains(trace, n_burnin=1)
    [1]
    """
    trace = np.asarray(log_post, dtype=float)
    if len(trace) <= n_burnin:
        return []
    start = -np.abs(trace[0])
    kept = np.median(trace[n_burnin:], axis=0)
    return [int(c) for c in np.flatnonzero(kept < factor * start)]
