"""Benchmark configurations: which estimator a method name means."""

from __future__ import annotations

from typing import Any

from sklearn.base import clone
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from ..estimators import BayesianNetRegressor
from ..inference.registry import METHODS

__all__ = ["make_regression_pipeline", "split_params"]


def split_params(params: dict[str, Any], estimator: type) -> tuple[dict, dict]:
    """``params`` split into the generic ``estimator``'s own parameters (``hidden_layer_sizes``,
    ``noise_std``, ...) and the rest, its ``method_params``.

    Examples
    --------
    >>> split_params({"noise_std": 1.0, "step_size": 0.5}, BayesianNetRegressor)
    ({'noise_std': 1.0}, {'step_size': 0.5})
    """
    own = estimator().get_params()
    return ({k: v for k, v in params.items() if k in own},
            {k: v for k, v in params.items() if k not in own})


def make_regression_pipeline(
    method: str, *, random_state: int = 0, device: str = "auto", **method_params: Any
) -> Pipeline:
    """``StandardScaler`` then :class:`BayesianNetRegressor` with the method's defaults.

    Every data set uses the same (default) hyperparameters unless
    ``method_params`` overrides them; keys that are parameters of
    :class:`BayesianNetRegressor` itself (``hidden_layer_sizes``,
    ``activation``, ...) set those, the others go to its ``method_params``.

    Examples
    --------
    >>> pipe = make_regression_pipeline("sgld", hidden_layer_sizes=(20,), step_size=1.0)
    >>> est = pipe[-1]
    >>> est.hidden_layer_sizes, est.method_params
    ((20,), {'step_size': 1.0})
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}. Got {method!r}.")
    top, rest = split_params(method_params, BayesianNetRegressor)
    est = BayesianNetRegressor(
        method=method, method_params=rest or None, random_state=random_state, device=device,
        **top,
    )
    return make_pipeline(StandardScaler(), clone(est))
