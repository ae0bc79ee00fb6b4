"""Benchmark configurations: which estimator a method name means."""

from __future__ import annotations

from typing import Any

from sklearn.base import clone
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from ..estimators import BayesianNetRegressor
from ..inference.registry import METHODS

__all__ = ["make_regression_pipeline"]


def make_regression_pipeline(
    method: str, *, random_state: int = 0, device: str = "auto", **method_params: Any
) -> Pipeline:
    """``StandardScaler`` then :class:`BayesianNetRegressor` with the method's defaults.

    Every data set uses the same (default) hyperparameters unless
    ``method_params`` overrides them.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}. Got {method!r}.")
    est = BayesianNetRegressor(
        method=method, method_params=method_params or None, random_state=random_state,
        device=device,
    )
    return make_pipeline(StandardScaler(), clone(est))
