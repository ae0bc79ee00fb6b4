"""Classification contract: labels, probability columns, binary and multiclass."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import skfbnn

from ._cases import CLASSIFIERS, fitted, ids, make

classifiers = pytest.mark.parametrize("cls", CLASSIFIERS, ids=ids(CLASSIFIERS))

CENTRES = np.array([[0.0, 4.0], [4.0, -2.0], [-4.0, -2.0]])


def _blobs(labels, n_per=20, seed=2):
    """Three well-separated clusters; cluster ``i`` gets ``labels[i]``."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([c + 0.7 * rng.normal(size=(n_per, 2)) for c in CENTRES])
    y = np.repeat(np.asarray(labels), n_per)
    order = rng.permutation(len(X))  # labels not sorted in the data
    return X[order], y[order]


def _check_probabilities(clf, X):
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), len(clf.classes_))
    assert proba.dtype == np.float64
    assert ((proba >= 0) & (proba <= 1)).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    log_proba = clf.predict_log_proba(X)
    assert log_proba.shape == proba.shape
    assert_allclose(log_proba, np.log(proba), rtol=1e-12, atol=0)
    draws = clf.predict_proba_draws(X)  # predict_proba is their mean
    assert draws.ndim == 3 and draws.shape[1:] == proba.shape and draws.shape[0] > 1
    assert_allclose(draws.sum(axis=2), 1.0, rtol=0, atol=1e-12)
    assert_allclose(draws.mean(axis=0), proba, rtol=0, atol=1e-12)
    pred = clf.predict(X)
    assert pred.shape == (len(X),)
    assert np.isin(pred, clf.classes_).all()
    assert_array_equal(pred, clf.classes_[np.argmax(proba, axis=1)])
    return proba, pred


@classifiers
def test_binary_string_labels(cls, classification_data):
    X, y = classification_data  # "yes" where x0 + x1 > 0, else "no"
    clf = fitted(cls, X, y)
    assert_array_equal(clf.classes_, ["no", "yes"])
    proba, pred = _check_probabilities(clf, X)
    assert pred.dtype.kind == "U"
    # Column order follows classes_: column 1 is P("yes"), high where x0 + x1 >> 0.
    score = X[:, 0] + X[:, 1]
    assert proba[score > 1, 1].min() > 0.5
    assert proba[score < -1, 0].min() > 0.5
    assert (pred == y).mean() > 0.85


@classifiers
def test_three_classes(cls):
    labels = ["c", "a", "b"]  # cluster i gets labels[i]; classes_ is sorted
    X, y = _blobs(labels)
    clf = fitted(cls, X, y)
    assert_array_equal(clf.classes_, ["a", "b", "c"])
    proba, pred = _check_probabilities(clf, X)
    assert (pred == y).mean() > 0.9
    # At each cluster centre the column of that cluster's label is the largest.
    centre_proba = clf.predict_proba(CENTRES)
    for i, label in enumerate(labels):
        column = list(clf.classes_).index(label)
        assert np.argmax(centre_proba[i]) == column
        assert centre_proba[i, column] > 0.6


@classifiers
def test_order_preserving_relabelling_gives_identical_probabilities(
    cls, classification_data
):
    X, y = classification_data
    ints = np.where(y == "yes", 7, -3)  # "no" < "yes" and -3 < 7: same encoding
    a = fitted(cls, X, y)
    b = fitted(cls, X, ints)
    assert_array_equal(b.classes_, [-3, 7])
    assert_array_equal(b.predict_proba(X), a.predict_proba(X))
    assert_array_equal(b.predict(X), np.where(a.predict(X) == "yes", 7, -3))
    assert b.predict(X).dtype.kind == "i"


@classifiers
@pytest.mark.parametrize("label", ["only", 3])
def test_single_class_raises(cls, label, classification_data):
    X, _ = classification_data
    with pytest.raises(ValueError, match="class"):
        make(cls).fit(X, np.full(len(X), label))


@classifiers
def test_continuous_target_raises(cls, classification_data):
    X, _ = classification_data
    y = np.linspace(0.0, 1.0, len(X))
    with pytest.raises(ValueError, match="continuous"):
        make(cls).fit(X, y)


def test_two_dimensional_target_raises(classification_data):
    X, y = classification_data
    with pytest.raises(ValueError, match="1d"):
        make(skfbnn.SGLDClassifier).fit(X, np.c_[y, y])


@classifiers
def test_float32_inputs_and_float64_outputs(cls, classification_data):
    X, y = classification_data
    clf = fitted(cls, X.astype(np.float32), y)
    proba, _ = _check_probabilities(clf, X.astype(np.float32))
    ref = fitted(cls, X, y).predict_proba(X)
    assert_allclose(proba, ref, rtol=1e-4, atol=1e-5)


@classifiers
def test_dtype_float64_runs(cls, classification_data):
    X, y = classification_data
    clf = fitted(cls, X, y, dtype="float64")
    proba, pred = _check_probabilities(clf, X)
    assert np.isfinite(proba).all() and (pred == y).mean() > 0.85
