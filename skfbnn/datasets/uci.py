"""UCI regression benchmarks in the standard PBP / MC-dropout split format.

``<data_home>/<name>/`` holds whitespace-separated text files: ``data.txt``,
``index_features.txt`` / ``index_target.txt`` (0-based columns),
``index_train_K.txt`` / ``index_test_K.txt`` (0-based rows of split K) and
``n_splits.txt``. Nothing is downloaded here: set ``data_home`` or the
``SKFBNN_DATA_HOME`` environment variable, or use :func:`fetch_uci`, which downloads
the standard sets into a folder of this layout.
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils import Bunch, indexable

__all__ = ["UCI_DATASETS", "UCI_ALIASES", "resolve_data_home", "load_uci",
           "load_uci_split", "UCISplits"]  # fmt: skip

PathLike = str | os.PathLike

UCI_DATASETS: tuple[str, ...] = (
    "bostonHousing", "concrete", "energy", "kin8nm", "protein-tertiary-structure",
    "wine-quality-red", "yacht")  # fmt: skip
UCI_ALIASES: dict[str, str] = {"boston": "bostonHousing", "wine": "wine-quality-red",
                               "protein": "protein-tertiary-structure"}  # fmt: skip
_ENV_VAR = "SKFBNN_DATA_HOME"


def resolve_data_home(data_home: PathLike | None = None) -> Path:
    """Folder holding one sub-folder per dataset.

    Uses ``data_home`` if given, else the ``SKFBNN_DATA_HOME`` environment
    variable; raises ``ValueError`` if neither is set or the folder is missing.

    Examples
    --------
    >>> import tempfile
    >>> resolve_data_home(tempfile.gettempdir()).is_dir()
    True
    """
    source = "data_home"
    if data_home is None:
        data_home, source = os.environ.get(_ENV_VAR) or None, _ENV_VAR
    if data_home is None:
        raise ValueError(
            "No data folder given: pass data_home=... or set the environment "
            f"variable {_ENV_VAR} to the folder that holds one sub-folder per "
            "dataset (e.g. shared/data/uci). Nothing is downloaded here: "
            "fetch_uci, fetch_mnist1d and fetch_mushroom download the data."
        )
    path = Path(data_home).expanduser()
    if not path.is_dir():
        raise ValueError(f"{source} must be an existing folder. Got {str(path)!r}.")
    return path


def _dataset_dir(name: str, data_home: PathLike | None) -> tuple[str, Path]:
    """Canonical name and folder of dataset ``name`` (aliases resolved)."""
    if not isinstance(name, str) or name in ("", ".", "..") or Path(name).name != name:
        raise ValueError(f"name must be a dataset name such as 'yacht'. Got {name!r}.")
    canonical = UCI_ALIASES.get(name, name)
    home = resolve_data_home(data_home)
    for folder in (home / canonical, home / "uci" / canonical):
        if folder.is_dir():
            return canonical, folder
    if canonical in UCI_DATASETS:
        raise ValueError(
            f"No folder for dataset {canonical!r} in {str(home)!r}: expected "
            f"{str(home / canonical)!r} holding data.txt and the index files."
        )
    raise ValueError(
        f"Unknown UCI dataset {name!r}. Valid names: {', '.join(UCI_DATASETS)}; "
        f"aliases: {', '.join(UCI_ALIASES)} (or any sub-folder of {str(home)!r} "
        "in the same format)."
    )


def _require(path: Path) -> Path:  # missing files are reported by full path
    if not path.is_file():
        raise ValueError(f"Missing file {path.name!r}: expected {str(path)!r}.")
    return path


@lru_cache(maxsize=8)
def _cached_matrix(path: str, mtime_ns: int, size: int) -> NDArray[np.float64]:
    data = np.loadtxt(path, dtype=np.float64, ndmin=2)
    data.setflags(write=False)  # shared between calls; callers index copies out
    return data


def _load_matrix(folder: Path) -> NDArray[np.float64]:
    """Read-only ``data.txt`` matrix (cached while the file is unchanged)."""
    path = _require(folder / "data.txt")
    stat = path.stat()
    return _cached_matrix(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def _read_ints(path: Path) -> NDArray[np.intp]:
    """Non-negative integers stored whitespace-separated in ``path``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "empty input file"
        values = np.loadtxt(_require(path), dtype=np.float64, ndmin=1).ravel()
    if values.size == 0 or np.any(values < 0) or np.any(values != np.round(values)):
        raise ValueError(
            f"{str(path)!r} must hold non-negative integer indices. Got "
            f"{values[:5].tolist()!r}{'...' if values.size > 5 else ''}."
        )
    return values.astype(np.intp)


def _columns(folder: Path, n_cols: int) -> tuple[NDArray[np.intp], int]:
    features = _read_ints(folder / "index_features.txt")
    target = _read_ints(folder / "index_target.txt")
    if target.size != 1 or max(features.max(), target[0]) >= n_cols or (
        target[0] in features
    ):
        raise ValueError(
            f"{folder.name!r} needs one target column, not a feature, among the "
            f"{n_cols} columns of data.txt. Got features {features.tolist()!r}, "
            f"target {target.tolist()!r}."
        )
    return features, int(target[0])


def _X_y(folder: Path) -> tuple[NDArray, NDArray, NDArray[np.intp], int]:
    """Writable copies of X and y plus the feature and target column indices."""
    data = _load_matrix(folder)
    features, target = _columns(folder, data.shape[1])
    return data[:, features], data[:, target].copy(), features, target


