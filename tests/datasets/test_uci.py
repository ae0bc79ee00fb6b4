"""Tests for skfbnn.datasets.uci on a tiny fixture and, if present, the real data."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch

from skfbnn.datasets import (
    UCI_ALIASES,
    UCI_DATASETS,
    UCISplits,
    load_uci,
    load_uci_split,
    resolve_data_home,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL_UCI = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "uci"
needs_real_data = pytest.mark.skipif(
    not REAL_UCI.is_dir(), reason=f"real UCI data not found at {REAL_UCI}"
)

# tiny fixture: row i is [i, i / 2, 10 i + 1, -i]; features = columns 0, 1, 3,
# target = column 2; split 0 tests rows {0, 5, 10}, split 1 tests rows {3, 7, 11}
TINY_TEST_ROWS = [[0, 5, 10], [3, 7, 11]]


@pytest.fixture
def tiny_home(tmp_path: Path) -> Path:
    """A writable copy of the fixture folder (some tests break files in it)."""
    shutil.copytree(FIXTURES, tmp_path / "home")
    return tmp_path / "home"


def test_load_tiny_bunch_and_X_y():
    bunch = load_uci("tiny", data_home=FIXTURES)
    assert isinstance(bunch, Bunch)
    rows = np.arange(12.0)
    np.testing.assert_array_equal(bunch.data, np.column_stack([rows, rows / 2, -rows]))
    np.testing.assert_array_equal(bunch.target, 10 * rows + 1)
    np.testing.assert_array_equal(bunch.feature_indices, [0, 1, 3])
    assert bunch.target_index == 2 and bunch.n_splits == 2 and bunch.name == "tiny"
    X, y = load_uci("tiny", data_home=str(FIXTURES), return_X_y=True)
    assert X.dtype == y.dtype == np.float64 and X.shape == (12, 3) and y.shape == (12,)
    X[0, 0] = 99.0  # returned arrays are private copies
    assert load_uci("tiny", data_home=FIXTURES).data[0, 0] == 0.0


def test_data_home_from_environment(monkeypatch):
    monkeypatch.setenv("SKFBNN_DATA_HOME", str(FIXTURES))
    assert resolve_data_home() == FIXTURES
    assert load_uci("tiny").n_splits == 2
    monkeypatch.delenv("SKFBNN_DATA_HOME")
    with pytest.raises(ValueError, match="SKFBNN_DATA_HOME"):
        resolve_data_home()
    with pytest.raises(ValueError, match="data_home must be an existing folder"):
        resolve_data_home(FIXTURES / "does-not-exist")


def test_unknown_and_missing_datasets(tmp_path):
    with pytest.raises(ValueError, match="Unknown UCI dataset 'nope'.*bostonHousing"):
        load_uci("nope", data_home=FIXTURES)
    with pytest.raises(ValueError, match="No folder for dataset 'bostonHousing'"):
        load_uci("boston", data_home=tmp_path)
    with pytest.raises(ValueError, match="name must be a dataset name"):
        load_uci("../fixtures", data_home=FIXTURES)


@pytest.mark.parametrize(
    "broken_file",
    ["data.txt", "index_features.txt", "index_target.txt", "n_splits.txt"],
)
def test_missing_files_are_reported(tiny_home, broken_file):
    (tiny_home / "tiny" / broken_file).unlink()
    with pytest.raises(ValueError, match=f"Missing file '{broken_file}'"):
        load_uci("tiny", data_home=tiny_home)


def test_bad_index_files_are_reported(tiny_home):
    (tiny_home / "tiny" / "index_target.txt").write_text("2\n3\n")
    with pytest.raises(ValueError, match="one target column"):
        load_uci("tiny", data_home=tiny_home)
    (tiny_home / "tiny" / "index_target.txt").write_text("7\n")
    with pytest.raises(ValueError, match="one target column"):
        load_uci("tiny", data_home=tiny_home)
    (tiny_home / "tiny" / "index_target.txt").write_text("2.5\n")
    with pytest.raises(ValueError, match="non-negative integer indices"):
        load_uci("tiny", data_home=tiny_home)
    (tiny_home / "tiny" / "index_test_1.txt").write_text("12\n")
    with pytest.raises(ValueError, match="split 1 uses row 12"):
        list(UCISplits("tiny", data_home=tiny_home).split(np.zeros((12, 3))))


def test_splits_follow_the_index_files():
    X, y = load_uci("tiny", data_home=FIXTURES, return_X_y=True)
    cv = UCISplits("tiny", data_home=FIXTURES)
    assert cv.get_n_splits() == 2
    splits = list(cv.split(X, y))
    assert len(splits) == 2
    for k, ((train, test), expected_test) in enumerate(zip(splits, TINY_TEST_ROWS, strict=False)):
        np.testing.assert_array_equal(test, expected_test)
        assert sorted(train) == sorted(set(range(12)) - set(expected_test))
        X_tr, X_te, y_tr, y_te = load_uci_split("tiny", k, data_home=FIXTURES)
        np.testing.assert_array_equal(y_te, 10 * np.asarray(expected_test) + 1)
        np.testing.assert_array_equal(X_tr, X[train])
        np.testing.assert_array_equal(y_tr, y[train])
        np.testing.assert_array_equal(X_te[:, 0], expected_test)


def test_splitter_n_splits_and_repr():
    cv = UCISplits("tiny", data_home="some/where", n_splits=1)
    assert repr(cv) == "UCISplits(data_home='some/where', n_splits=1, name='tiny')"
    cv = UCISplits("tiny", data_home=FIXTURES, n_splits=1)
    assert cv.get_n_splits() == 1 and len(list(cv.split(np.zeros((12, 3))))) == 1
    for bad in (0, 3, 1.5, True):
        with pytest.raises(ValueError, match=r"n_splits must be an int in \[1, 2\]"):
            UCISplits("tiny", data_home=FIXTURES, n_splits=bad).get_n_splits()


def test_split_checks_number_of_rows():
    cv = UCISplits("tiny", data_home=FIXTURES)
    with pytest.raises(ValueError, match=r"as many rows as 'tiny'.*\(12\)\. Got 11\."):
        cv.split(np.zeros((11, 3)))


def test_load_uci_split_rejects_bad_split_numbers():
    for bad in (-1, 2, "0"):
        with pytest.raises(ValueError, match=r"split must be an int in \[0, 1\]"):
            load_uci_split("tiny", bad, data_home=FIXTURES)


def test_splitter_drives_cross_val_score_and_grid_search():
    X, y = load_uci("tiny", data_home=FIXTURES, return_X_y=True)
    cv = UCISplits("tiny", data_home=FIXTURES)
    # y is exactly linear in the features, so the held-out R^2 is 1
    scores = cross_val_score(LinearRegression(), X, y, cv=cv)
    np.testing.assert_allclose(scores, [1.0, 1.0])
    grid = {"fit_intercept": [False, True]}
    search = GridSearchCV(LinearRegression(), grid, cv=cv).fit(X, y)
    assert search.best_params_ == {"fit_intercept": True} and search.n_splits_ == 2


# ----------------------------------------------------------------------------
# the real benchmark files (shared/data/uci next to the repository)
# ----------------------------------------------------------------------------
# name: (rows, features, splits, train rows, test rows) from shared/data/README.md
README_TABLE = {
    "bostonHousing": (506, 13, 20, 455, 51),
    "concrete": (1030, 8, 20, 927, 103),
    "energy": (768, 8, 20, 691, 77),
    "kin8nm": (8192, 8, 20, 7373, 819),
    "protein-tertiary-structure": (45730, 9, 5, 41157, 4573),
    "wine-quality-red": (1599, 11, 20, 1439, 160),
    "yacht": (308, 6, 20, 277, 31),
}


def test_readme_table_lists_every_dataset():
    assert set(README_TABLE) == set(UCI_DATASETS)
    assert set(UCI_ALIASES.values()) <= set(UCI_DATASETS)


@needs_real_data
@pytest.mark.parametrize("name", UCI_DATASETS)
def test_real_dataset_shapes_and_splits(name):
    n_rows, n_features, n_splits, n_train, n_test = README_TABLE[name]
    bunch = load_uci(name, data_home=REAL_UCI)
    assert bunch.data.shape == (n_rows, n_features)
    assert bunch.target.shape == (n_rows,)
    assert bunch.n_splits == n_splits and bunch.name == name
    assert np.all(np.isfinite(bunch.data)) and np.all(np.isfinite(bunch.target))
    cv = UCISplits(name, data_home=REAL_UCI)
    assert cv.get_n_splits() == n_splits
    splits = list(cv.split(bunch.data, bunch.target))
    assert len(splits) == n_splits
    for train, test in splits:
        assert len(train) == n_train and len(test) == n_test
        assert len(np.intersect1d(train, test)) == 0
        np.testing.assert_array_equal(np.union1d(train, test), np.arange(n_rows))
    X_tr, X_te, y_tr, y_te = load_uci_split(name, n_splits - 1, data_home=REAL_UCI)
    train, test = splits[-1]
    np.testing.assert_array_equal(X_tr, bunch.data[train])
    np.testing.assert_array_equal(y_te, bunch.target[test])


@needs_real_data
@pytest.mark.parametrize("alias", sorted(UCI_ALIASES))
def test_real_aliases(alias):
    bunch = load_uci(alias, data_home=REAL_UCI)
    assert bunch.name == UCI_ALIASES[alias]
    assert bunch.data.shape[0] == README_TABLE[bunch.name][0]


@needs_real_data
def test_real_yacht_cross_val_score_with_pipeline():
    X, y = load_uci("yacht", data_home=REAL_UCI, return_X_y=True)
    pipe = make_pipeline(StandardScaler(), LinearRegression())
    cv = UCISplits("yacht", data_home=REAL_UCI)
    rmse = -cross_val_score(pipe, X, y, cv=cv, scoring="neg_root_mean_squared_error")
    assert rmse.shape == (20,)
    # linear regression on yacht is poor but finite (published baseline ~ 9)
    assert np.all(np.isfinite(rmse)) and 5.0 < rmse.mean() < 13.0
