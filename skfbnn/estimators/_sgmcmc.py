"""SGLD, SGHMC and their functional variants, as regressors and classifiers.

Each class is a registry key plus a docstring; parameters, constraints and
the fit template come from :mod:`._params` and :mod:`._base`.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = [
    "SGLDRegressor",
    "SGLDClassifier",
    "SGHMCRegressor",
    "SGHMCClassifier",
    "FunctionalSGLDRegressor",
    "FunctionalSGLDClassifier",
    "FunctionalSGHMCRegressor",
    "FunctionalSGHMCClassifier",
]


class SGLDRegressor(RegressorMixin, BayesianRegressorBase):
    """Bayesian neural-network regression by SGLD with an isotropic Gaussian weight prior.

    {parameters}

    Attributes
    ----------
    posterior_ : Particles
        Kept draws, ``(n_chains, n_samples)`` parameter sets.
    diagnostics_ : dict
        Log-posterior trace, R-hat and ESS of the predictions at a probe set,
        and warning objects.

    See Also
    --------
    FunctionalSGLDRegressor : the same sampler with a GP prior on functions.

    Examples
    --------
    >>> from skfbnn import SGLDRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = SGLDRegressor(n_chains=2, n_burnin=200, n_samples=10, thinning=5,
    ...                     random_state=0).fit(X, y)
    >>> mean, std = est.predict(X[:3], return_std=True)
    >>> mean.shape, bool((std > 0).all())
    ((3,), True)
    """

    _method = "sgld"


class SGLDClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification by SGLD with a Gaussian weight prior.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import SGLDClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = SGLDClassifier(n_chains=2, n_burnin=200, n_samples=10, thinning=5,
    ...                      random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _method = "sgld"


class SGHMCRegressor(RegressorMixin, BayesianRegressorBase):
    """Bayesian neural-network regression by SGHMC with a Gaussian weight prior.

    {parameters}

    Examples
    --------
    >>> from skfbnn import SGHMCRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = SGHMCRegressor(n_chains=2, n_burnin=200, n_samples=10, thinning=5,
    ...                      random_state=0).fit(X, y)
    >>> est.sample_y(X[:4], n_samples=3).shape
    (4, 3)
    """

    _method = "sghmc"


class SGHMCClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification by SGHMC with a Gaussian weight prior.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import SGHMCClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> SGHMCClassifier(n_chains=2, n_burnin=200, n_samples=10, thinning=5,
    ...                 random_state=0).fit(X, y).predict(X[:3]).shape
    (3,)
    """

    _method = "sghmc"


class FunctionalSGLDRegressor(RegressorMixin, BayesianRegressorBase):
    """Functional SGLD (Wu, Xuan & Lu, AISTATS 2025): SGLD with a GP prior on functions.

    Each step adds ``log N(f(X_M); m, K_MM + jitter I)`` at a fresh measurement
    set ``X_M``. Without ``weight_prior_std`` the weight posterior is improper
    (the prior constrains only function values), so weights may drift along
    flat directions; diagnose on predictions (``diagnostics_``), never weights.

    {parameters}

    References
    ----------
    Wu, Xuan & Lu (2025). Functional Stochastic Gradient MCMC for Bayesian
    Neural Networks. AISTATS.

    Examples
    --------
    >>> from skfbnn import FunctionalSGLDRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = FunctionalSGLDRegressor(n_chains=2, n_burnin=200, n_samples=10,
    ...                               thinning=5, random_state=0).fit(X, y)
    >>> est.predict_std(X[:2], kind="epistemic").shape
    (2,)
    """

    _method = "fsgld"


class FunctionalSGLDClassifier(ClassifierMixin, BayesianClassifierBase):
    """Functional SGLD classification with a Dirichlet-based GP prior on the logits.

    The GP hyperparameters are fitted to the Dirichlet-transformed labels
    (Milios et al. 2018), one latent GP per class.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import FunctionalSGLDClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = FunctionalSGLDClassifier(n_chains=2, n_burnin=200, n_samples=10,
    ...                                thinning=5, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1).round(6).tolist()
    [1.0, 1.0]
    """

    _method = "fsgld"


class FunctionalSGHMCRegressor(RegressorMixin, BayesianRegressorBase):
    """Functional SGHMC (Wu, Xuan & Lu 2025, Algorithm 2) for regression.

    SGHMC with friction, momentum refreshed every ``n_leapfrog`` steps, and a
    fresh minibatch and measurement set at every step, under a GP prior on
    function values. See :class:`FunctionalSGLDRegressor` for the prior.

    {parameters}

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skfbnn import FunctionalSGHMCRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = make_pipeline(StandardScaler(), FunctionalSGHMCRegressor(
    ...     n_chains=2, n_burnin=200, n_samples=10, thinning=5, random_state=0))
    >>> mean, std = est.fit(X, y).predict(X[:2], return_std=True)
    >>> std.shape
    (2,)
    """

    _method = "fsghmc"


class FunctionalSGHMCClassifier(ClassifierMixin, BayesianClassifierBase):
    """Functional SGHMC classification with a Dirichlet-based GP prior on the logits.

    {parameters}

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import FunctionalSGHMCClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> FunctionalSGHMCClassifier(n_chains=2, n_burnin=200, n_samples=10, thinning=5,
    ...                           random_state=0).fit(X, y).predict(X[:3]).shape
    (3,)
    """

    _method = "fsghmc"
