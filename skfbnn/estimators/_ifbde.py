"""ifBDE: a deep ensemble regularised through the Wasserstein barycenter of its members.

``__init__`` and the Parameters sections are generated from the parameter
tables by ``tools/generate_estimators.py``; edit the tables, not this file's
generated parts.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["IFBDERegressor", "IFBDEClassifier"]


class IFBDERegressor(RegressorMixin, BayesianRegressorBase):
    """Implicit functional Bayesian deep ensemble regression (ifBDE).

    The members of a (Bayesian) deep ensemble are trained together; each is
    linearised into a GP by its empirical NTK and conditioned on its
    minibatch, the members' Gaussians on a shared measurement set are
    combined into their 2-Wasserstein barycenter, and ``beta`` times the
    squared W2 distance from the barycenter to a GP prior regularises the
    whole ensemble. The predictive is the uniform mixture of the members, as
    for :class:`DeepEnsembleRegressor` (which it equals with ``beta=0``).

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
    anchored : bool, default=False
        Centre each member's weight penalty at its own draw from the prior, |w - a|^2 / (2
        prior_std^2) with a ~ N(0, prior_std^2), drawn once per fit (anchored ensembles, Pearce et
        al. 2020: randomise-then-optimise). Targets are not perturbed (a learned noise head would
        absorb the perturbation). Needs prior_std.
    prior_std : float or None, default=3.0
        Standard deviation of an isotropic Gaussian weight prior on each member; None: none. 3, the
        deep ensemble's (with ``ntk_scale=0.25``; chosen on the validation rows of six UCI sets,
        ``benchmarks/results/tuning_ntk_scale.csv``).
    beta : float, default=0.3
        Weight of the 2-Wasserstein regulariser (0: the deep ensemble). 0.3: the best mean rank
        among 1, 0.3 and 0.1 on the validation rows of five UCI sets at the 10 000-step runs
        (``benchmarks/results/tuning_ifbde_run_length.csv``; 1 was chosen at 2000 steps).
    ntk_scale : float or None, default=0.25
        Each member's linearised GP has the kernel ``ntk_scale**2 J J^T`` (``J`` the member's
        Jacobian). None: ``prior_std`` (1 without a weight prior), the linearisation of the weight
        prior; 1: the plain empirical NTK of the ifBNN paper. 0.25: the best mean rank on the
        validation rows of six UCI sets among 1, 0.5, 0.25, 0.1 and None (with ``prior_std=3``, None
        puts a covariance nine times the plain NTK's against the GP prior, and loses to the deep
        ensemble on five of six).
    w2_interval : int, default=4
        Steps between evaluations of the covariance part of the squared W2 (most of a step's cost;
        the steps between reuse its last gradient, the mean part is fresh at every step). 1: the
        paper's method. 4: level with 1 on validation rows.
    w2_reduction : str, default='sum'
        'sum': the squared distance between the Gaussians on the measurement set; 'mean': divided by
        the number of measurement points (per-point scale).
    w2_scale : str, default='full'
        How often the regulariser is counted: 'full', once per data set (the paper's Eq. 16, ``beta
        W2^2 / N`` beside each datum's log-likelihood); 'batch', once per minibatch (``beta W2^2 /
        n``, n the batch size: the fBNN reference code's weighting, N / n times stronger, so that
        its weight grows with the data set).
    barycenter_iter : int, default=0
        Fixed-point iterations of the barycenter without gradient, from the members' average
        covariance, before the one differentiable application of the map. 0: that map alone, from
        the average (the squared W2 within 3.4e-4 relative of the converged barycenter's on the
        members of real fits, median 1e-5 to 2e-5; 1.7e-3 with ``ntk_scale=1``; each iteration adds
        an eigendecomposition of the members' matrices; 0 and 3 were level on validation rows). Only
        with ``aggregate='barycenter'``.
    n_measurement_points : int, default=32
        Size of the measurement set redrawn at every step (each evaluation of the W2's covariance
        part computes a barycenter of n_estimators covariances of this size, by an
        eigendecomposition of each).
    aggregate : str, default='barycenter'
        How the members' linearised Gaussians are combined: their 2-Wasserstein 'barycenter' or the
        plain 'average' of means and covariances.
    random_function : bool, default=False
        Add to every member the fixed random function g(x) = J(x; w_0) w* of He et al. (2020) (the
        ifBNN paper's Eq. 17-18): J the Jacobian at the member's initial weights w_0, w* a draw of
        the initialisation distribution on the hidden layers and 0 on the readout, so that g ~ GP(0,
        the hidden layers' part of the NTK at w_0). Used in training and in every prediction.
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
    measurement_train_fraction : float, default=1.0
        Fraction of the measurement set drawn from the training inputs; the rest is uniform in the
        widened training box. 1 for the ifBDE regressor: the W2's mean part pulls the ensemble's
        mean towards the GP prior's constant mean, and off the data (in the box) that pull costs a
        function far from any constant (yacht, validation rows of 8 splits, against the deep
        ensemble: -0.103 with 0, -0.034 with 0.5, +0.050 with 1). Chosen on UCI validation rows:
        mean -0.811 against -0.830 for 0.5 over six sets (docs/benchmarks.md, section 5).
    kernel : None, str or gpytorch kernel, default=None
        GP prior covariance: None (scaled ARD RBF), one of ['rbf', 'matern12', 'matern32',
        'matern52', 'linear', 'periodic'], or a gpytorch kernel instance (copied, never modified).
    prior_fit_iter : int, default=100
        Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP hyperparameters
        (positive ones in log scale) on at most 1000 training points; it stops earlier once
        converged. 0 keeps them fixed.
    prior_mean : str, default='constant'
        GP prior mean: zero, or a constant fitted with the hyperparameters.
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
    posterior_ : Ensemble
        The members' parameters.
    prior_ : GPPrior
        The fitted GP prior.
    diagnostics_ : dict
        ``objective`` (log posterior per datum of every member at every step),
        ``trace`` (also the squared W2 distance and the gradient norm) and
        ``warnings``.

    Examples
    --------
    >>> from skfbnn import IFBDERegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = IFBDERegressor(n_iter=100, min_epochs=0, random_state=0).fit(X, y)
    >>> est.predict_std(X[:2], kind="epistemic").shape
    (2,)
    """

    _method = "ifbde"

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
        anchored=False,
        prior_std=3.0,
        beta=0.3,
        ntk_scale=0.25,
        w2_interval=4,
        w2_reduction='sum',
        w2_scale='full',
        barycenter_iter=0,
        n_measurement_points=32,
        aggregate='barycenter',
        random_function=False,
        calibrate_variance='auto',
        nll_beta=0.5,
        measurement_train_fraction=1.0,
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
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
        self.n_estimators = n_estimators
        self.validation_fraction = validation_fraction
        self.n_iter = n_iter
        self.min_epochs = min_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.lr_schedule = lr_schedule
        self.anchored = anchored
        self.prior_std = prior_std
        self.beta = beta
        self.ntk_scale = ntk_scale
        self.w2_interval = w2_interval
        self.w2_reduction = w2_reduction
        self.w2_scale = w2_scale
        self.barycenter_iter = barycenter_iter
        self.n_measurement_points = n_measurement_points
        self.aggregate = aggregate
        self.random_function = random_function
        self.calibrate_variance = calibrate_variance
        self.nll_beta = nll_beta
        self.measurement_train_fraction = measurement_train_fraction
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.measurement_margin = measurement_margin
        self.prior_nugget = prior_nugget
    # END GENERATED __init__


class IFBDEClassifier(ClassifierMixin, BayesianClassifierBase):
    """Implicit functional Bayesian deep ensemble classification (Dirichlet-GP prior on
    logits): ``predict_proba`` is the mean of member probabilities.

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
    anchored : bool, default=False
        Centre each member's weight penalty at its own draw from the prior, |w - a|^2 / (2
        prior_std^2) with a ~ N(0, prior_std^2), drawn once per fit (anchored ensembles, Pearce et
        al. 2020: randomise-then-optimise). Targets are not perturbed (a learned noise head would
        absorb the perturbation). Needs prior_std.
    prior_std : float or None, default=3.0
        Standard deviation of an isotropic Gaussian weight prior on each member; None: none. 3, the
        deep ensemble's (with ``ntk_scale=0.25``; chosen on the validation rows of six UCI sets,
        ``benchmarks/results/tuning_ntk_scale.csv``).
    beta : float, default=0.3
        Weight of the 2-Wasserstein regulariser (0: the deep ensemble). 0.3: the best mean rank
        among 1, 0.3 and 0.1 on the validation rows of five UCI sets at the 10 000-step runs
        (``benchmarks/results/tuning_ifbde_run_length.csv``; 1 was chosen at 2000 steps).
    ntk_scale : float or None, default=0.25
        Each member's linearised GP has the kernel ``ntk_scale**2 J J^T`` (``J`` the member's
        Jacobian). None: ``prior_std`` (1 without a weight prior), the linearisation of the weight
        prior; 1: the plain empirical NTK of the ifBNN paper. 0.25: the best mean rank on the
        validation rows of six UCI sets among 1, 0.5, 0.25, 0.1 and None (with ``prior_std=3``, None
        puts a covariance nine times the plain NTK's against the GP prior, and loses to the deep
        ensemble on five of six).
    w2_interval : int, default=4
        Steps between evaluations of the covariance part of the squared W2 (most of a step's cost;
        the steps between reuse its last gradient, the mean part is fresh at every step). 1: the
        paper's method. 4: level with 1 on validation rows.
    w2_reduction : str, default='sum'
        'sum': the squared distance between the Gaussians on the measurement set; 'mean': divided by
        the number of measurement points (per-point scale).
    w2_scale : str, default='full'
        How often the regulariser is counted: 'full', once per data set (the paper's Eq. 16, ``beta
        W2^2 / N`` beside each datum's log-likelihood); 'batch', once per minibatch (``beta W2^2 /
        n``, n the batch size: the fBNN reference code's weighting, N / n times stronger, so that
        its weight grows with the data set).
    barycenter_iter : int, default=0
        Fixed-point iterations of the barycenter without gradient, from the members' average
        covariance, before the one differentiable application of the map. 0: that map alone, from
        the average (the squared W2 within 3.4e-4 relative of the converged barycenter's on the
        members of real fits, median 1e-5 to 2e-5; 1.7e-3 with ``ntk_scale=1``; each iteration adds
        an eigendecomposition of the members' matrices; 0 and 3 were level on validation rows). Only
        with ``aggregate='barycenter'``.
    n_measurement_points : int, default=32
        Size of the measurement set redrawn at every step (each evaluation of the W2's covariance
        part computes a barycenter of n_estimators covariances of this size, by an
        eigendecomposition of each).
    aggregate : str, default='barycenter'
        How the members' linearised Gaussians are combined: their 2-Wasserstein 'barycenter' or the
        plain 'average' of means and covariances.
    random_function : bool, default=False
        Add to every member the fixed random function g(x) = J(x; w_0) w* of He et al. (2020) (the
        ifBNN paper's Eq. 17-18): J the Jacobian at the member's initial weights w_0, w* a draw of
        the initialisation distribution on the hidden layers and 0 on the readout, so that g ~ GP(0,
        the hidden layers' part of the NTK at w_0). Used in training and in every prediction.
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
    prior_nugget : 'noise' or float, default='noise'
        Variance added to the diagonal of the prior covariance at the measurement points
        (standardised target units). 'noise' uses the observation-noise variance of the pre-fitted
        GP (for classification the Dirichlet GP's per-class mean noise of the transformed labels),
        floored at 1% of the prior variance. A small nugget makes the prior very stiff in low
        dimensions and needs a much smaller step_size (docs/user_guide.md).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skfbnn import IFBDEClassifier
    >>> X, y = make_moons(60, noise=0.2, random_state=0)
    >>> clf = IFBDEClassifier(n_iter=100, min_epochs=0, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1).round(6).tolist()
    [1.0, 1.0]
    """

    _method = "ifbde"

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
        anchored=False,
        prior_std=3.0,
        beta=0.3,
        ntk_scale=0.25,
        w2_interval=4,
        w2_reduction='sum',
        w2_scale='full',
        barycenter_iter=0,
        n_measurement_points=32,
        aggregate='barycenter',
        random_function=False,
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
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
        self.n_estimators = n_estimators
        self.validation_fraction = validation_fraction
        self.n_iter = n_iter
        self.min_epochs = min_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.lr_schedule = lr_schedule
        self.anchored = anchored
        self.prior_std = prior_std
        self.beta = beta
        self.ntk_scale = ntk_scale
        self.w2_interval = w2_interval
        self.w2_reduction = w2_reduction
        self.w2_scale = w2_scale
        self.barycenter_iter = barycenter_iter
        self.n_measurement_points = n_measurement_points
        self.aggregate = aggregate
        self.random_function = random_function
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.measurement_train_fraction = measurement_train_fraction
        self.measurement_margin = measurement_margin
        self.prior_nugget = prior_nugget
    # END GENERATED __init__
