"""The UCI Mushroom data (agaricus-lepiota), one-hot encoded, for the contextual bandit.

``<data_home>/mushroom/agaricus-lepiota.data`` (or ``<data_home>/agaricus-lepiota.data``):
8124 comma-separated rows of 23 single letters, no header; column 0 is the label
(``e`` edible, ``p`` poisonous), columns 1-22 the features. Each feature is
one-hot encoded over the letters that occur in it (``?``, the missing stalk
root, is a category of its own), which gives 117 binary columns on the UCI
file. Nothing is downloaded here: set ``data_home`` or ``SKFBNN_DATA_HOME``, or use
:func:`fetch_mushroom`, which downloads the data into a folder of this layout.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Bunch

from .uci import resolve_data_home

__all__ = ["MUSHROOM_FEATURES", "load_mushroom"]

MUSHROOM_FILE = "agaricus-lepiota.data"
MUSHROOM_FEATURES: tuple[str, ...] = (
    "cap-shape", "cap-surface", "cap-color", "bruises", "odor", "gill-attachment",
    "gill-spacing", "gill-size", "gill-color", "stalk-shape", "stalk-root",
    "stalk-surface-above-ring", "stalk-surface-below-ring", "stalk-color-above-ring",
    "stalk-color-below-ring", "veil-type", "veil-color", "ring-number", "ring-type",
    "spore-print-color", "population", "habitat")  # fmt: skip
"""Names of the 22 feature columns (1-22) of ``agaricus-lepiota.data``."""


def _find(data_home: str | os.PathLike | None) -> Path:
    home = resolve_data_home(data_home)
    for path in (home / "mushroom" / MUSHROOM_FILE, home / MUSHROOM_FILE):
        if path.is_file():
            return path
    raise ValueError(
        f"No Mushroom file in {str(home)!r}: expected "
        f"{str(home / 'mushroom' / MUSHROOM_FILE)!r}."
    )


def _read_rows(path: Path) -> list[list[str]]:
    rows = [line.strip().split(",") for line in path.read_text().splitlines() if line.strip()]
    for i, row in enumerate(rows):
        if len(row) != 1 + len(MUSHROOM_FEATURES) or row[0] not in ("e", "p"):
            raise ValueError(
                f"{str(path)!r} line {i + 1} must hold the label e or p and "
                f"{len(MUSHROOM_FEATURES)} feature letters, comma-separated. Got {row!r}."
            )
    if not rows:
        raise ValueError(f"{str(path)!r} holds no rows.")
    return rows


def load_mushroom(
    *, data_home: str | os.PathLike | None = None, return_X_y: bool = False
) -> Bunch | tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Load the Mushroom data, features one-hot encoded.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder holding ``mushroom/agaricus-lepiota.data`` (or the file itself);
        defaults to ``$SKFBNN_DATA_HOME``.
    return_X_y : bool, default=False
        If True return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (float64 0/1, (8124, 117) on the UCI file), ``target`` (int64,
        1 = edible, 0 = poisonous), ``target_names`` (``['poisonous', 'edible']``),
        ``feature_names`` (``'odor=n'`` and so on, in column order).
    (X, y) : tuple of ndarrays
        If ``return_X_y`` is True.

    Examples
    --------
    >>> X, y = load_mushroom(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, int(y.sum())  # doctest: +SKIP
    ((8124, 117), 4208)
    """
    rows = _read_rows(_find(data_home))
    letters = np.array([row[1:] for row in rows])
    blocks, names = [], []
    for j, feature in enumerate(MUSHROOM_FEATURES):
        categories = np.unique(letters[:, j])
        blocks.append((letters[:, j][:, None] == categories[None, :]).astype(np.float64))
        names += [f"{feature}={c}" for c in categories]
    X = np.hstack(blocks)
    y = np.array([row[0] == "e" for row in rows], dtype=np.int64)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, target_names=np.array(["poisonous", "edible"]),
                 feature_names=np.array(names), name="mushroom")
