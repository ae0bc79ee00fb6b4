"""The classifiers a classification run compares: any registered method in a
:class:`~skfbnn.BayesianNetClassifier`, and scikit-learn's ``MLPClassifier`` alone and as an
ensemble of five (the plain baselines a user would pick)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

__all__ = ["BASELINES", "MLPEnsembleClassifier", "make_classifier", "baseline_params"]

BASELINES = ("mlp", "mlp_ensemble")
"""scikit-learn baselines: ``MLPClassifier((50,), max_iter=2000)`` and five of them
(random states ``5 * random_state + i``) averaged."""

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
                    **params: Any):
    """``StandardScaler`` then the classifier that ``method`` names.

    ``mlp`` and ``mlp_ensemble`` are the scikit-learn baselines (:data:`BASELINES`);
    any registry key gives :class:`~skfbnn.BayesianNetClassifier` with that method,
    ``params`` split between its own parameters and ``method_params``.

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

    if method == "mlp":
        est = MLPClassifier(hidden_layer_sizes=(50,), max_iter=2000, random_state=random_state)
        est.set_params(**params)
    elif method == "mlp_ensemble":
        est = MLPEnsembleClassifier(random_state=random_state).set_params(**params)
    elif method in METHODS:
        own = BayesianNetClassifier().get_params()
        top = {k: v for k, v in params.items() if k in own}
        rest = {k: v for k, v in params.items() if k not in own}
        est = BayesianNetClassifier(method=method, method_params=rest or None,
                                    random_state=random_state, device=device, **top)
    else:
        raise ValueError(f"method must be one of {sorted(METHODS)} or {list(BASELINES)}. "
                         f"Got {method!r}.")
    return make_pipeline(StandardScaler(), clone(est))


def baseline_params(method: str) -> set[str]:
    """Parameter names of a baseline's estimator."""
    from sklearn.neural_network import MLPClassifier

    if method == "mlp":
        return set(MLPClassifier().get_params())
    return set(MLPEnsembleClassifier().get_params())
