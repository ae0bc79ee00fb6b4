"""Validation helpers shared by the metrics: finite arrays, shapes, levels."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

_LOG_2PI = float(np.log(2.0 * np.pi))


def _finite(a: ArrayLike, name: str, shape: tuple[int, ...] | None = None) -> NDArray:
    """``a`` as float64 with exactly ``shape`` (if given) and only finite values."""
    a = np.asarray(a, dtype=np.float64)
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} must have shape {shape!r}. Got {a.shape!r}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite. Got {a[~np.isfinite(a)].item(0)!r}.")
    return a


def _as_target(y: ArrayLike) -> NDArray[np.float64]:
    y = _finite(y, "y")
    if y.ndim not in (1, 2) or y.size == 0:
        raise ValueError(f"y must be non-empty, shape (n,) or (n, k). Got {y.shape!r}.")
    return y


def _as_std(std: ArrayLike, shape: tuple[int, ...], name: str = "std") -> NDArray:
    """Validate a positive scale; a scalar is broadcast to ``shape``."""
    std = _finite(std, name, None if np.ndim(std) == 0 else shape)
    if not np.all(std > 0):
        raise ValueError(f"{name} must be > 0. Got {float(np.min(std))!r}.")
    return np.broadcast_to(std, shape)


def _check_level(level: float) -> float:
    if not (isinstance(level, (int, float, np.number)) and 0.0 < level < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1. Got {level!r}.")
    return float(level)


def _gaussian_args(y: ArrayLike, mean: ArrayLike, std: ArrayLike) -> tuple:
    y = _as_target(y)
    return y, _finite(mean, "mean", y.shape), _as_std(std, y.shape)


def _as_draws(
    y: NDArray, f_draws: ArrayLike, noise_std: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    f = _finite(f_draws, "f_draws")
    if f.ndim != y.ndim + 1 or f.shape[1:] != y.shape or f.shape[0] < 1:
        raise ValueError(f"f_draws must have shape (S, *{y.shape!r}). Got {f.shape!r}.")
    return f, None if noise_std is None else _draw_noise(noise_std, f)


def _draw_noise(noise_std: ArrayLike, f: NDArray) -> NDArray[np.float64]:
    """Broadcast noise (scalar, (S,), (S, k) or f's shape) to f's shape."""
    s = np.asarray(noise_std, dtype=np.float64)
    n_draws = f.shape[0]
    if s.shape in {(n_draws,), (n_draws,) + f.shape[2:]}:  # per draw (and output)
        shape = (n_draws,) + (1,) * (f.ndim - s.ndim) + s.shape[1:]
        s = np.broadcast_to(s.reshape(shape), f.shape)
    elif s.ndim != 0 and s.shape != f.shape:
        msg = f"noise_std must have shape (), (S,), (S, k) or {f.shape!r}"
        raise ValueError(f"{msg}. Got {s.shape!r}.")
    return _as_std(s, f.shape, "noise_std")
