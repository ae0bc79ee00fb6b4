"""Property-based tests of the estimators' input validation and of prediction's invariances.

Any mix of shapes, dtypes, NaN/inf positions, constant or duplicated columns and tiny or
huge scales ends in a clear error (a ``ValueError`` naming the input, or a divergence
error naming its causes), in warnings of a named category, or in a fit whose predictions
are finite. Predictions do not depend on the rows' order nor on how the rows are split
into blocks. The default run is sized for two cores (``FAST_EXAMPLES`` examples a
property, tiny budgets); ``-m slow`` runs the same properties on ``SLOW_EXAMPLES``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import sklearn.exceptions
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import skfbnn
import skfbnn.exceptions
import skfbnn.posterior as posterior_module

FAST_EXAMPLES = 25
SLOW_EXAMPLES = 300

TINY = {
    skfbnn.SGLDRegressor: dict(n_chains=2, n_burnin=20, n_samples=2, thinning=1,
                               min_epochs=0),
    skfbnn.DeepEnsembleRegressor: dict(n_estimators=2, n_iter=20, min_epochs=0,
                                       hidden_layer_sizes=(8,)),
    skfbnn.BBBRegressor: dict(n_iter=20, n_samples=3, min_epochs=0, hidden_layer_sizes=(8,)),
    skfbnn.SGLDClassifier: dict(n_chains=2, n_burnin=20, n_samples=2, thinning=1,
                                min_epochs=0),
    skfbnn.DeepEnsembleClassifier: dict(n_estimators=2, n_iter=20, min_epochs=0,
                                        hidden_layer_sizes=(8,)),
}
REGRESSORS = [c for c in TINY if "Regressor" in c.__name__]
CLASSIFIERS = [c for c in TINY if "Classifier" in c.__name__]

NAMED_WARNINGS = tuple(
    obj for module in (skfbnn.exceptions, sklearn.exceptions) for obj in vars(module).values()
    if isinstance(obj, type) and issubclass(obj, Warning))
"""The categories a fit may warn with: skfbnn's and scikit-learn's own."""

CLEAR = re.compile(
    r"\bX\b|\by\b|sample_weight|feature|sample|class|Complex data|could not convert|"
    r"array|dtype")
"""What a refusal's message names: the input (X, y, sample_weight), its samples,
features or classes, or what about its array or dtype is refused."""


def _estimator(cls):
    return cls(random_state=0, device="cpu", **TINY[cls])


# ------------------------------------------------------------------ strategies
DEFECTS = ("none", "nan", "inf", "1d", "3d", "no rows", "no columns", "rows mismatch",
           "y nan", "y inf", "bad weight", "strings", "one class")
"""What an example may get wrong, at most one at a time (half the examples: none)."""


@st.composite
def matrices(draw, n_rows):
    """A valid ``X`` of ``n_rows`` rows: any number of columns, dtype, scale, memory layout,
    constant or duplicated columns."""
    d = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-12, 1e-6, 1e-3, 1.0, 1.0, 1e3, 1e6, 1e12]))
    X = rng.normal(size=(n_rows, d)) * scale
    if draw(st.booleans()):  # a constant column
        X[:, draw(st.integers(0, d - 1))] = draw(st.sampled_from([0.0, 1.0, -3e5]))
    if d >= 2 and draw(st.booleans()):  # a duplicated column
        X[:, d - 1] = X[:, 0]
    dtype = draw(st.sampled_from(["float64", "float64", "float32", "int64", "bool", "object"]))
    if dtype == "int64":
        X = np.round(X).clip(-2**62, 2**62)
    X = X.astype(dtype)
    return np.asfortranarray(X) if draw(st.booleans()) else X


@st.composite
def targets(draw, n_rows):
    """A valid regression ``y``: any scale, constant now and then, one or two columns."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.sampled_from([None, None, 1, 2]))
    y = rng.normal(size=(n_rows, k or 1)) * draw(
        st.sampled_from([1e-12, 1e-3, 1.0, 1.0, 1e3, 1e12]))
    if draw(st.integers(0, 4)) == 0:
        y[:] = draw(st.sampled_from([0.0, 7.5]))  # constant
    return y[:, 0] if k is None else y


