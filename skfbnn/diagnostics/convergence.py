"""Convergence diagnostics for MCMC draws: rank-normalised split R-hat and ESS.

Implements the diagnostics of Vehtari, Gelman, Simpson, Carpenter and Bürkner
(2021), "Rank-normalization, folding, and localization: an improved R-hat for
assessing convergence of MCMC", Bayesian Analysis 16(2).

All functions take ``draws`` of shape ``(n_chains, n_draws, *event_shape)`` and
return an array of shape ``event_shape`` (a Python ``float`` when the event
shape is ``()``). Each event element is diagnosed independently.

Conventions
-----------
* An element with any non-finite draw (NaN or +/-inf) gives NaN.
* Fewer than 4 draws per chain gives NaN (for every element).
* An element whose draws are all identical (zero variance over all chains, e.g.
  a stuck sampler) gives NaN for R-hat and every ESS: a sampler that never
  moves must not report a perfect ESS.
* If every chain is internally constant but the chains disagree, R-hat is
  ``inf``.
* With a single chain, split R-hat compares its two halves.
* In :func:`ess_tail` a quantile indicator that is constant on the split chains
  (heavy ties in small samples) is ignored; if both are, the result is NaN.

Apart from these conventions (ArviZ reports the total draw count as the ESS of
constant input and needs two chains for R-hat) the results agree with ArviZ's
``rhat(method="rank")`` and ``ess(method="bulk"|"tail"|"mean")`` to rounding
(ArviZ's quantile may round just below a draw that is exactly the 5% or 95%
quantile, which can change the tail ESS of tiny samples; here it is exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

__all__ = ["ess_bulk", "ess_mean", "ess_tail", "split_rhat"]

_MIN_DRAWS = 4


def _prepare(draws: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Reshape to ``(n_elements, n_chains, n_draws)`` and flag valid elements.

    Invalid elements get a non-constant placeholder; :func:`_finish` NaNs them.
    """
    x = np.asarray(draws, dtype=float)
    if x.ndim < 2:
        raise ValueError(
            f"draws must have shape (n_chains, n_draws, *event_shape); got {x.shape}"
        )
    n_chains, n_draws = x.shape[:2]
    event_shape = x.shape[2:]
    n_elem = int(np.prod(event_shape, dtype=int))
    if n_chains < 1 or n_draws < _MIN_DRAWS or n_elem == 0:
        # Placeholder (at least one element, so numpy reductions work).
        dummy = np.tile(np.arange(_MIN_DRAWS, dtype=float), (max(n_elem, 1), 1, 1))
        return dummy, np.zeros(len(dummy), dtype=bool), event_shape
    flat = np.moveaxis(x.reshape(n_chains, n_draws, n_elem), 2, 0)
    finite = np.isfinite(flat).all(axis=(1, 2))
    safe = np.where(finite[:, None, None], flat, 0.0)
    spread = safe.max(axis=(1, 2)) - safe.min(axis=(1, 2))
    valid = finite & (spread > 0)
    placeholder = np.arange(n_chains * n_draws, dtype=float).reshape(n_chains, n_draws)
    flat = np.where(valid[:, None, None], safe, placeholder)
    return flat, valid, event_shape


def _finish(values: np.ndarray, valid: np.ndarray, shape: tuple[int, ...]) -> Any:
    """Mask invalid elements with NaN and restore the event shape."""
    size = int(np.prod(shape, dtype=int))
    out = np.where(valid, values, np.nan)[:size].reshape(shape)
    return float(out) if out.ndim == 0 else out


