"""The data of the classification task: MNIST-1D's canonical split and scikit-learn's
digits, cut into the classes trained on (in distribution) and the others (out of
distribution), or all ten classes with no out-of-distribution rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["DATASETS", "N_CLASSES", "ALL_CLASSES", "check_id_classes", "ood_data"]

DATASETS = ("mnist1d", "digits")


def _digits_flip(X: np.ndarray) -> np.ndarray:
    side = int(round(np.sqrt(X.shape[1])))
    return X.reshape(-1, side, side)[:, :, ::-1].reshape(X.shape)


def ood_data(dataset: str, k: int, *, data_home=None, id_classes=tuple(range(5))) -> dict:
    """Training rows, in-distribution and OOD test rows of repetition ``k``.

    Returns a dict with ``X_train, y_train, X_in, y_in, X_out`` and ``flip`` (the
    data set's flip: reversal of the signal, or the left-right mirror of images).
    ``X_out`` is None when ``id_classes`` holds all ten classes: MNIST-1D's whole
    canonical split (4 000 training rows, 1 000 test rows), or a stratified 75/25 split of
    every digit.
    """
    ids = np.asarray(id_classes)
    if dataset == "mnist1d":
        from ..datasets import load_mnist1d
        from ..datasets._fetch import data_home_or_fetch

        data_home = data_home_or_fetch(data_home, "mnist1d")  # no folder given: download once
        X, y, X_test, y_test = load_mnist1d(data_home=data_home, return_X_y=True)
        train, inside = np.isin(y, ids), np.isin(y_test, ids)
        return dict(X_train=X[train], y_train=y[train], X_in=X_test[inside],
                    y_in=y_test[inside], X_out=X_test[~inside] if (~inside).any() else None,
                    flip=lambda A: A[:, ::-1])
    if dataset == "digits":
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        X, y = load_digits(return_X_y=True)
        inside = np.isin(y, ids)
        X_train, X_in, y_train, y_in = train_test_split(
            X[inside], y[inside], test_size=0.25, stratify=y[inside], random_state=k)
        return dict(X_train=X_train, y_train=y_train, X_in=X_in, y_in=y_in,
                    X_out=X[~inside] if (~inside).any() else None, flip=_digits_flip)
    raise ValueError(f"dataset must be one of {DATASETS}. Got {dataset!r}.")


N_CLASSES = 10
"""Classes of MNIST-1D and digits (0-9)."""
ALL_CLASSES = tuple(range(N_CLASSES))
"""``id_classes`` of a run on all ten classes: in-distribution metrics only."""


def check_id_classes(id_classes: Sequence[int]) -> None:
    """Raise ValueError unless ``id_classes`` are 2 to 9 distinct classes among 0-9, or
    all ten (:data:`ALL_CLASSES`, no OOD rows).

    Examples
    --------
    >>> check_id_classes([0, 1, 2]), check_id_classes(range(10))
    (None, None)
    >>> check_id_classes([0, 1, 42])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: id_classes must be 2 to 9 distinct classes among 0-9 ... no class [42].
    """
    ids = list(id_classes)
    if sorted(ids) == list(ALL_CLASSES):
        return
    wrong = [c for c in ids if c not in range(N_CLASSES)]
    if wrong or len(set(ids)) != len(ids) or not 2 <= len(ids) < N_CLASSES:
        raise ValueError(f"id_classes must be 2 to {N_CLASSES - 1} distinct classes among "
                         f"0-{N_CLASSES - 1} (the others are out of distribution), or all "
                         f"ten ('all'). Got {','.join(map(str, ids)) or 'none'}"
                         + (f"; no class {wrong}." if wrong else "."))
