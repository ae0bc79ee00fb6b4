"""Warnings issued in ``fit`` are located at the user's line, not inside skfbnn or
scikit-learn (``skfbnn._warnings.warn_at_caller``)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import skfbnn
from skfbnn._warnings import warn_at_caller
from skfbnn.exceptions import ConstantTargetWarning, DataScaleWarning

from .conftest import FAST


def _line() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def _recorded(fit):
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        line = fit()
    return found, line


def test_a_fit_warning_points_at_the_line_that_called_fit():
    rng = np.random.default_rng(0)
    X = 1e-4 * rng.normal(size=(30, 2))  # far below unit scale: a DataScaleWarning
    y = X[:, 0] * 1e4
    est = skfbnn.SGLDRegressor(random_state=0, device="cpu", **FAST)
    found, line = _recorded(lambda: (est.fit(X, y), _line())[1])
    scale = [w for w in found if issubclass(w.category, DataScaleWarning)]
    assert scale, [str(w.message) for w in found]
    assert all(w.filename == __file__ and w.lineno == line for w in scale)


def test_through_a_pipeline_the_warning_still_points_at_the_users_line():
    X = np.random.default_rng(1).normal(size=(20, 2))
    pipe = make_pipeline(FunctionTransformer(), skfbnn.SGLDRegressor(
        random_state=0, device="cpu", **FAST))
    found, line = _recorded(lambda: (pipe.fit(X, np.full(20, 3.0)), _line())[1])
    constant = [w for w in found if issubclass(w.category, ConstantTargetWarning)]
    assert constant and all(w.filename == __file__ and w.lineno == line for w in constant)


def test_warn_at_caller_skips_the_given_folders():
    def inner():  # stands for a package's own frames, given by this file's folder
        warn_at_caller("deep", UserWarning, prefixes=(str(__file__),))

    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        inner()  # every frame here is skipped: the location is beyond this file
        warn_at_caller("here", UserWarning, prefixes=("/nowhere/",))
    assert found[0].filename != __file__
    assert found[1].filename == __file__ and "here" in str(found[1].message)
