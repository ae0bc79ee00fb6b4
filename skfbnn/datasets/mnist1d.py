"""MNIST-1D (Greydanus 2020): 40-sample 1-D signals of the ten digits.

``<data_home>/mnist1d/mnist1d_data.npz`` (or ``<data_home>/mnist1d_data.npz``)
holds the canonical release re-saved without pickles: ``x`` (4000, 40), ``y``,
``x_test`` (1000, 40), ``y_test`` and the signal grid ``t``. Nothing is
downloaded here: set ``data_home`` or the ``SKFBNN_DATA_HOME`` environment variable,
or use :func:`fetch_mnist1d`, which downloads the data into a folder of this layout.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Bunch

from .uci import resolve_data_home

__all__ = ["load_mnist1d"]

MNIST1D_FILE = "mnist1d_data.npz"
_ARRAYS = ("x", "y", "x_test", "y_test")


def _find(data_home: str | os.PathLike | None) -> Path:
    home = resolve_data_home(data_home)
    for path in (home / "mnist1d" / MNIST1D_FILE, home / MNIST1D_FILE):
        if path.is_file():
            return path
    raise ValueError(
        f"No MNIST-1D file in {str(home)!r}: expected "
        f"{str(home / 'mnist1d' / MNIST1D_FILE)!r} (arrays x, y, x_test, y_test)."
    )


def load_mnist1d(
    *, data_home: str | os.PathLike | None = None, return_X_y: bool = False
) -> Bunch | tuple[NDArray, NDArray, NDArray, NDArray]:
    """Load MNIST-1D with its canonical train/test split.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder holding ``mnist1d/mnist1d_data.npz`` (or the file itself);
        defaults to ``$SKFBNN_DATA_HOME``.
    return_X_y : bool, default=False
        If True return ``(X_train, y_train, X_test, y_test)``.

    Returns
    -------
    data : Bunch
        ``data`` (float64, (4000, 40)), ``target`` (int64), ``data_test``
        ((1000, 40)), ``target_test`` and ``t`` (the 40 signal positions).
    (X_train, y_train, X_test, y_test) : tuple of ndarrays
        If ``return_X_y`` is True.

    Examples
    --------
    >>> X, y, X_test, y_test = load_mnist1d(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, X_test.shape, sorted(set(y))[:3]  # doctest: +SKIP
    ((4000, 40), (1000, 40), [0, 1, 2])
    """
    path = _find(data_home)
    with np.load(path, allow_pickle=False) as npz:
        missing = [k for k in _ARRAYS if k not in npz.files]
        if missing:
            raise ValueError(f"{str(path)!r} must hold the arrays {_ARRAYS}; missing {missing}.")
        arrays = {k: np.asarray(npz[k]) for k in npz.files}
    X, y = arrays["x"].astype(np.float64), arrays["y"].astype(np.int64)
    X_test, y_test = arrays["x_test"].astype(np.float64), arrays["y_test"].astype(np.int64)
    if X.ndim != 2 or X_test.shape[1:] != X.shape[1:] or len(y) != len(X) or (
        len(y_test) != len(X_test)
    ):
        raise ValueError(
            f"{str(path)!r}: x {X.shape}, y {y.shape}, x_test {X_test.shape} and y_test "
            f"{y_test.shape} do not form a train/test pair."
        )
    if return_X_y:
        return X, y, X_test, y_test
    t = arrays.get("t", np.arange(X.shape[1], dtype=np.float64))
    return Bunch(data=X, target=y, data_test=X_test, target_test=y_test, t=t,
                 name="mnist1d")
