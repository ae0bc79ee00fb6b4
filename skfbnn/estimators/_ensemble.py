"""Ensemble estimators: deep ensembles trained as one vectorised batch of members."""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["DeepEnsembleRegressor", "DeepEnsembleClassifier"]


class DeepEnsembleRegressor(RegressorMixin, BayesianRegressorBase):
    """Deep-ensemble regression (Lakshminarayanan, Pritzel & Blundell, 2017).

    ``n_estimators`` networks with Gaussian heads (a mean and a variance per
    output when ``noise_std="learn"``) are trained together by Adam on the
    Gaussian log-likelihood, vectorised over a member dimension. The
    predictive is the uniform mixture of the members' Gaussians:
    ``predict_std(kind="epistemic")`` is the spread of the member means,
    ``kind="aleatoric"`` the root mean of the heads' variances. With
    ``prior_std`` each member is a MAP estimate under a Gaussian weight prior.

    {parameters}

    Attributes
    ----------
    posterior_ : Ensemble
        The members' parameters.
    diagnostics_ : dict
        ``objective`` (log posterior per datum of every member at every
        step), ``trace`` (also the gradient norm) and ``warnings``.

    References
    ----------
    Lakshminarayanan, Pritzel & Blundell (2017). Simple and Scalable
    Predictive Uncertainty Estimation using Deep Ensembles. NeurIPS.

    Examples
    --------
    >>> from skfbnn import DeepEnsembleRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = DeepEnsembleRegressor(n_iter=300, random_state=0).fit(X, y)
    >>> est.predict_std(X[:2], kind="epistemic").shape
    (2,)
    """

    _method = "ensemble"


class DeepEnsembleClassifier(ClassifierMixin, BayesianClassifierBase):
    """Deep-ensemble classification: ``predict_proba`` is the mean of member probabilities.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import DeepEnsembleClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = DeepEnsembleClassifier(n_estimators=5, n_iter=300, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1).round(6).tolist()
    [1.0, 1.0]
    """

    _method = "ensemble"
