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

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(50,)
        Widths of the hidden layers; ``()`` is a linear model.
    activation : str, default='tanh'
        Hidden-layer activation, one of ['gelu', 'identity', 'logistic', 'relu', 'silu', 'tanh'].
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
    validation_fraction : float, default=0.0
        Regression with a learned noise: the fraction of the training rows held out of the run;
        afterwards the noise std is raised to the value under which the predictive (``n_samples``
        draws plus the noise) scores those rows best, if that is larger than the one learned. 0
        trains on all rows and keeps the noise learned with the weights. Classification and a fixed
        ``noise_std`` ignore it and train on all rows.
    early_stopping : bool, default=False
        Regression with a learned noise and ``validation_fraction > 0``: score the mean network on
        the held-out rows 50 times over the run (mean squared error) and keep the variational
        parameters of the best score; the noise is then raised on the same rows. False keeps the
        final ones.
    n_iter : int, default=20000
        Optimisation steps (Adam), at least (see ``min_epochs``). 20 000 for Bayes by backprop,
        twice the optimisation family's (which fBNN and ifBNN keep): the best mean rank among 10
        000, 20 000 and 40 000 on the validation rows of five UCI sets
        (``benchmarks/results/tuning_bbb_run_length.csv``).
    min_epochs : int, default=0
        Minimum number of passes over the data: the run takes ``max(n_iter, ceil(min_epochs *
        n_train / batch_size))`` steps, so large data sets are not under-trained by a fixed step
        count.
    learning_rate : float, default=0.003
        Adam step size (peak of the learning-rate schedule).
    batch_size : int, default=64
        Minibatch size (full batch when larger than the data).
    lr_schedule : str, default='cosine'
        'constant', or 'cosine': constant for the first half of the run, then cosine annealing to
        zero, so the final iterate settles.
    n_samples : int, default=100
        Posterior draws fixed at fit time and used for every prediction.
    n_mc : int, default=1
        Monte-Carlo weight draws per step for the expected log-likelihood.
    divergence : str, default='kl'
        Regulariser towards the weight prior: 'kl' (Bayes by backprop) or 'w2' (squared
        2-Wasserstein distance between the Gaussians, WBNN).
    init_std : float, default=0.01
        Initial standard deviation of every variational factor.
    prior_std : float, default=1.0
        Standard deviation of the isotropic Gaussian weight prior.

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

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        hidden_layer_sizes=(50,),
        activation='tanh',
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        noise_std='learn',
        normalize_y=True,
        validation_fraction=0.0,
        early_stopping=False,
        n_iter=20000,
        min_epochs=0,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        n_samples=100,
        n_mc=1,
        divergence='kl',
        init_std=0.01,
        prior_std=1.0,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.noise_std = noise_std
        self.normalize_y = normalize_y
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter = n_iter
        self.min_epochs = min_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.lr_schedule = lr_schedule
        self.n_samples = n_samples
        self.n_mc = n_mc
        self.divergence = divergence
        self.init_std = init_std
        self.prior_std = prior_std
    # END GENERATED __init__


class BBBClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification by Bayes by backprop.

    ``predict_proba`` averages the softmax over ``n_samples`` weight draws
    fixed at fit time.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(50,)
        Widths of the hidden layers; ``()`` is a linear model.
    activation : str, default='tanh'
        Hidden-layer activation, one of ['gelu', 'identity', 'logistic', 'relu', 'silu', 'tanh'].
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
    validation_fraction : float, default=0.0
        Regression with a learned noise: the fraction of the training rows held out of the run;
        afterwards the noise std is raised to the value under which the predictive (``n_samples``
        draws plus the noise) scores those rows best, if that is larger than the one learned. 0
        trains on all rows and keeps the noise learned with the weights. Classification and a fixed
        ``noise_std`` ignore it and train on all rows.
    early_stopping : bool, default=False
        Regression with a learned noise and ``validation_fraction > 0``: score the mean network on
        the held-out rows 50 times over the run (mean squared error) and keep the variational
        parameters of the best score; the noise is then raised on the same rows. False keeps the
        final ones.
    n_iter : int, default=20000
        Optimisation steps (Adam), at least (see ``min_epochs``). 20 000 for Bayes by backprop,
        twice the optimisation family's (which fBNN and ifBNN keep): the best mean rank among 10
        000, 20 000 and 40 000 on the validation rows of five UCI sets
        (``benchmarks/results/tuning_bbb_run_length.csv``).
    min_epochs : int, default=0
        Minimum number of passes over the data: the run takes ``max(n_iter, ceil(min_epochs *
        n_train / batch_size))`` steps, so large data sets are not under-trained by a fixed step
        count.
    learning_rate : float, default=0.003
        Adam step size (peak of the learning-rate schedule).
    batch_size : int, default=64
        Minibatch size (full batch when larger than the data).
    lr_schedule : str, default='cosine'
        'constant', or 'cosine': constant for the first half of the run, then cosine annealing to
        zero, so the final iterate settles.
    n_samples : int, default=100
        Posterior draws fixed at fit time and used for every prediction.
    n_mc : int, default=1
        Monte-Carlo weight draws per step for the expected log-likelihood.
    divergence : str, default='kl'
        Regulariser towards the weight prior: 'kl' (Bayes by backprop) or 'w2' (squared
        2-Wasserstein distance between the Gaussians, WBNN).
    init_std : float, default=0.01
        Initial standard deviation of every variational factor.
    prior_std : float, default=1.0
        Standard deviation of the isotropic Gaussian weight prior.

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

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        hidden_layer_sizes=(50,),
        activation='tanh',
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        validation_fraction=0.0,
        early_stopping=False,
        n_iter=20000,
        min_epochs=0,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        n_samples=100,
        n_mc=1,
        divergence='kl',
        init_std=0.01,
        prior_std=1.0,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter = n_iter
        self.min_epochs = min_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.lr_schedule = lr_schedule
        self.n_samples = n_samples
        self.n_mc = n_mc
        self.divergence = divergence
        self.init_std = init_std
        self.prior_std = prior_std
    # END GENERATED __init__