@st.composite
def labels(draw, n_rows):
    """Valid class labels of 2 to 4 classes: ints, strings, bools or floats."""
    n_classes = draw(st.integers(2, 4))
    kind = draw(st.sampled_from(["int", "str", "bool", "float"]))
    if kind == "bool":
        n_classes = 2
    codes = np.arange(n_rows) % n_classes  # every class present
    codes = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).permutation(codes)
    if kind == "str":
        return np.array(["a", "bb", "c c", "d"])[codes]
    if kind == "bool":
        return codes == 1
    return codes.astype(float) if kind == "float" else codes


@st.composite
def problems(draw, task):
    """``(X, y, sample_weight)``: valid data with at most one defect."""
    n = draw(st.integers(4, 12))
    X = draw(matrices(n), label="valid X")
    y = draw(targets(n) if task == "regression" else labels(n), label="valid y")
    w = draw(st.one_of(st.none(), st.lists(st.sampled_from([1.0, 2.0, 0.5, 0.0]),
                                            min_size=n, max_size=n).map(np.array)))
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    defect = draw(st.sampled_from(DEFECTS[:1] * (len(DEFECTS) - 1) + DEFECTS[1:]))
    event(f"defect: {defect}")
    i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, X.shape[1] - 1))
    if defect in ("nan", "inf"):
        X = X.astype("float64" if X.dtype.kind in "iub" else X.dtype)
        X[i, j] = np.nan if defect == "nan" else -np.inf
    elif defect == "1d":
        X = X.ravel()
    elif defect == "3d":
        X = X[..., None]
    elif defect == "no rows":
        X, y, w = X[:0], y[:0], None if w is None else w[:0]
    elif defect == "no columns":
        X = X[:, :0]
    elif defect == "rows mismatch":
        y = y[:-1]
    elif defect in ("y nan", "y inf") and task == "regression":
        y = np.array(y, dtype=float)
        y[(i, 0)[:y.ndim]] = np.nan if defect == "y nan" else np.inf
    elif defect == "bad weight":
        w = np.ones(n) if w is None else w
        w[i] = draw(st.sampled_from([-1.0, np.nan, np.inf]))
    elif defect == "strings":
        X = X.astype(object)
        X[i, j] = "a"
    elif defect == "one class" and task == "classification":
        y = np.full(n, y[0])
    return X, y, w


# ------------------------------------------------------------------ the oracle
def _fit_outcome(est, X, y, sample_weight=None):
    """Fit; assert the outcome is a clear refusal, named warnings, or finite predictions."""
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        try:
            est.fit(X, y, sample_weight=sample_weight)
        except ValueError as err:
            assert CLEAR.search(str(err)), f"unclear refusal: {err!r}"
            return "refused"
        except skfbnn.DivergenceError as err:
            assert "Likely causes" in str(err), f"a divergence without causes: {err!r}"
            return "diverged"
        if hasattr(est, "predict_proba"):
            proba = est.predict_proba(X)
            assert np.isfinite(proba).all()
            np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-9)
            assert set(np.unique(est.predict(X))) <= set(est.classes_)
        else:
            mean, std = est.predict(X, return_std=True)
            assert np.isfinite(mean).all() and np.isfinite(std).all() and (std >= 0).all()
        # fit's and predict's warnings: every one of a named category
        unnamed = [w for w in found if not issubclass(w.category, NAMED_WARNINGS)]
        assert not unnamed, [f"{w.category.__name__}: {w.message}" for w in unnamed]
    return "fitted"


def _regression_property(data):
    cls = data.draw(st.sampled_from(REGRESSORS), label="estimator")
    X, y, w = data.draw(problems("regression"), label="X, y, sample_weight")
    event(_fit_outcome(_estimator(cls), X, y, w))


