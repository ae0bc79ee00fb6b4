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

    Parameters
    ----------
    method : str, default='fsgld'
        Registered inference method, one of ['bbb', 'ensemble', 'fbnn', 'fsghmc', 'fsgld', 'ifbde',
        'ifbnn', 'mala', 'pcn', 'pcnl', 'sghmc', 'sgld'].
    method_params : dict or None, default=None
        Hyperparameters of the method (the named estimator's parameters beyond the common ones);
        unspecified ones take that estimator's defaults.
    hidden_layer_sizes : tuple of int or None, default=None
        Widths of the hidden layers; ``()`` is a linear model. None: the method's default, (50,), or
        its own (pcn: (50, 50), pcnl: (50, 50), mala: (50, 50), ensemble: (50, 50), fbnn: (32, 32),
        ifbnn: (50, 50), ifbde: (50, 50)).
    activation : str or None, default=None
        Hidden-layer activation, one of ['gelu', 'identity', 'logistic', 'relu', 'silu', 'tanh'].
        None: the method's default, 'tanh', or its own (pcn: 'gelu', pcnl: 'gelu', mala: 'gelu',
        ensemble: 'gelu', fbnn: 'gelu', ifbnn: 'gelu', ifbde: 'gelu').
    random_state : int, RandomState or None, default=None
        Seed of the single ``torch.Generator`` used by the fit; the global torch RNG is never
        touched.
    device : str or torch.device, default='auto'
        ``'auto'`` (cuda, then mps, then cpu), ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or ``'mps'``;
        resolved in ``fit`` to ``device_``.
    dtype : str, default='float32'
        Floating-point type of the network maths (GP maths is always float64).
    verbose : int, default=0
        0: silent; 1: progress bar with the running log posterior (samplers) or objective
        (optimisers); 2: also per-chain (per-member) log lines on the ``skfbnn`` logger.
    noise_std : 'learn' or float, default='learn'
        Observation-noise standard deviation in the units of ``y``, or ``'learn'`` to infer it:
        samplers sample it with the weights under a weak log-normal prior, Bayes by backprop
        maximises it under that prior (a point estimate), deep ensembles predict it with a variance
        head per member.
    normalize_y : bool, default=True
        Standardise the targets internally; every output is in original units.

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

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        method='fsgld',
        method_params=None,
        hidden_layer_sizes=None,
        activation=None,
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        noise_std='learn',
        normalize_y=True,
    ) -> None:
        self.method = method
        self.method_params = method_params
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.noise_std = noise_std
        self.normalize_y = normalize_y
    # END GENERATED __init__


class BayesianNetClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification with any registered inference method.

    Parameters
    ----------
    method : str, default='fsgld'
        Registered inference method, one of ['bbb', 'ensemble', 'fbnn', 'fsghmc', 'fsgld', 'ifbde',
        'ifbnn', 'mala', 'pcn', 'pcnl', 'sghmc', 'sgld'].
    method_params : dict or None, default=None
        Hyperparameters of the method (the named estimator's parameters beyond the common ones);
        unspecified ones take that estimator's defaults.
    hidden_layer_sizes : tuple of int or None, default=None
        Widths of the hidden layers; ``()`` is a linear model. None: the method's default, (50,), or
        its own (pcn: (50, 50), pcnl: (50, 50), mala: (50, 50), ensemble: (50, 50), fbnn: (32, 32),
        ifbnn: (50, 50), ifbde: (50, 50)).
    activation : str or None, default=None
        Hidden-layer activation, one of ['gelu', 'identity', 'logistic', 'relu', 'silu', 'tanh'].
        None: the method's default, 'tanh', or its own (pcn: 'gelu', pcnl: 'gelu', mala: 'gelu',
        ensemble: 'gelu', fbnn: 'gelu', ifbnn: 'gelu', ifbde: 'gelu').
    random_state : int, RandomState or None, default=None
        Seed of the single ``torch.Generator`` used by the fit; the global torch RNG is never
        touched.
    device : str or torch.device, default='auto'
        ``'auto'`` (cuda, then mps, then cpu), ``'cpu'``, ``'cuda'``, ``'cuda:N'`` or ``'mps'``;
        resolved in ``fit`` to ``device_``.
    dtype : str, default='float32'
        Floating-point type of the network maths (GP maths is always float64).
    verbose : int, default=0
        0: silent; 1: progress bar with the running log posterior (samplers) or objective
        (optimisers); 2: also per-chain (per-member) log lines on the ``skfbnn`` logger.

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

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        method='fsgld',
        method_params=None,
        hidden_layer_sizes=None,
        activation=None,
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
    ) -> None:
        self.method = method
        self.method_params = method_params
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
    # END GENERATED __init__
