"""Checks of a fitted posterior at its training rows: raise for an unusable fit, warn for a
suspicious one.

Regression compares the predictive's spread,
its mean and the learned noise with the targets'; classification compares the training log
loss and accuracy with those of predicting the class frequencies. Both see the outputs that
``predict`` would compute. Messages name the likely causes in order
(:class:`~skfbnn.diagnostics.advice.FitAdvice`): the data's scale (checked before the run,
:mod:`skfbnn.diagnostics.scale`), the step (with its multiple of the default), the run's
length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..device import to_numpy
from ..exceptions import (
    ConstantTargetWarning,
    NoiseOnlyFitWarning,
    PoorFitWarning,
    SamplerDivergenceWarning,
    divergence_error,
)
from ..priors.weight import NOISE_KEY
from .advice import FitAdvice
from .checks import SamplerWarning, predictive_spread

__all__ = ["SPREAD_WARNING", "SPREAD_ERROR", "NOISE_WARNING", "LOSS_LIMIT", "CHANCE_SE",
           "check_rows", "regression_checks", "classification_checks"]

SPREAD_WARNING = 10.0
"""A predictive spread (:func:`~skfbnn.diagnostics.predictive_spread`) at the training
inputs above this many target standard deviations is reported with a
``SamplerDivergenceWarning``. Sane fits give about 1, and at most a few with very little
data or a dominating prior (the learned noise's weak prior alone has an RMS of 2.9 and
1% of its mass beyond 10)."""
SPREAD_ERROR = 1e3
"""Above this many target standard deviations ``fit`` raises ``SamplerDivergenceError``:
the predictions would be useless (the noise prior's mass beyond 1e3 is 3e-8)."""
NOISE_WARNING = 1.5
"""A learned noise std (median over draws and rows) above this many target standard
deviations is reported: a constant at the mean of y has noise 1. Bayes by backprop at its
defaults on 40 rows learned 2.6 (its q at the prior); sane fits stay well below 1."""
LOSS_LIMIT = 10.0
"""A training log loss above this many times the class-frequency predictor's is a
diverged fit."""
MAX_CHECK_ROWS = 1000
CHANCE_SE = 3.0
"""A classifier whose training accuracy is within this many binomial standard errors of
the most frequent class's rate (or below it) is at chance. In the sweep, on 200 balanced
rows (margin 0.106), fBNN at 1000 times its learning rate ended at 0.57 and ifBNN at 100 and
1000 times at 0.50 and 0.54; at their defaults both at 0.995 or above."""
def check_rows(n_rows: int) -> np.ndarray:
    """Up to :data:`MAX_CHECK_ROWS` evenly spaced training rows.

    Examples
    --------
    >>> check_rows(3).tolist(), len(check_rows(10**6))
    ([0, 1, 2], 1000)
    """
    return np.unique(np.linspace(0, n_rows - 1, MAX_CHECK_ROWS).round().astype(int))


def regression_checks(posterior, outputs: Callable[[Any], torch.Tensor], likelihood,
                      X: np.ndarray, yt: torch.Tensor, constant: np.ndarray,
                      y_std: np.ndarray, learned_noise: bool, fixed_noise: float,
                      single_output: bool, step_name: str,
                      advice: FitAdvice | None = None) -> dict[str, Any]:
    """Raise for a diverged regression fit, report a suspicious one and the constant columns.

    Parameters
    ----------
    posterior : posterior container
        The fitted draws.
    outputs : callable
        ``outputs(X) -> (D, n, n_out)``: the network outputs of every draw at ``X``.
    likelihood : Likelihood
        The fit's likelihood (``predictive(out, draws) -> (f, log_noise)``).
    X : ndarray
        The validated training inputs.
    yt : Tensor
        The encoded (standardised) targets of the learned columns.
    constant : ndarray of bool
        Which target columns are constant (not learned).
    y_std : ndarray
        The targets' scale per column (1 without ``normalize_y``).
    learned_noise : bool
        The noise is learned (``noise_std='learn'``), so it counts in the checks.
    fixed_noise : float
        The fixed ``noise_std`` (0 when learned), for the constant columns' message.
    single_output : bool
        ``y`` has one column (messages then name no output).
    step_name : str
        The step parameter named in the messages.
    advice : FitAdvice, optional
        The likely causes the messages list (default: the step parameter alone).

    Returns
    -------
    dict
        ``warnings``, ``predictive_spread`` (one per output, NaN for constant columns),
        ``predictive_spread_by_chain``, ``noise_ratio`` and ``training_r2`` (the
        predictive mean's R^2 on the training rows checked, NaN for constant columns).
    """
    advice = advice or FitAdvice(step_name)
    n_outputs = len(constant)
    found = _constant_warnings(constant, learned_noise, fixed_noise, single_output)
    n_groups = posterior.shape[0]
    spread = np.full(n_outputs, np.nan)
    by_chain = np.full((n_groups, n_outputs), np.nan)
    noise = np.full(n_outputs, np.nan)
    r2 = np.full(n_outputs, np.nan)
    if yt.shape[1]:
        _check_noise_range(posterior.flat(), y_std[~constant], step_name)
        spread[~constant], by_chain[:, ~constant], noise[~constant], r2[~constant] = \
            _spread(posterior, outputs, likelihood, X, yt, learned_noise)
        found += _spread_warnings(spread, by_chain, constant, single_output, step_name,
                                  advice)
        noise_found = _noise_warnings(noise, single_output, advice)
        # a noise explaining y is one way of being worse than the mean: one warning
        found += noise_found or _r2_warnings(r2, single_output, advice)
    return {"warnings": found, "predictive_spread": spread,
            "predictive_spread_by_chain": by_chain, "noise_ratio": noise,
            "training_r2": r2}


def _spread(posterior, outputs, likelihood, X, yt, learned_noise
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`predictive_spread` of the learned columns at (up to 1000) training rows,
    in the network's units, from the outputs that ``predict`` would compute: of all
    draws ``(k,)``, and of each chain's (member's) draws ``(C, k)``; the median
    learned noise std in standard deviations of y ``(k,)`` (NaN for a fixed noise); and
    the R^2 of the predictive mean there ``(k,)``."""
    rows = check_rows(len(X))
    out = outputs(X[rows])
    draws = {k: v.to(out.device, out.dtype) for k, v in posterior.flat().items()}
    f, log_noise = likelihood.predictive(out, draws)
    # A noise_std set by the user is not the run's doing: only learned noise counts.
    noise = to_numpy(torch.exp(log_noise)) if learned_noise else None
    y = to_numpy(yt)
    # The network and its priors work on unit scale (that of standardised targets):
    # with normalize_y=False, targets much smaller than 1 are no sign of divergence.
    scale = np.maximum(y.std(0), 1.0)
    f, y = to_numpy(f), y[rows]
    C, S = posterior.shape
    by_chain = np.stack([
        predictive_spread(f[c * S:(c + 1) * S], None if noise is None
                          else noise[c * S:(c + 1) * S], y, scale) for c in range(C)])
    ratio = np.full(y.shape[1], np.nan) if noise is None else \
        np.median(noise.reshape(-1, noise.shape[-1]), axis=0) / np.maximum(y.std(0), 1e-300)
    # Every chain holds S draws, so the pooled spread is the chains' root mean square.
    with np.errstate(over="ignore", invalid="ignore"):
        pooled = np.sqrt((by_chain**2).mean(0))
        residual = ((f.mean(0) - y) ** 2).mean(0)
        r2 = 1.0 - residual / np.maximum(y.var(0), 1e-300)
    return pooled, by_chain, ratio, r2


def _noise_warnings(ratio: np.ndarray, single_output: bool,
                    advice: FitAdvice | None = None) -> list[SamplerWarning]:
    """A ``"noise"`` warning when the learned noise std exceeds :data:`NOISE_WARNING`
    standard deviations of y: the fit explains y as noise, worse than its mean would."""
    outputs = np.flatnonzero(ratio > NOISE_WARNING).tolist()
    if not outputs:
        return []
    advice = advice or FitAdvice()
    where = "" if single_output else f" (output(s) {outputs})"
    return [SamplerWarning(
        "noise",
        f"the learned observation noise is {float(np.nanmax(ratio)):.3g} times the "
        f"standard deviation of y{where}: the fit explains y as noise, worse than "
        "predicting the mean of y. " + advice.causes(
            "with Bayes by backprop on little data, the collapse of q onto the weight "
            "prior, the noise absorbing the prior's functions (a fixed noise_std, a smaller "
            "network or more data avoid it)"),
        extra={"noise_ratio": ratio, "outputs": outputs, "threshold": NOISE_WARNING},
        category=NoiseOnlyFitWarning,
    )]


def _r2_warnings(r2: np.ndarray, single_output: bool, advice: FitAdvice
                 ) -> list[SamplerWarning]:
    """A ``"worse_than_mean"`` warning when the predictive mean fits the training rows
    worse than the mean of y does (R^2 below 0)."""
    outputs = np.flatnonzero(r2 < 0).tolist()
    if not outputs:
        return []
    where = "" if single_output else f" (output(s) {outputs})"
    return [SamplerWarning(
        "worse_than_mean",
        f"on its own training rows the predictive mean has an R^2 of "
        f"{float(np.nanmin(r2)):.3g}{where}: it fits y worse than predicting the mean of y. "
        + advice.causes("no signal in y that X can explain"),
        extra={"training_r2": r2, "outputs": outputs}, category=PoorFitWarning,
    )]


def _constant_warnings(constant: np.ndarray, learned_noise: bool, fixed_noise: float,
                       single_output: bool) -> list[SamplerWarning]:
    columns = np.flatnonzero(constant).tolist()
    if not columns:
        return []
    what = "y is constant" if single_output else f"y column(s) {columns} are constant"
    std = "zero" if learned_noise else f"the fixed noise_std={fixed_noise!r}"
    return [SamplerWarning(
        "constant",
        f"{what} (zero variance): there is nothing to learn and no scale for the "
        f"observation noise, so no network is fitted to it; it is predicted as its value "
        f"with {std} as predictive standard deviation.",
        extra={"columns": columns}, category=ConstantTargetWarning,
    )]


def _check_noise_range(draws: dict, y_std: np.ndarray, step_name: str) -> None:
    # A run can stay finite in float32 while the learned log noise drifts
    # so far that its variance in units of y overflows float64 (seen with
    # SGLD at step_size=10): predictions would then be inf/NaN.
    if NOISE_KEY not in draws:
        return
    log_noise = draws[NOISE_KEY].detach().to("cpu", torch.float64)  # MPS: no float64
    var = (torch.exp(log_noise) * torch.as_tensor(y_std)).pow(2)
    if not bool((torch.isfinite(var) & (var > 0)).all()):
        raise divergence_error(
            step_name, "the learned observation noise left the range of float64 (|log noise "
            f"std| up to {float(log_noise.abs().max()):.3g})")


def _spread_warnings(spread: np.ndarray, by_chain: np.ndarray, constant: np.ndarray,
                     single_output: bool, step_name: str,
                     advice: FitAdvice | None = None) -> list[SamplerWarning]:
    """Raise when all draws together spread above :data:`SPREAD_ERROR` target
    standard deviations; a ``"spread"`` warning when one chain's (member's) draws
    spread above :data:`SPREAD_WARNING`. Pooled, one escaped chain of eight is
    diluted about threefold: with ReLU, fSGHMC on 40 rows once had one chain at 28
    and seven at 1.0, a pooled spread of 9.9 and a test std ten times sd(y)."""
    worst = float(np.nanmax(spread))
    if not worst <= SPREAD_ERROR:  # also NaN/inf
        bad = np.flatnonzero(~(spread <= SPREAD_ERROR) & ~constant).tolist()
        where = "" if single_output else f" (output(s) {bad})"
        raise divergence_error(
            step_name, f"its predictive distribution at the training inputs spreads "
            f"{worst:.3g} times the standard deviation of y around the mean of y{where}; a "
            "fit of y gives about 1, so the predictions would be useless")
    escaped = ~(by_chain <= SPREAD_WARNING) & ~constant  # (C, k)
    outputs = np.flatnonzero(escaped.any(0)).tolist()
    if not outputs:
        return []
    chains = np.flatnonzero(escaped.any(1)).tolist()
    where = "" if single_output else f" (output(s) {outputs})"
    return [SamplerWarning(
        "spread",
        "some draws escaped to implausible values, e.g. a blown-up noise or function: "
        f"at the training inputs the draws of chain(s) or member(s) {chains} spread up "
        f"to {float(np.nanmax(by_chain[escaped])):.3g} times the standard deviation of y "
        f"around the mean of y{where}, all draws together {worst:.3g} (a fit of y gives "
        f"about 1). {(advice or FitAdvice(step_name)).causes(run=False)}",
        extra={"predictive_spread": spread, "predictive_spread_by_chain": by_chain,
               "outputs": outputs, "chains": chains, "threshold": SPREAD_WARNING},
        category=SamplerDivergenceWarning,
    )]


def classification_checks(probabilities: Callable[[Any], torch.Tensor], X: np.ndarray,
                          yt: torch.Tensor, step_name: str,
                          advice: FitAdvice | None = None) -> dict[str, Any]:
    """Raise for a fit that stayed finite but blew up; warn for one at chance.

    The training log loss of the predictive (at up to 1000 rows; ``probabilities(X)``
    gives each draw's class probabilities ``(D, n, K)``) is compared with that of
    predicting the class frequencies: more than :data:`LOSS_LIMIT` times it (and at least
    ``log 2``) means weights thrown to enormous values, so the probabilities are useless.
    A training accuracy no better than always predicting the most frequent class is a
    ``"chance"`` warning (:class:`~skfbnn.exceptions.PoorFitWarning`).
    ``diagnostics_`` gets ``training_accuracy`` and ``majority_rate``.
    """
    rows = check_rows(len(X))
    proba = probabilities(X[rows]).mean(0)
    labels = yt[rows].to(proba.device)
    loss = float(-proba.gather(1, labels[:, None]).clamp_min(1e-300).log().mean())
    freq = torch.bincount(yt, minlength=proba.shape[1]).double() / len(yt)
    baseline = max(float(-(freq * freq.clamp_min(1e-300).log()).sum()), float(np.log(2)))
    if not loss <= LOSS_LIMIT * baseline:  # also NaN
        raise divergence_error(
            step_name, f"the training log loss of its predictions is {loss:.3g}, more than "
            f"{LOSS_LIMIT:g} times that of predicting the class frequencies ({baseline:.3g}); "
            "the weights went to enormous values")
    accuracy = float((proba.argmax(1) == labels).double().mean())
    majority = float(freq.max())
    margin = CHANCE_SE * np.sqrt(majority * (1 - majority) / len(labels))
    found = []
    if accuracy <= majority + margin:
        found.append(SamplerWarning(
            "chance",
            f"on its own training rows the classifier is right on {accuracy:.3g} of them, "
            f"no better than always predicting the most frequent class ({majority:.3g}, "
            f"within {CHANCE_SE:g} standard errors: {margin:.2g}). "
            + (advice or FitAdvice(step_name)).causes("labels that X cannot predict"),
            extra={"training_accuracy": accuracy, "majority_rate": majority,
                   "margin": margin},
            category=PoorFitWarning))
    return {"warnings": found, "training_accuracy": accuracy, "majority_rate": majority}
