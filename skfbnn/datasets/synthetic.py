"""Synthetic regression problems used in the functional-prior BNN literature."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils import check_random_state

__all__ = ["oscillation_function", "make_oscillation"]

# the two input intervals of the 1-D oscillation problem; (-0.25, 0.25) is a gap
_LEFT = (-0.75, -0.25)
_RIGHT = (0.25, 0.75)


def oscillation_function(x: ArrayLike) -> NDArray[np.float64]:
    """Noise-free oscillating test function.

    ``f(x) = sin(3 pi x) + 0.3 cos(9 pi x) + 0.5 sin(7 pi x)``, applied
    elementwise.

    Parameters
    ----------
    x : array-like
        Inputs of any shape.

    Returns
    -------
    ndarray of float64
        Function values, same shape as ``x``.

    Examples
    --------
    >>> oscillation_function([0.0])  # 0 + 0.3 * cos(0) + 0
    array([0.3])
    """
    x = np.asarray(x, dtype=np.float64)
    return (
        np.sin(3.0 * np.pi * x)
        + 0.3 * np.cos(9.0 * np.pi * x)
        + 0.5 * np.sin(7.0 * np.pi * x)
    )


def make_oscillation(
    n_samples: int = 20,
    *,
    noise_std: float = 0.5,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sample the 1-D oscillation regression problem with an input gap.

    Following Wu, Xuan & Lu (2025, section 5.1): ``n_samples // 2`` inputs are
    drawn from Uniform(-0.75, -0.25) and the remaining
    ``n_samples - n_samples // 2`` from Uniform(0.25, 0.75); targets are
    ``oscillation_function(x) + N(0, noise_std**2)``. Rows are returned in that
    order (left block, then right block), so shuffle folds when
    cross-validating.

    Parameters
    ----------
    n_samples : int, default=20
        Number of points (at least 1).
    noise_std : float, default=0.5
        Standard deviation of the additive Gaussian noise (0 gives clean targets).
    random_state : int, RandomState instance or None, default=None
        Seed or generator, passed to :func:`sklearn.utils.check_random_state`.

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
        Inputs.
    y : ndarray of shape (n_samples,)
        Noisy targets.

    Examples
    --------
    >>> X, y = make_oscillation(10, random_state=0)
    >>> X.shape, y.shape
    ((10, 1), (10,))
    >>> bool(((0.25 <= abs(X)) & (abs(X) <= 0.75)).all())
    True
    """
    if (
        not isinstance(n_samples, numbers.Integral)
        or isinstance(n_samples, bool)
        or n_samples < 1
    ):
        raise ValueError(f"n_samples must be a positive integer. Got {n_samples!r}.")
    if not (isinstance(noise_std, numbers.Real) and 0.0 <= noise_std < np.inf):
        raise ValueError(
            f"noise_std must be a finite non-negative number. Got {noise_std!r}."
        )
    rng = check_random_state(random_state)
    n_left = int(n_samples) // 2
    x = np.concatenate(
        [
            rng.uniform(*_LEFT, size=n_left),
            rng.uniform(*_RIGHT, size=int(n_samples) - n_left),
        ]
    )
    y = oscillation_function(x) + float(noise_std) * rng.standard_normal(x.shape[0])
    return x[:, None], y
