"""fBNN: functional variational BNN (Sun et al. 2019) with a GP prior.

``__init__`` and the Parameters sections are generated from the parameter
tables by ``tools/generate_estimators.py``; edit the tables, not this file's
generated parts.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["FBNNRegressor", "FBNNClassifier"]


class FBNNRegressor(RegressorMixin, BayesianRegressorBase):
    """Functional variational BNN regression (Sun, Zhang, Shi & Grosse, 2019).

    A mean-field Gaussian over the weights is fitted by the functional ELBO:
    the expected log-likelihood minus the KL divergence between the network's
    function values and a GP prior at a measurement set redrawn every step
    (training inputs and points in the widened input box). The KL gradient is
    estimated from ``n_particles`` function draws by the Spectral Stein
    Gradient Estimator; the GP prior's hyperparameters are pre-fitted by
    marginal likelihood. ``n_samples`` weight draws fixed at fit time make
    every prediction.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(32, 32)
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
    validation_fraction : float, default=0.2
        Regression with a learned noise: the fraction of the training rows held out of the run;
        afterwards the noise std is raised to the value under which the predictive (``n_samples``
        draws plus the noise) scores those rows best, if that is larger than the one learned. 0
        trains on all rows and keeps the noise learned with the weights. Classification and a fixed
        ``noise_std`` ignore it and train on all rows. 0.2 for fBNN, chosen on UCI validation rows
        (Boston coverage 0.75 -> 0.96; docs/benchmarks.md, section 5).
    early_stopping : bool, default=True
        Regression with a learned noise and ``validation_fraction > 0``: score the mean network on
        the held-out rows 50 times over the run (mean squared error) and keep the variational
        parameters of the best score; the noise is then raised on the same rows. False keeps the
        final ones. True for fBNN with its two GELU layers, chosen on UCI validation rows
        (docs/benchmarks.md, section 5).
    n_iter : int, default=10000
        Optimisation steps (Adam), at least (see ``min_epochs``).
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
    n_particles : int, default=32
        Function draws per step: the Monte-Carlo sample of the expected log-likelihood and the
        sample from which SSGE estimates the entropy gradient.
    n_mc : int or None, default=None
        How many of the ``n_particles`` draws also give the Monte-Carlo sample of the expected
        log-likelihood on the minibatch (the first ``n_mc`` of them; every draw still gives a
        function value at the measurement set for SSGE). None: all of them, as the reference code.
        Fewer cut the network's work per step; the estimate stays unbiased.
    kl_scale : str, default='batch'
        'batch': the reference code's objective, the functional KL counted once per minibatch
        (N/batch_size times the weight of the full-data ELBO); 'full': the full-data ELBO, KL
        counted once per data set.
    ssge_threshold : float, default=0.99
        SSGE keeps the fewest eigenfunctions holding this share of the kernel spectrum.
    noise_floor : 'gp' or None, default='gp'
        Regression with a learned noise: 'gp' keeps the noise std at least the pre-fitted GP's noise
        std after every step (as the fBNN reference code does), so a network that interpolates the
        training rows cannot shrink the predictive below the noise the GP finds in the data (without
        it, Boston validation coverage 0.36); None: no floor.
    init_std : float, default=0.01
        Initial standard deviation of every variational factor.
    ssge_bandwidth : None or 'median', default=None
        SSGE kernel bandwidth: None, one per dimension by the median heuristic (the reference
        code's); 'median', one isotropic bandwidth (more accurate on isotropic targets and for an
        implicit prior's score away from its draws, ``tests/inference/vi/test_fbnn.py``).
    prior_sampler : callable or None, default=None
        An implicit prior over functions instead of the GP: ``prior_sampler(X, n, rng)`` returns
        ``n`` function draws at the inputs ``X (M, d)`` (an array ``(n, M)`` or ``(n, M,
        n_outputs)``, in standardised target units for regression; ``rng`` a
        ``numpy.random.Generator``); the cross-entropy gradient is then estimated by SSGE from these
        draws too (the paper's piecewise priors, ``skfbnn.priors.implicit``). None: the GP prior.
    prior_nugget : 'noise' or float, default=0.01
        Variance of the function noise injected into both the network's and the prior's function
        values (standardised target units; the reference code's 0.01 std is 1e-4). 'noise' uses the
        pre-fitted GP's observation-noise variance: so much injected noise swamps the entropy of
        q(f), and the weight variances collapse (1-D example: epistemic std 0.01 everywhere).
    n_measurement_points : int, default=20
        Size of the measurement set redrawn at every step (the reference code uses the minibatch
        plus 5 random points on UCI, 20-40 points on its toy problems).
    kernel : None, str or gpytorch kernel, default=None
        GP prior covariance: None (scaled ARD RBF), one of ['rbf', 'matern12', 'matern32',
        'matern52', 'linear', 'periodic'], or a gpytorch kernel instance (copied, never modified).
    prior_fit_iter : int, default=100
        Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP hyperparameters
        (positive ones in log scale) on at most 1000 training points; it stops earlier once
        converged. 0 keeps them fixed.
    prior_mean : str, default='constant'
        GP prior mean: zero, or a constant fitted with the hyperparameters.
    measurement_train_fraction : float, default=0.5
        Fraction of the measurement set drawn from the training inputs; the rest is uniform in the
        widened training box.
    measurement_margin : float, default=0.1
        Relative widening of the training box on each side.

    Attributes
    ----------
    posterior_ : MeanFieldGaussian
        Variational means and standard deviations and the fixed prediction draws.
    prior_ : GPPrior
        The fitted GP prior.
    diagnostics_ : dict
        ``objective`` (the surrogate fELBO per datum at every step), ``trace``
        (also the KL surrogate and the gradient norm) and ``warnings``.

    References
    ----------
    Sun, Zhang, Shi & Grosse (2019). Functional Variational Bayesian Neural
    Networks. ICLR.

    Examples
    --------
    >>> from skfbnn import FBNNRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = FBNNRegressor(n_iter=100, random_state=0).fit(X, y)
    >>> mean, std = est.predict(X[:3], return_std=True)
    >>> mean.shape, bool((std > 0).all())
    ((3,), True)
    """

    _method = "fbnn"

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        hidden_layer_sizes=(32, 32),
        activation='gelu',
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        noise_std='learn',
        normalize_y=True,
        validation_fraction=0.2,
        early_stopping=True,
        n_iter=10000,
        min_epochs=0,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        n_samples=100,
        n_particles=32,
        n_mc=None,
        kl_scale='batch',
        ssge_threshold=0.99,
        noise_floor='gp',
        init_std=0.01,
        ssge_bandwidth=None,
        prior_sampler=None,
        prior_nugget=0.01,
        n_measurement_points=20,
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
        measurement_train_fraction=0.5,
        measurement_margin=0.1,
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
        self.n_particles = n_particles
        self.n_mc = n_mc
        self.kl_scale = kl_scale
        self.ssge_threshold = ssge_threshold
        self.noise_floor = noise_floor
        self.init_std = init_std
        self.ssge_bandwidth = ssge_bandwidth
        self.prior_sampler = prior_sampler
        self.prior_nugget = prior_nugget
        self.n_measurement_points = n_measurement_points
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.measurement_train_fraction = measurement_train_fraction
        self.measurement_margin = measurement_margin
    # END GENERATED __init__


class FBNNClassifier(ClassifierMixin, BayesianClassifierBase):
    """Functional variational BNN classification, with the Dirichlet-GP prior on logits.

    ``predict_proba`` averages the softmax over ``n_samples`` weight draws
    fixed at fit time.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(32, 32)
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
    n_iter : int, default=10000
        Optimisation steps (Adam), at least (see ``min_epochs``).
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
    n_particles : int, default=32
        Function draws per step: the Monte-Carlo sample of the expected log-likelihood and the
        sample from which SSGE estimates the entropy gradient.
    n_mc : int or None, default=None
        How many of the ``n_particles`` draws also give the Monte-Carlo sample of the expected
        log-likelihood on the minibatch (the first ``n_mc`` of them; every draw still gives a
        function value at the measurement set for SSGE). None: all of them, as the reference code.
        Fewer cut the network's work per step; the estimate stays unbiased.
    kl_scale : str, default='full'
        'full' (the classifier's default): the full-data ELBO, KL counted once per data set;
        'batch': the reference code's objective, the KL counted once per minibatch (N/batch_size
        times the weight of the full-data ELBO). With 'batch' the Dirichlet-GP prior on the logits
        makes the classifier underconfident (digits: log loss 0.268, ECE 0.196; 'full': 0.070,
        0.027); 'full' is better on all five classification sets (docs/benchmarks.md, section 5,
        digits). Regression keeps 'batch', chosen on UCI validation rows.
    ssge_threshold : float, default=0.99
        SSGE keeps the fewest eigenfunctions holding this share of the kernel spectrum.
    noise_floor : 'gp' or None, default='gp'
        Regression with a learned noise: 'gp' keeps the noise std at least the pre-fitted GP's noise
        std after every step (as the fBNN reference code does), so a network that interpolates the
        training rows cannot shrink the predictive below the noise the GP finds in the data (without
        it, Boston validation coverage 0.36); None: no floor.
    init_std : float, default=0.01
        Initial standard deviation of every variational factor.
    ssge_bandwidth : None or 'median', default=None
        SSGE kernel bandwidth: None, one per dimension by the median heuristic (the reference
        code's); 'median', one isotropic bandwidth (more accurate on isotropic targets and for an
        implicit prior's score away from its draws, ``tests/inference/vi/test_fbnn.py``).
    prior_sampler : callable or None, default=None
        An implicit prior over functions instead of the GP: ``prior_sampler(X, n, rng)`` returns
        ``n`` function draws at the inputs ``X (M, d)`` (an array ``(n, M)`` or ``(n, M,
        n_outputs)``, in standardised target units for regression; ``rng`` a
        ``numpy.random.Generator``); the cross-entropy gradient is then estimated by SSGE from these
        draws too (the paper's piecewise priors, ``skfbnn.priors.implicit``). None: the GP prior.
    prior_nugget : 'noise' or float, default=0.01
        Variance of the function noise injected into both the network's and the prior's function
        values (standardised target units; the reference code's 0.01 std is 1e-4). 'noise' uses the
        pre-fitted GP's observation-noise variance: so much injected noise swamps the entropy of
        q(f), and the weight variances collapse (1-D example: epistemic std 0.01 everywhere).
    n_measurement_points : int, default=20
        Size of the measurement set redrawn at every step (the reference code uses the minibatch
        plus 5 random points on UCI, 20-40 points on its toy problems).
    kernel : None, str or gpytorch kernel, default=None
        GP prior covariance: None (scaled ARD RBF), one of ['rbf', 'matern12', 'matern32',
        'matern52', 'linear', 'periodic'], or a gpytorch kernel instance (copied, never modified).
    prior_fit_iter : int, default=100
        Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP hyperparameters
        (positive ones in log scale) on at most 1000 training points; it stops earlier once
        converged. 0 keeps them fixed.
    prior_mean : str, default='constant'
        GP prior mean: zero, or a constant fitted with the hyperparameters.
    measurement_train_fraction : float, default=0.5
        Fraction of the measurement set drawn from the training inputs; the rest is uniform in the
        widened training box.
    measurement_margin : float, default=0.1
        Relative widening of the training box on each side.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import FBNNClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = FBNNClassifier(n_iter=100, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _method = "fbnn"

    # BEGIN GENERATED __init__ (tools/generate_estimators.py)
    def __init__(
        self,
        *,
        hidden_layer_sizes=(32, 32),
        activation='gelu',
        random_state=None,
        device='auto',
        dtype='float32',
        verbose=0,
        validation_fraction=0.0,
        early_stopping=False,
        n_iter=10000,
        min_epochs=0,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        n_samples=100,
        n_particles=32,
        n_mc=None,
        kl_scale='full',
        ssge_threshold=0.99,
        noise_floor='gp',
        init_std=0.01,
        ssge_bandwidth=None,
        prior_sampler=None,
        prior_nugget=0.01,
        n_measurement_points=20,
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
        measurement_train_fraction=0.5,
        measurement_margin=0.1,
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
        self.n_particles = n_particles
        self.n_mc = n_mc
        self.kl_scale = kl_scale
        self.ssge_threshold = ssge_threshold
        self.noise_floor = noise_floor
        self.init_std = init_std
        self.ssge_bandwidth = ssge_bandwidth
        self.prior_sampler = prior_sampler
        self.prior_nugget = prior_nugget
        self.n_measurement_points = n_measurement_points
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.measurement_train_fraction = measurement_train_fraction
        self.measurement_margin = measurement_margin
    # END GENERATED __init__
