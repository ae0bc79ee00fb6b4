"""Estimators that run any registered method by name."""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["BayesianNetRegressor", "BayesianNetClassifier"]


class BayesianNetRegressor(RegressorMixin, BayesianRegressorBase):
    """Bayesian neural-network regression with any registered inference method.

    ``BayesianNetRegressor(method="fsgld", method_params={...})`` behaves like
    the named estimator of that method (here :class:`FunctionalSGLDRegressor`)
    with the given parameters; see ``skfbnn methods`` for the list.

    {parameters}

    Examples
    --------
    >>> from skfbnn import BayesianNetRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = BayesianNetRegressor(method="sgld", method_params=dict(
    ...     n_chains=2, n_burnin=200, n_samples=10, thinning=5), random_state=0)
    >>> est.fit(X, y).predict(X[:2]).shape
    (2,)
    """

    _generic = True


class BayesianNetClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification with any registered inference method.

    ``BayesianNetClassifier(method="fsghmc", method_params={...})`` behaves like the
    named classifier of that method with the given parameters.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import BayesianNetClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = BayesianNetClassifier(method="fsghmc", method_params=dict(
    ...     n_chains=2, n_burnin=200, n_samples=10, thinning=5), random_state=0)
    >>> clf.fit(X, y).predict_proba(X[:1]).shape
    (1, 2)
    """

    _generic = True