def _classification_property(data):
    cls = data.draw(st.sampled_from(CLASSIFIERS), label="estimator")
    X, y, w = data.draw(problems("classification"), label="X, y, sample_weight")
    event(_fit_outcome(_estimator(cls), X, y, w))


def _profile(n):
    return settings(max_examples=n, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_profile(FAST_EXAMPLES)
@given(st.data())
def test_any_regression_input_is_refused_clearly_or_fitted_finitely(data):
    _regression_property(data)


@_profile(FAST_EXAMPLES)
@given(st.data())
def test_any_classification_input_is_refused_clearly_or_fitted_finitely(data):
    _classification_property(data)


@pytest.mark.slow
@_profile(SLOW_EXAMPLES)
@given(st.data())
def test_any_regression_input_long(data):
    _regression_property(data)


@pytest.mark.slow
@_profile(SLOW_EXAMPLES)
@given(st.data())
def test_any_classification_input_long(data):
    _classification_property(data)


# ------------------------------------------------------------------ invariances
_FITTED: dict = {}


def _fitted(cls):
    """One fit per estimator on 30 rows of 3 columns, for the prediction properties."""
    if cls not in _FITTED:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(30, 3))
        y = np.sin(X[:, 0]) + X[:, 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[cls] = _estimator(cls).fit(X, y if cls in REGRESSORS else y > 0)
    return _FITTED[cls]


def _summaries(est, X):
    if hasattr(est, "predict_proba"):
        return [est.predict_proba(X)]
    return [*est.predict(X, return_std=True), est.predict_std(X, kind="epistemic")]


@st.composite
def queries(draw):
    """Rows to predict at (any scale, 1 to 40 rows), a permutation of them and a partition
    of them into consecutive parts."""
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(n, 3)) * draw(st.sampled_from([1e-6, 1.0, 10.0, 1e4]))
    cuts = sorted(set(draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=4))) - {n})
    return X, rng.permutation(n), cuts


def _invariance_property(cls, query):
    """Equal up to float64 rounding of the outputs (``atol``: the epistemic std of members
    that nearly agree is a difference of nearly equal numbers, 1e-5 known to 1e-17)."""
    est = _fitted(cls)
    X, order, cuts = query
    whole = _summaries(est, X)
    atol = 1e-12 * max(1.0, *(np.abs(s).max() for s in whole))
    for got, expected in zip(_summaries(est, X[order]), whole, strict=True):
        np.testing.assert_allclose(got, expected[order], rtol=1e-12, atol=atol)
    parts = [_summaries(est, part) for part in np.split(X, cuts)]
    for i, expected in enumerate(whole):
        np.testing.assert_allclose(np.concatenate([p[i] for p in parts]), expected,
                                   rtol=1e-12, atol=atol)


@pytest.mark.parametrize("cls", list(TINY), ids=[c.__name__ for c in TINY])
@_profile(FAST_EXAMPLES)
@given(query=queries(), block=st.integers(1, 12))
def test_predictions_do_not_depend_on_row_order_or_blocks(cls, query, block):
    """Also with the fitted estimator's own blocks of ``block`` rows (``block_rows``)."""
    _invariance_property(cls, query)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(posterior_module, "block_rows", lambda posterior, **kwargs: block)
        blocked = _summaries(_fitted(cls), query[0])
    for got, expected in zip(blocked, _summaries(_fitted(cls), query[0]), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12,
                                   atol=1e-12 * max(1.0, np.abs(expected).max()))


@pytest.mark.slow
@pytest.mark.parametrize("cls", list(TINY), ids=[c.__name__ for c in TINY])
@_profile(SLOW_EXAMPLES)
@given(query=queries())
def test_predictions_do_not_depend_on_row_order_or_blocks_long(cls, query):
    _invariance_property(cls, query)
