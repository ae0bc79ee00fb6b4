"""Implicit priors over functions: samplers for ``FBNNRegressor(prior_sampler=...)``.

The fBNN paper (Sun et al. 2019, section 5.1) uses two priors with no density,
only a sampler, on 1-D inputs in ``[low, high]``: ``n ~ Poisson(rate)`` change
points uniform in the interval, and

- *piecewise constant*: ``n + 1`` values uniform in ``[0, 1]``, one per piece;
- *piecewise linear*: values uniform in ``[0, 1]`` at the left end and at the
  ``n`` change points, ``f(high) = 0``, joined by straight lines.

A sampler has the signature ``sampler(X, n, rng) -> (n, M)``: ``n`` function
draws at the inputs ``X`` of shape ``(M, 1)``, ``rng`` a ``numpy.random.Generator``.
The values are in the units the network predicts (standardised targets when
``normalize_y=True``); the defaults reproduce the paper, which fits unscaled
targets (pass ``normalize_y=False``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["piecewise_constant", "piecewise_linear"]

Sampler = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]


def _change_points(n: int, rate: float, low: float, high: float, rng) -> list[np.ndarray]:
    counts = rng.poisson(rate, size=n)
    return [np.sort(rng.uniform(low, high, size=c)) for c in counts]


def piecewise_constant(rate: float = 3.0, low: float = 0.0, high: float = 1.0) -> Sampler:
    """Piecewise-constant functions on ``[low, high]`` (one input feature).

    Examples
    --------
    >>> import numpy as np
    >>> sample = piecewise_constant()
    >>> f = sample(np.linspace(0, 1, 5)[:, None], 3, np.random.default_rng(0))
    >>> f.shape, bool(((f >= 0) & (f <= 1)).all())
    ((3, 5), True)
    """

    def sample(X: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        x = np.asarray(X)[:, 0]
        out = np.empty((n, len(x)))
        for i, cuts in enumerate(_change_points(n, rate, low, high, rng)):
            values = rng.uniform(0.0, 1.0, size=len(cuts) + 1)
            out[i] = values[np.searchsorted(cuts, x)]
        return out

    return sample


def piecewise_linear(rate: float = 3.0, low: float = 0.0, high: float = 1.0) -> Sampler:
    """Piecewise-linear functions on ``[low, high]`` with ``f(high) = 0`` (one feature).

    Examples
    --------
    >>> import numpy as np
    >>> sample = piecewise_linear()
    >>> f = sample(np.array([[1.0]]), 4, np.random.default_rng(0))
    >>> f.ravel().tolist()
    [0.0, 0.0, 0.0, 0.0]
    """

    def sample(X: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        x = np.asarray(X)[:, 0]
        out = np.empty((n, len(x)))
        for i, cuts in enumerate(_change_points(n, rate, low, high, rng)):
            knots = np.concatenate([[low], cuts, [high]])
            values = np.concatenate([rng.uniform(0.0, 1.0, size=len(cuts) + 1), [0.0]])
            out[i] = np.interp(x, knots, values)
        return out

    return sample
