"""Variational estimators: Bayes by backprop (mean-field Gaussian over the weights)."""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["BBBRegressor", "BBBClassifier"]


class BBBRegressor(RegressorMixin, BayesianRegressorBase):
    """Bayesian neural-network regression by Bayes by backprop (Blundell et al., 2015).

    A factorised Gaussian over every weight and bias is fitted by maximising
    the ELBO with the reparameterisation trick and the closed-form KL to the
    isotropic Gaussian prior (``divergence="w2"``: the squared 2-Wasserstein
    distance instead). ``n_samples`` weight draws are fixed at fit time and
    make every prediction. A learned observation noise is a point estimate.

    {parameters}

    Attributes
    ----------
    posterior_ : MeanFieldGaussian
        Variational means and standard deviations and the fixed prediction draws.
    diagnostics_ : dict
        ``objective`` (ELBO per datum at every step), ``trace`` (also the
        divergence and gradient norm) and ``warnings``.

    References
    ----------
    Blundell, Cornebise, Kavukcuoglu & Wierstra (2015). Weight Uncertainty in
    Neural Networks. ICML.

    Examples
    --------
    >>> from skfbnn import BBBRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = BBBRegressor(n_iter=300, random_state=0).fit(X, y)
    >>> mean, std = est.predict(X[:3], return_std=True)
    >>> mean.shape, bool((std > 0).all())
    ((3,), True)
    """

    _method = "bbb"


class BBBClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification by Bayes by backprop.

    ``predict_proba`` averages the softmax over ``n_samples`` weight draws
    fixed at fit time.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import BBBClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = BBBClassifier(n_iter=300, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _method = "bbb"
