"""ifBNN: mean-field VI with a 2-Wasserstein functional regulariser.

``__init__`` and the Parameters sections are generated from the parameter
tables by ``tools/generate_estimators.py``; edit the tables, not this file's
generated parts.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["IFBNNRegressor", "IFBNNClassifier"]


class IFBNNRegressor(RegressorMixin, BayesianRegressorBase):
    """Implicit functional BNN regression (ifBNN).

    A mean-field Gaussian over the weights is fitted by the expected
    log-likelihood minus ``beta`` times the squared 2-Wasserstein distance
    between the network linearised at its mean (a Gaussian over function
    values with covariance ``J diag(sigma^2) J^T``) and a GP prior, on a
    measurement set redrawn every step. ``n_samples`` weight draws fixed at
    fit time make every prediction (the nonlinear network: the linearisation
    only serves the regulariser).

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
    validation_fraction : float, default=0.2
        Regression with a learned noise: the fraction of the training rows held out of the run;
        afterwards the noise std is raised to the value under which the predictive (``n_samples``
        draws plus the noise) scores those rows best, if that is larger than the one learned. 0
        trains on all rows and keeps the noise learned with the weights. Classification and a fixed
        ``noise_std`` ignore it and train on all rows. 0.2 for ifBNN, chosen on UCI validation rows
        (Boston coverage 0.76 -> 0.96; docs/benchmarks.md, section 5).
    early_stopping : bool, default=True
        Regression with a learned noise and ``validation_fraction > 0``: score the mean network on
        the held-out rows 50 times over the run (mean squared error) and keep the variational
        parameters of the best score; the noise is then raised on the same rows. False keeps the
        final ones. True for ifBNN, chosen on UCI validation rows (docs/benchmarks.md, section 5).
    n_iter : int, default=20000
        Optimisation steps (Adam), at least (see ``min_epochs``). 20 000 for the ifBNN regressor,
        chosen on UCI validation rows with the held-out noise and early stopping
        (docs/benchmarks.md, section 5).
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
    beta : float, default=1.0
        Weight of the 2-Wasserstein regulariser (0: maximum likelihood in the means).
    w2_reduction : str, default='auto'
        'sum': the squared distance between the Gaussians on the measurement set; 'mean': divided by
        the number of measurement points (per-point scale); 'auto': 'sum' for regression (chosen on
        UCI validation rows), 'mean' for classification (the sum over every class's outputs makes
        the digits classifier underconfident: log loss 0.385 against 0.086; docs/benchmarks.md).
    ntk_limit : bool, default=False
        Regression: regularise the infinite-training NTK limit of the linearised network (the
        paper's Eq. 14, the minibatch standing in for the training set) instead of the linearisation
        itself.
    noise_floor : 'gp' or None, default='gp'
        Regression with a learned noise: 'gp' keeps the noise std at least the pre-fitted GP's noise
        std after every step (as the fBNN reference code does), so a network that interpolates the
        training rows cannot shrink the predictive below the noise the GP finds in the data (without
        it, Boston validation coverage 0.36); None: no floor.
    w2_interval : int, default=8
        Evaluate the W2's covariance part (Jacobian, linearised covariance, nuclear norm) every this
        many steps and reuse its gradient in between; the mean part is evaluated at every step. 1:
        the whole W2 at every step (ignored with ntk_limit=True, which always evaluates it whole).
        2, 4 and 8 were level with 1 on UCI validation rows; 8 had the best mean rank.
    init_std : float, default=0.01
        Initial standard deviation of every variational factor.
    measurement_train_fraction : float, default=0.0
        Fraction of the measurement set drawn from the training inputs; the rest is uniform in the
        widened training box. 0 for the ifBNN regressor: the W2 then pulls q(f) towards the GP prior
        over the input box and not at the training inputs, where it would widen the band against the
        likelihood. Chosen on UCI validation rows (mean -1.731 against -1.778 for 0.5; 1-D example:
        the goal on 3 of 6 draws against 2; docs/benchmarks.md, section 5).
    kernel : None, str or gpytorch kernel, default=None
        GP prior covariance: None (scaled ARD RBF), one of ['rbf', 'matern12', 'matern32',
        'matern52', 'linear', 'periodic'], or a gpytorch kernel instance (copied, never modified).
    prior_fit_iter : int, default=100
        Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP hyperparameters
        (positive ones in log scale) on at most 1000 training points; it stops earlier once
        converged. 0 keeps them fixed.
    prior_mean : str, default='constant'
        GP prior mean: zero, or a constant fitted with the hyperparameters.
    n_measurement_points : int or 'auto', default='auto'
        Size of the measurement set redrawn at every step. 'auto': ``min(100, n_train)``, so on tiny
        training sets the functional prior does not get more points than the likelihood has rows
        (the paper uses as many as the training set, up to 1000; on the 1-D example 20 points
        instead of 100 widen the gap band to the exact GP's, and no UCI training set has fewer than
        100 rows).
    measurement_margin : float, default=0.1
        Relative widening of the training box on each side.
    prior_nugget : 'noise' or float, default='noise'
        Variance added to the diagonal of the prior covariance at the measurement points
        (standardised target units). 'noise' uses the observation-noise variance of the pre-fitted
        GP (for classification the Dirichlet GP's per-class mean noise of the transformed labels),
        floored at 1% of the prior variance. A small nugget makes the prior very stiff in low
        dimensions and needs a much smaller step_size (docs/user_guide.md).

    Attributes
    ----------
    posterior_ : MeanFieldGaussian
        Variational means and standard deviations and the fixed prediction draws.
    prior_ : GPPrior
        The fitted GP prior.
    diagnostics_ : dict
        ``objective`` (per datum at every step), ``trace`` (also the squared W2
        distance and the gradient norm) and ``warnings``.

    Examples
    --------
    >>> from skfbnn import IFBNNRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = IFBNNRegressor(n_iter=100, random_state=0).fit(X, y)
    >>> mean, std = est.predict(X[:3], return_std=True)
    >>> mean.shape, bool((std > 0).all())
    ((3,), True)
    """

    _method = "ifbnn"

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
        validation_fraction=0.2,
        early_stopping=True,
        n_iter=20000,
        min_epochs=0,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        n_samples=100,
        n_mc=1,
        beta=1.0,
        w2_reduction='auto',
        ntk_limit=False,
        noise_floor='gp',
        w2_interval=8,
        init_std=0.01,
        measurement_train_fraction=0.0,
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
        n_measurement_points='auto',
        measurement_margin=0.1,
        prior_nugget='noise',
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
        self.beta = beta
        self.w2_reduction = w2_reduction
        self.ntk_limit = ntk_limit
        self.noise_floor = noise_floor
        self.w2_interval = w2_interval
        self.init_std = init_std
        self.measurement_train_fraction = measurement_train_fraction
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.n_measurement_points = n_measurement_points
        self.measurement_margin = measurement_margin
        self.prior_nugget = prior_nugget
    # END GENERATED __init__


class IFBNNClassifier(ClassifierMixin, BayesianClassifierBase):
    """Implicit functional BNN classification, with the Dirichlet-GP prior on logits.

    ``predict_proba`` averages the softmax over ``n_samples`` weight draws
    fixed at fit time.

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
    n_mc : int, default=1
        Monte-Carlo weight draws per step for the expected log-likelihood.
    beta : float, default=1.0
        Weight of the 2-Wasserstein regulariser (0: maximum likelihood in the means).
    w2_reduction : str, default='auto'
        'sum': the squared distance between the Gaussians on the measurement set; 'mean': divided by
        the number of measurement points (per-point scale); 'auto': 'sum' for regression (chosen on
        UCI validation rows), 'mean' for classification (the sum over every class's outputs makes
        the digits classifier underconfident: log loss 0.385 against 0.086; docs/benchmarks.md).
    ntk_limit : bool, default=False
        Regression: regularise the infinite-training NTK limit of the linearised network (the
        paper's Eq. 14, the minibatch standing in for the training set) instead of the linearisation
        itself.
    noise_floor : 'gp' or None, default='gp'
        Regression with a learned noise: 'gp' keeps the noise std at least the pre-fitted GP's noise
        std after every step (as the fBNN reference code does), so a network that interpolates the
        training rows cannot shrink the predictive below the noise the GP finds in the data (without
        it, Boston validation coverage 0.36); None: no floor.
    w2_interval : int, default=8
        Evaluate the W2's covariance part (Jacobian, linearised covariance, nuclear norm) every this
        many steps and reuse its gradient in between; the mean part is evaluated at every step. 1:
        the whole W2 at every step (ignored with ntk_limit=True, which always evaluates it whole).
        2, 4 and 8 were level with 1 on UCI validation rows; 8 had the best mean rank.
    init_std : float, default=0.01
        Initial standard deviation of every variational factor.
    kernel : None, str or gpytorch kernel, default=None
        GP prior covariance: None (scaled ARD RBF), one of ['rbf', 'matern12', 'matern32',
        'matern52', 'linear', 'periodic'], or a gpytorch kernel instance (copied, never modified).
    prior_fit_iter : int, default=100
        Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP hyperparameters
        (positive ones in log scale) on at most 1000 training points; it stops earlier once
        converged. 0 keeps them fixed.
    prior_mean : str, default='constant'
        GP prior mean: zero, or a constant fitted with the hyperparameters.
    n_measurement_points : int or 'auto', default='auto'
        Size of the measurement set redrawn at every step. 'auto': ``min(100, n_train)``, so on tiny
        training sets the functional prior does not get more points than the likelihood has rows
        (the paper uses as many as the training set, up to 1000; on the 1-D example 20 points
        instead of 100 widen the gap band to the exact GP's, and no UCI training set has fewer than
        100 rows).
    measurement_train_fraction : float, default=0.5
        Fraction of the measurement set drawn from the training inputs; the rest is uniform in the
        widened training box.
    measurement_margin : float, default=0.1
        Relative widening of the training box on each side.
    prior_nugget : 'noise' or float, default='noise'
        Variance added to the diagonal of the prior covariance at the measurement points
        (standardised target units). 'noise' uses the observation-noise variance of the pre-fitted
        GP (for classification the Dirichlet GP's per-class mean noise of the transformed labels),
        floored at 1% of the prior variance. A small nugget makes the prior very stiff in low
        dimensions and needs a much smaller step_size (docs/user_guide.md).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import IFBNNClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = IFBNNClassifier(n_iter=100, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _method = "ifbnn"

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
        validation_fraction=0.0,
        early_stopping=False,
        n_iter=10000,
        min_epochs=0,
        learning_rate=0.003,
        batch_size=64,
        lr_schedule='cosine',
        n_samples=100,
        n_mc=1,
        beta=1.0,
        w2_reduction='auto',
        ntk_limit=False,
        noise_floor='gp',
        w2_interval=8,
        init_std=0.01,
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
        n_measurement_points='auto',
        measurement_train_fraction=0.5,
        measurement_margin=0.1,
        prior_nugget='noise',
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
        self.beta = beta
        self.w2_reduction = w2_reduction
        self.ntk_limit = ntk_limit
        self.noise_floor = noise_floor
        self.w2_interval = w2_interval
        self.init_std = init_std
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.n_measurement_points = n_measurement_points
        self.measurement_train_fraction = measurement_train_fraction
        self.measurement_margin = measurement_margin
        self.prior_nugget = prior_nugget
    # END GENERATED __init__