def _available_splits(folder: Path) -> int:
    n_splits = _read_ints(folder / "n_splits.txt")
    if n_splits.size != 1 or n_splits[0] < 1:
        raise ValueError(f"n_splits.txt of {folder.name!r} must hold one positive int.")
    return int(n_splits[0])


def _count_rows(folder: Path) -> int:
    """Number of non-blank lines of ``data.txt`` (without parsing it)."""
    with open(_require(folder / "data.txt"), "rb") as handle:
        return sum(1 for line in handle if line.strip())


def _split_indices(
    folder: Path, k: int, n_rows: int
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    train = _read_ints(folder / f"index_train_{k}.txt")
    test = _read_ints(folder / f"index_test_{k}.txt")
    largest = int(max(train.max(), test.max()))
    if largest >= n_rows:
        raise ValueError(f"data.txt has {n_rows} rows; split {k} uses row {largest}.")
    return train, test


def _check_split_count(value: Any, name: str, low: int, high: int) -> int:
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not (is_int and low <= value <= high):
        raise ValueError(f"{name} must be an int in [{low}, {high}]. Got {value!r}.")
    return int(value)


def load_uci(
    name: str, *, data_home: PathLike | None = None, return_X_y: bool = False
) -> Bunch | tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Load a UCI regression dataset stored in the standard split format.

    Parameters
    ----------
    name : str
        One of :data:`UCI_DATASETS`, an alias in :data:`UCI_ALIASES`, or the
        name of any sub-folder of ``data_home`` in the same format.
    data_home : str or path-like, default=None
        Folder holding the dataset folders; defaults to ``$SKFBNN_DATA_HOME``.
    return_X_y : bool, default=False
        If True return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (X, float64 of shape (n, d)), ``target`` (y, shape (n,)),
        ``feature_indices``, ``target_index``, ``n_splits`` and ``name``
        (canonical). Values are raw: standardise with training-split statistics.
    (X, y) : tuple of ndarrays
        If ``return_X_y`` is True.

    Examples
    --------
    >>> X, y = load_uci("yacht", return_X_y=True)  # doctest: +SKIP
    >>> X.shape, y.shape  # doctest: +SKIP
    ((308, 6), (308,))
    """
    canonical, folder = _dataset_dir(name, data_home)
    X, y, features, target = _X_y(folder)
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        feature_indices=features,
        target_index=target,
        n_splits=_available_splits(folder),
        name=canonical,
    )


def load_uci_split(
    name: str, split: int, *, data_home: PathLike | None = None
) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Train/test arrays of split number ``split`` (0-based) of a UCI dataset.

    Returns ``(X_train, X_test, y_train, y_test)``, unstandardised.

    Examples
    --------
    >>> X_tr, X_te, y_tr, y_te = load_uci_split("yacht", 0)  # doctest: +SKIP
    >>> len(y_tr), len(y_te)  # doctest: +SKIP
    (277, 31)
    """
    _, folder = _dataset_dir(name, data_home)
    n_available = _available_splits(folder)
    split = _check_split_count(split, "split", 0, n_available - 1)
    X, y = _X_y(folder)[:2]
    train, test = _split_indices(folder, split, X.shape[0])
    return X[train], X[test], y[train], y[test]


class UCISplits(BaseCrossValidator):
    """The published train/test splits of a UCI dataset as a CV splitter.

    Yields the ``(train, test)`` row indices stored in ``index_train_K.txt`` /
    ``index_test_K.txt``, for ``X`` as returned by :func:`load_uci`.

    Parameters
    ----------
    name : str
        Dataset name or alias, as in :func:`load_uci`.
    data_home : str or path-like, default=None
        Folder holding the dataset folders; defaults to ``$SKFBNN_DATA_HOME``.
    n_splits : int, default=None
        Use the first ``n_splits`` splits; None means all available.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> X, y = load_uci("yacht", return_X_y=True)  # doctest: +SKIP
    >>> cv = UCISplits("yacht", n_splits=5)
    >>> cross_val_score(LinearRegression(), X, y, cv=cv).shape  # doctest: +SKIP
    (5,)
    """

    def __init__(
        self,
        name: str,
        *,
        data_home: PathLike | None = None,
        n_splits: int | None = None,
    ) -> None:
        self.name = name
        self.data_home = data_home
        self.n_splits = n_splits

    def _n_splits(self, folder: Path) -> int:
        available = _available_splits(folder)
        if self.n_splits is None:
            return available
        return _check_split_count(self.n_splits, "n_splits", 1, available)

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits that :meth:`split` yields."""
        return self._n_splits(_dataset_dir(self.name, self.data_home)[1])

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]:
        """Yield ``(train, test)`` index arrays; ``X`` must be the full dataset."""
        X, y, groups = indexable(X, y, groups)
        _, folder = _dataset_dir(self.name, self.data_home)
        n_splits = self._n_splits(folder)
        n_rows = _count_rows(folder)
        shape = getattr(X, "shape", None)
        n_samples = int(shape[0]) if shape else len(X)
        if n_samples != n_rows:
            raise ValueError(
                f"X must have as many rows as {self.name!r}'s data.txt "
                f"({n_rows}). Got {n_samples!r}."
            )
        return (_split_indices(folder, k, n_rows) for k in range(n_splits))
