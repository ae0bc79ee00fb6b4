"""Download machinery of the fetchers: the data home and verified, atomic downloads.

A file is downloaded into a temporary file next to its destination while its SHA-256 is
computed; only a file whose digest equals the one recorded in the package is renamed into
place (``os.replace``, atomic on one file system), so an interrupted or corrupted download
never leaves a file the loaders would read. Files already in the data home are used as they
are, without network access.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from ._checksums import DATA_HOME_SHA256

__all__ = ["get_data_home", "DownloadError", "ChecksumError"]

DATA_HOME_ENV = "SKFBNN_DATA"
DATA_URL_ENV = "SKFBNN_DATA_URL"
DEFAULT_DATA_HOME = Path("~") / "skfbnn_data"
_TIMEOUT_S = 60
_SCHEMES = ("https", "http", "file")
_CHUNK = 1 << 16
_logger = logging.getLogger("skfbnn.datasets")


class DownloadError(ConnectionError):
    """A data file could not be downloaded (no network, an unreachable mirror, a missing file).

    The message names the URL and where to put the file by hand instead.
    """


class ChecksumError(OSError):
    """A file's SHA-256 differs from the one recorded in the package; it was not kept.

    The message names the URL (or file), the expected and the actual digest.
    """


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Folder where the fetchers store the data, created if missing.

    The folder is ``data_home`` if given, else the value of the environment variable
    ``SKFBNN_DATA``, else ``skfbnn_data`` in the user's home folder (``~`` is expanded).
    It holds one sub-folder per data set (``uci/``, ``mnist1d/``, ``mushroom/``), the
    layout the local loaders (:func:`load_uci`, :class:`UCISplits`, ...) read, so it can
    be passed to them as their ``data_home``.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder to use; None means ``$SKFBNN_DATA`` or ``~/skfbnn_data``.

    Returns
    -------
    data_home : pathlib.Path
        The folder, which exists on return.

    Examples
    --------
    >>> import tempfile
    >>> from skfbnn.datasets import get_data_home
    >>> home = get_data_home(tempfile.mkdtemp())
    >>> home.is_dir()
    True
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or DEFAULT_DATA_HOME
    path = Path(data_home).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def base_url_or_env(base_url: str | None) -> str | None:
    """The mirror's base URL: ``base_url``, else ``$SKFBNN_DATA_URL``, else None."""
    if base_url is None:
        base_url = os.environ.get(DATA_URL_ENV) or None
    if base_url is None:
        return None
    if not isinstance(base_url, str) or urlsplit(base_url).scheme not in _SCHEMES:
        raise ValueError(
            f"The mirror address (base_url or {DATA_URL_ENV}) must start with one of "
            f"{', '.join(s + '://' for s in _SCHEMES)}. Got {base_url!r}."
        )
    return base_url.rstrip("/")


@dataclass(frozen=True)
class RemoteFile:
    """One file of the data home and where it comes from.

    ``path`` is its place in the data home (and on a mirror), ``url`` the public file and
    ``source_sha256`` that file's digest. ``convert`` (public bytes -> stored bytes) is set
    when the public file is another format; ``manual`` is then where a hand-downloaded
    public file is looked for in the data home, and ``check_converted`` says whether the
    converted bytes must equal the recorded digest of ``path``.
    """

    path: str
    url: str
    source_sha256: str
    convert: Callable[[bytes], bytes] | None = None
    manual: str | None = None
    check_converted: bool = True


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _manual_hint(file: RemoteFile, home: Path) -> str:
    return (
        f"Without network access, download {file.url} by hand and save it as "
        f"{str(home / (file.manual or file.path))!r}; or pass data_home= (or set "
        f"{DATA_HOME_ENV}) to a folder that already holds the data; or set {DATA_URL_ENV} "
        "(or pass base_url=) to a mirror of it."
    )


def _download(url: str, folder: Path, hint: str) -> tuple[Path, str]:
    """Stream ``url`` into a temporary file in ``folder``; return its path and SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=folder, prefix=".", suffix=".part")
    digest = hashlib.sha256()
    try:
        request = Request(url, headers={"User-Agent": "skfbnn"})
        with os.fdopen(fd, "wb") as out, urlopen(request, timeout=_TIMEOUT_S) as response:
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(name)
        if isinstance(exc, OSError | http.client.HTTPException):
            reason = getattr(exc, "reason", None) or exc
            if isinstance(exc, HTTPError):
                reason = f"HTTP {exc.code} {reason}"
            raise DownloadError(f"Could not download {url} ({reason}). {hint}") from exc
        raise
    return Path(name), digest.hexdigest()


def _write_atomic(target: Path, data: bytes) -> None:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(name, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(name)
        raise


def _mismatch(what: str, expected: str, actual: str, remedy: str) -> ChecksumError:
    return ChecksumError(
        f"SHA-256 mismatch for {what}: expected {expected}, got {actual}. The file was "
        f"not kept. {remedy}"
    )


def _ensure(file: RemoteFile, home: Path, base_url: str | None) -> None:
    """Put ``file`` into ``home`` unless it is there already."""
    target = home / file.path
    target.parent.mkdir(parents=True, exist_ok=True)
    hint = _manual_hint(file, home)
    if base_url is not None:  # a mirror holds the stored bytes under the same path
        url, expected, convert = f"{base_url}/{file.path}", DATA_HOME_SHA256[file.path], None
    else:
        url, expected, convert = file.url, file.source_sha256, file.convert
    manual = home / file.manual if convert is not None and file.manual else None
    if manual is not None and manual.is_file():
        source, actual, what = manual, sha256_of(manual), repr(str(manual))
        remedy = f"Delete it and download {url} again."
    else:
        _logger.debug("downloading %s to %s", url, target)
        source, actual = _download(url, target.parent, hint)
        what, remedy = url, "The download was corrupted or the server holds other data. " + hint
    temporary = source != manual
    try:
        if actual != expected:
            raise _mismatch(what, expected, actual, remedy)
        if convert is None:
            os.replace(source, target)
            temporary = False
            return
        data = convert(source.read_bytes())
        if file.check_converted:
            converted = hashlib.sha256(data).hexdigest()
            if converted != DATA_HOME_SHA256[file.path]:
                raise _mismatch(f"{str(target)!r} converted from {what}",
                                DATA_HOME_SHA256[file.path], converted, remedy)
        _write_atomic(target, data)
    finally:
        if temporary:
            with suppress(OSError):
                os.unlink(source)


def ensure_files(files: Sequence[RemoteFile], data_home: str | os.PathLike | None,
                 base_url: str | None, download_if_missing: bool) -> Path:
    """Make every file of ``files`` present in the data home; return the data home."""
    home = get_data_home(data_home)
    missing = [f for f in files if not (home / f.path).is_file()]
    if missing and not download_if_missing:
        raise FileNotFoundError(
            f"{len(missing)} data file(s) missing from {str(home)!r}, e.g. "
            f"{str(home / missing[0].path)!r}, and download_if_missing is False."
        )
    base_url = base_url_or_env(base_url) if missing else None
    if missing:
        _logger.info("downloading %d file(s) from %s into %s", len(missing),
                     base_url or "the public sources", home)
    for file in missing:
        _ensure(file, home, base_url)
    return home
