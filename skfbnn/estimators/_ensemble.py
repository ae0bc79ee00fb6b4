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

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(50, 50)
        Widths of the hidden layers; ``()`` is a linear model.
    activation : str, default='gelu'
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
    n_estimators : int, default=5
        Ensemble members, trained together (vectorised).
    validation_fraction : float, default=0.1
        Fraction of the training rows each member holds out (its own random subset); the member's
        parameters with the best held-out log-likelihood, scored 50 times over the run, are kept. 0
        trains every member on all rows to the end.
    n_iter : int, default=10000
        Optimisation steps (Adam), at least (see ``min_epochs``).
    min_epochs : int, default=100
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
    prior_std : float or None, default=None
        Standard deviation of an isotropic Gaussian weight prior making each member a MAP estimate
        (BDE); None (the regressor's default) trains by maximum likelihood, as the paper. On the
        ensembles' two GELU layers None beat 3 on the UCI validation rows (splits 0-3 of five sets:
        mean +0.027, yacht +0.109, energy +0.028, the rest level;
        ``benchmarks/results/tuning_ensembles_ml_gelu.csv``), where on one tanh layer 3 had won; the
        classifier keeps 3.
    anchored : bool, default=False
        Centre each member's weight penalty at its own draw from the prior, |w - a|^2 / (2
        prior_std^2) with a ~ N(0, prior_std^2), drawn once per fit (anchored ensembles, Pearce et
        al. 2020: randomise-then-optimise). Targets are not perturbed (a learned noise head would
        absorb the perturbation). Needs prior_std.
    calibrate_variance : 'auto' or bool, default='auto'
        After the run, add to each member's predicted variances the variance that scores its own
        held-out rows best, where those rows call for it (at least 0, and 0 unless it passes a
        likelihood-ratio test at 5%; each member is scored with the members' spread at those rows
        added, as the predictive adds it; ``skfbnn.likelihoods.calibrated_variance_floor``). A
        member fits its training rows closer than new ones, so its heads learn too small a noise
        (the deep ensemble on diabetes: predictive variance 0.68 of the test error, coverage 0.86;
        with it 0.98 and 0.946). 'auto' (the default): where there are variance heads and held-out
        rows (``validation_fraction > 0``); True: the same, and without held-out rows an error;
        False: never. On the UCI validation rows (splits 0-3 of five sets) it raised the mean
        log-likelihood by 0.008 (deep ensemble) and 0.006 (ifBDE), Boston by 0.03, and no set lost
        more than 0.007 (``benchmarks/results/tuning_ensembles_calibrate.csv``).
    nll_beta : float, default=0.5
        beta-NLL weight of the variance heads (Seitzer et al. 2022): each point's log-likelihood is
        weighted by its predicted variance to the power beta (constant for the gradient); 0 is the
        plain Gaussian likelihood. Used only with noise_std='learn'.

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

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        hidden_layer_sizes=(50, 50),
        activation='gelu',
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        noise_std='learn',
        normalize_y=True,
        n_estimators=5,
        validation_fraction=0.1,
        n_iter=10000,
        min_epochs=100,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        prior_std=None,
        anchored=False,
        calibrate_variance='auto',
        nll_beta=0.5,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.noise_std = noise_std
        self.normalize_y = normalize_y
        self.n_estimators = n_estimators
        self.validation_fraction = validation_fraction
        self.n_iter = n_iter
        self.min_epochs = min_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.lr_schedule = lr_schedule
        self.prior_std = prior_std
        self.anchored = anchored
        self.calibrate_variance = calibrate_variance
        self.nll_beta = nll_beta
    # END GENERATED __init__


class DeepEnsembleClassifier(ClassifierMixin, BayesianClassifierBase):
    """Deep-ensemble classification: ``predict_proba`` is the mean of member probabilities.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(50, 50)
        Widths of the hidden layers; ``()`` is a linear model.
    activation : str, default='gelu'
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
    n_estimators : int, default=5
        Ensemble members, trained together (vectorised).
    validation_fraction : float, default=0.1
        Fraction of the training rows each member holds out (its own random subset); the member's
        parameters with the best held-out log-likelihood, scored 50 times over the run, are kept. 0
        trains every member on all rows to the end.
    n_iter : int, default=10000
        Optimisation steps (Adam), at least (see ``min_epochs``).
    min_epochs : int, default=100
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
    prior_std : float or None, default=3.0
        Standard deviation of an isotropic Gaussian weight prior making each member a MAP estimate
        (BDE); None trains by maximum likelihood. 3 (the classifier's default) beat 1 on the
        regression validation rows of four of six UCI sets and was level on two, on one tanh layer
        (``benchmarks/results/tuning_prior_scale.csv``).
    anchored : bool, default=False
        Centre each member's weight penalty at its own draw from the prior, |w - a|^2 / (2
        prior_std^2) with a ~ N(0, prior_std^2), drawn once per fit (anchored ensembles, Pearce et
        al. 2020: randomise-then-optimise). Targets are not perturbed (a learned noise head would
        absorb the perturbation). Needs prior_std.

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

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        hidden_layer_sizes=(50, 50),
        activation='gelu',
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        n_estimators=5,
        validation_fraction=0.1,
        n_iter=10000,
        min_epochs=100,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        prior_std=3.0,
        anchored=False,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.n_estimators = n_estimators
        self.validation_fraction = validation_fraction
        self.n_iter = n_iter
        self.min_epochs = min_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.lr_schedule = lr_schedule
        self.prior_std = prior_std
        self.anchored = anchored
    # END GENERATED __init__