def _split(x: np.ndarray) -> np.ndarray:
    """Split each chain into halves, dropping the middle draw if odd: (V, 2C, N//2)."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[2] - half :]], axis=1)


def _rank_normalise(x: np.ndarray) -> np.ndarray:
    """Blom normal scores of the pooled average ranks of each element."""
    n_elem, n_chains, n_draws = x.shape
    size = n_chains * n_draws
    ranks = rankdata(x.reshape(n_elem, size), method="average", axis=1)
    return ndtri((ranks - 0.375) / (size + 0.25)).reshape(x.shape)


def _rhat(x: np.ndarray) -> np.ndarray:
    """Classic R-hat of (V, C, N) chains (no splitting or normalisation)."""
    n = x.shape[2]
    within = x.var(axis=2, ddof=1).mean(axis=1)
    between_n = x.mean(axis=2).var(axis=1, ddof=1)  # B / n
    with np.errstate(divide="ignore", invalid="ignore"):
        rhat = np.sqrt(((n - 1) / n * within + between_n) / within)
    # Chains that are each constant (up to round-off) but disagree: R-hat = inf.
    stuck = within <= 1e-12 * (within + between_n)
    return np.where(~stuck, rhat, np.where(between_n > 0, np.inf, np.nan))


def _ess(x: np.ndarray) -> np.ndarray:
    """Multi-chain ESS of (V, C, N) chains with Geyer's initial monotone sequence."""
    n_elem, n_chains, n_draws = x.shape
    centred = x - x.mean(axis=2, keepdims=True)
    n_fft = 1 << int(np.ceil(np.log2(2 * n_draws)))
    spec = np.fft.rfft(centred, n=n_fft, axis=2)
    acov = np.fft.irfft(spec * spec.conj(), n=n_fft, axis=2)[:, :, :n_draws]
    acov = acov.mean(axis=1) / n_draws  # biased autocovariance, averaged over chains
    within = acov[:, 0] * n_draws / (n_draws - 1.0)
    var_plus = acov[:, 0].copy()  # = (n-1)/n W
    if n_chains > 1:
        var_plus += x.mean(axis=2).var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (within[:, None] - acov) / var_plus[:, None]
    rho[:, 0] = 1.0
    # Pair sums P_k = rho_{2k} + rho_{2k+1}, k = 0..k_max.
    k_max = max((n_draws - 3) // 2, 0)
    pairs = rho[:, 0 : 2 * k_max + 2 : 2] + rho[:, 1 : 2 * k_max + 2 : 2]
    # Initial positive sequence: stop at the first pair whose sum is <= 0.
    stop = pairs <= 0
    last = np.where(stop.any(axis=1), stop.argmax(axis=1), k_max)
    # Initial monotone sequence: pairs before `last` are replaced by running minima.
    monotone = np.minimum.accumulate(pairs, axis=1)
    csum = np.concatenate([np.zeros((n_elem, 1)), np.cumsum(monotone, axis=1)], axis=1)
    rows = np.arange(n_elem)
    head = csum[rows, last]
    # The even term of the last pair is kept (once) if that pair was accepted or
    # if the term is positive on its own (as in the posterior R package / ArviZ).
    even = rho[rows, 2 * last]
    tail = np.where(pairs[rows, last] >= 0, even, np.maximum(even, 0.0))
    total = n_chains * n_draws
    tau = np.maximum(-1.0 + 2.0 * head + tail, 1.0 / np.log10(total))
    ess = total / tau
    ok = (var_plus > 0) & np.isfinite(rho).all(axis=1)
    return np.where(ok, ess, np.nan)


def split_rhat(draws: Any) -> np.ndarray | float:
    """Rank-normalised split R-hat: max of bulk and folded (tail) R-hat.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, *event_shape)
        MCMC draws; ``n_chains >= 1`` and ``n_draws >= 4``.

    Returns
    -------
    ndarray of shape event_shape, or float
        R-hat per element; values near 1 indicate mixing (1.01 is the usual
        threshold). NaN for invalid elements (see module conventions).
    """
    x, valid, shape = _prepare(draws)
    split = _split(x)
    bulk = _rhat(_rank_normalise(split))
    folded = np.abs(split - np.median(split, axis=(1, 2), keepdims=True))
    tail = _rhat(_rank_normalise(folded))
    return _finish(np.fmax(bulk, tail), valid, shape)


def ess_bulk(draws: Any) -> np.ndarray | float:
    """Bulk effective sample size: ESS of the rank-normalised split chains.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, *event_shape)

    Returns
    -------
    ndarray of shape event_shape, or float
        Bulk ESS per element, NaN for invalid elements.
    """
    x, valid, shape = _prepare(draws)
    return _finish(_ess(_rank_normalise(_split(x))), valid, shape)


def ess_tail(draws: Any) -> np.ndarray | float:
    """Tail effective sample size: min ESS of the 5% and 95% quantile indicators.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, *event_shape)

    Returns
    -------
    ndarray of shape event_shape, or float
        ``min(ESS(I(x <= q05)), ESS(I(x <= q95)))`` on split chains, with the
        quantiles (linear interpolation, R type 7) taken over all draws.
    """
    x, valid, shape = _prepare(draws)
    q = np.quantile(x.reshape(x.shape[0], -1), [0.05, 0.95], axis=1)
    low = _ess(_split((x <= q[0][:, None, None]).astype(float)))
    high = _ess(_split((x <= q[1][:, None, None]).astype(float)))
    return _finish(np.fmin(low, high), valid, shape)


def ess_mean(draws: Any) -> np.ndarray | float:
    """Effective sample size for the mean: ESS of the raw split chains.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, *event_shape)

    Returns
    -------
    ndarray of shape event_shape, or float
        ESS per element (no rank normalisation), NaN for invalid elements.
    """
    x, valid, shape = _prepare(draws)
    return _finish(_ess(_split(x)), valid, shape)
