"""The classifiers a classification run compares: any registered method in a
:class:`~skfbnn.BayesianNetClassifier`, scikit-learn's ``MLPClassifier`` alone and as an
ensemble of five (the plain baselines a user would pick), and, with the convolutional
network, an ensemble of five plain CNNs (``cnn_ensemble``).

``network="cnn"`` gives every skfbnn classifier the package's CNN for the data set at its
defaults (:data:`CNN_NETWORKS`); the ``MLPClassifier`` baselines stay MLPs. ``cnn_ensemble``
is the deep-ensemble trainer of the ``ensemble`` method (Adam, the same steps, batch size,
learning-rate schedule and held-out rows) with ``prior_std=None``: five CNNs trained by
maximum likelihood from independent initialisations, with no weight prior. The ``ensemble``
method itself is not that baseline: the classifier's members are MAP estimates under a
Gaussian weight prior (``prior_std=3``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

__all__ = ["BASELINES", "CNN_BASELINES", "CNN_NETWORKS", "NETWORKS", "MLPEnsembleClassifier",
           "make_classifier", "baseline_params", "network_spec"]

BASELINES = ("mlp", "mlp_ensemble", "cnn_ensemble")
"""Baselines: scikit-learn's ``MLPClassifier((50,), max_iter=2000)``, five of them
(random states ``5 * random_state + i``) averaged, and five plain CNNs (``network="cnn"``
only)."""
CNN_BASELINES = ("cnn_ensemble",)
"""Baselines that exist only with ``network="cnn"``."""
NETWORKS = ("mlp", "cnn")
"""``mlp``: each method's built-in MLP; ``cnn``: the package's CNN for the data set."""
CNN_NETWORKS = {"mnist1d": ("CNN1d", (1, 40)), "digits": ("CNN2d", (1, 8, 8))}
"""Data set -> (network in :mod:`skfbnn.nn`, ``input_shape``) of ``network="cnn"``."""
PLAIN_ENSEMBLE = {"prior_std": None, "n_estimators": 5}
"""What makes the ``ensemble`` method the ``cnn_ensemble`` baseline: maximum likelihood."""


def network_spec(network: str, dataset: str) -> dict:
    """The estimator parameters ``network`` and ``input_shape`` of ``network`` on ``dataset``
    (empty for ``"mlp"``: the methods' own MLPs).

    Examples
    --------
    >>> spec = network_spec("cnn", "mnist1d")
    >>> spec["network"].__name__, spec["input_shape"]
    ('CNN1d', (1, 40))
    >>> network_spec("mlp", "digits")
    {}
    """
    from .. import nn as zoo

    if network not in NETWORKS:
        raise ValueError(f"network must be one of {NETWORKS}. Got {network!r}.")
    if network == "mlp":
        return {}
    if dataset not in CNN_NETWORKS:
        raise ValueError(f"network='cnn' has a CNN for {sorted(CNN_NETWORKS)} only; "
                         f"got the data set {dataset!r}.")
    name, shape = CNN_NETWORKS[dataset]
    return {"network": getattr(zoo, name), "input_shape": shape}


class MLPEnsembleClassifier(ClassifierMixin, BaseEstimator):
    """``n_estimators`` scikit-learn ``MLPClassifier`` s with different seeds, averaged.

    Member ``i`` has ``random_state = n_estimators * random_state + i``.

    Parameters
    ----------
    n_estimators : int, default=5
    hidden_layer_sizes : tuple of int, default=(50,)
    max_iter : int, default=2000
    random_state : int, default=0

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> ens = MLPEnsembleClassifier(n_estimators=2, max_iter=300).fit(X, y)
    >>> ens.predict_proba_draws(X[:3]).shape
    (2, 3, 3)
    """

    def __init__(self, n_estimators: int = 5, hidden_layer_sizes: tuple = (50,),
                 max_iter: int = 2000, random_state: int = 0):
        self.n_estimators = n_estimators
        self.hidden_layer_sizes = hidden_layer_sizes
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y):
        """Fit every member on ``(X, y)``."""

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        if not (isinstance(self.n_estimators, int) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be a positive int. Got {self.n_estimators!r}.")
        self.estimators_ = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for i in range(self.n_estimators):
                member = MLPClassifier(
                    hidden_layer_sizes=self.hidden_layer_sizes, max_iter=self.max_iter,
                    random_state=self.n_estimators * self.random_state + i)
                self.estimators_.append(member.fit(X, y))
        self.classes_ = self.estimators_[0].classes_
        return self

    def predict_proba_draws(self, X) -> np.ndarray:
        """Class probabilities of every member, shape ``(n_estimators, n, n_classes)``."""
        return np.stack([m.predict_proba(X) for m in self.estimators_])

    def predict_proba(self, X) -> np.ndarray:
        """Mean of the members' class probabilities."""
        return self.predict_proba_draws(X).mean(axis=0)

    def predict(self, X) -> np.ndarray:
        """The class of highest mean probability."""
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def make_classifier(method: str, *, random_state: int = 0, device: str = "auto",
                    network: dict | None = None, **params: Any):
    """``StandardScaler`` then the classifier that ``method`` names.

    ``mlp`` and ``mlp_ensemble`` are the scikit-learn baselines (:data:`BASELINES`);
    any registry key gives :class:`~skfbnn.BayesianNetClassifier` with that method,
    ``params`` split between its own parameters and ``method_params``, and the estimator
    parameters ``network`` (:func:`network_spec`); ``cnn_ensemble`` is the ``ensemble``
    method with :data:`PLAIN_ENSEMBLE` (``params`` override it) and needs a ``network``.

    Examples
    --------
    >>> make_classifier("mlp_ensemble", random_state=3)[-1].random_state
    3
    >>> make_classifier("sgld", n_burnin=10)[-1].method_params
    {'n_burnin': 10}
    """
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..estimators import BayesianNetClassifier
    from ..inference.registry import METHODS
    from .configs import split_params

    if method == "mlp":
        est = MLPClassifier(hidden_layer_sizes=(50,), max_iter=2000, random_state=random_state)
        est.set_params(**params)
    elif method == "mlp_ensemble":
        est = MLPEnsembleClassifier(random_state=random_state).set_params(**params)
    elif method in METHODS or method in CNN_BASELINES:
        if method in CNN_BASELINES:
            if not network:
                raise ValueError(f"{method} is a baseline of network='cnn' only.")
            method, params = "ensemble", {**PLAIN_ENSEMBLE, **params}
        top, rest = split_params(params, BayesianNetClassifier)
        est = BayesianNetClassifier(method=method, method_params=rest or None,
                                    random_state=random_state, device=device,
                                    **{**(network or {}), **top})
    else:
        raise ValueError(f"method must be one of {sorted(METHODS)} or {list(BASELINES)}. "
                         f"Got {method!r}.")
    return make_pipeline(StandardScaler(), clone(est))


def baseline_params(method: str) -> set[str]:
    """Parameter names of a baseline's estimator."""
    from sklearn.neural_network import MLPClassifier

    if method == "mlp":
        return set(MLPClassifier().get_params())
    if method in CNN_BASELINES:
        from .tasks import bayes_params

        return bayes_params("ensemble", "classification")
    return set(MLPEnsembleClassifier().get_params())
