"""Tests for the MNIST-1D and Mushroom loaders on tiny fixtures and, if present, the real data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skfbnn.datasets import MUSHROOM_FEATURES, load_mnist1d, load_mushroom

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_mnist1d = pytest.mark.skipif(not (SHARED / "mnist1d").is_dir(),
                                   reason="MNIST-1D not found")
needs_mushroom = pytest.mark.skipif(not (SHARED / "mushroom").is_dir(),
                                    reason="Mushroom not found")


def _tiny_mnist1d(folder: Path) -> dict:
    rng = np.random.default_rng(0)
    arrays = dict(x=rng.normal(size=(6, 4)), y=np.arange(6) % 3,
                  x_test=rng.normal(size=(3, 4)), y_test=np.arange(3), t=np.linspace(0, 1, 4))
    folder.mkdir(parents=True)
    np.savez(folder / "mnist1d_data.npz", **arrays)
    return arrays


def test_mnist1d_reads_the_npz_in_either_place(tmp_path):
    arrays = _tiny_mnist1d(tmp_path / "home" / "mnist1d")
    for home in (tmp_path / "home", tmp_path / "home" / "mnist1d"):
        data = load_mnist1d(data_home=home)
        np.testing.assert_array_equal(data.data, arrays["x"])
        np.testing.assert_array_equal(data.target_test, arrays["y_test"])
        assert data.data.dtype == np.float64 and data.target.dtype == np.int64
        X, y, Xt, yt = load_mnist1d(data_home=home, return_X_y=True)
        assert X.shape == (6, 4) and Xt.shape == (3, 4) and y.tolist() == [0, 1, 2, 0, 1, 2]


def test_mnist1d_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="No MNIST-1D file"):
        load_mnist1d(data_home=tmp_path)
    np.savez(tmp_path / "mnist1d_data.npz", x=np.zeros((2, 3)), y=np.zeros(2))
    with pytest.raises(ValueError, match="missing"):
        load_mnist1d(data_home=tmp_path)
    monkeypatch.delenv("SKFBNN_DATA_HOME", raising=False)
    with pytest.raises(ValueError, match="SKFBNN_DATA_HOME"):
        load_mnist1d()


@needs_mnist1d
def test_mnist1d_real_shapes():
    data = load_mnist1d(data_home=SHARED)
    assert data.data.shape == (4000, 40) and data.data_test.shape == (1000, 40)
    assert sorted(np.unique(data.target)) == list(range(10))


def _write_mushroom(folder: Path, rows: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agaricus-lepiota.data").write_text("\n".join(rows) + "\n")


def test_mushroom_one_hot_encoding_by_hand(tmp_path):
    base = ["x"] * len(MUSHROOM_FEATURES)
    second = list(base)
    second[0], second[10] = "b", "?"  # cap-shape b; stalk-root missing
    rows = ["e," + ",".join(base), "p," + ",".join(second), "p," + ",".join(base)]
    _write_mushroom(tmp_path / "mushroom", rows)
    data = load_mushroom(data_home=tmp_path)
    # cap-shape and stalk-root take two letters each, the other 20 features one
    assert data.data.shape == (3, 24)
    assert data.feature_names[:2].tolist() == ["cap-shape=b", "cap-shape=x"]
    assert "stalk-root=?" in data.feature_names.tolist()
    np.testing.assert_array_equal(data.data[:, :2], [[0, 1], [1, 0], [0, 1]])
    assert np.all(data.data.sum(axis=1) == len(MUSHROOM_FEATURES))  # one hot per feature
    assert data.target.tolist() == [1, 0, 0]
    X, y = load_mushroom(data_home=tmp_path / "mushroom", return_X_y=True)
    np.testing.assert_array_equal(X, data.data)


def test_mushroom_rejects_bad_rows(tmp_path):
    _write_mushroom(tmp_path, ["q," + ",".join(["x"] * len(MUSHROOM_FEATURES))])
    with pytest.raises(ValueError, match="label e or p"):
        load_mushroom(data_home=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="No Mushroom file"):
        load_mushroom(data_home=tmp_path / "empty")


@needs_mushroom
def test_mushroom_real_shapes():
    X, y = load_mushroom(data_home=SHARED, return_X_y=True)
    assert X.shape == (8124, 117) and int(y.sum()) == 4208
