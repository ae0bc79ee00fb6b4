"""Functional SGHMC: SGHMC with a GP prior on function values.

``__init__`` and the Parameters sections are generated from the parameter
tables by ``tools/generate_estimators.py``; edit the tables, not this file's
generated parts.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["FunctionalSGHMCRegressor", "FunctionalSGHMCClassifier"]


class FunctionalSGHMCRegressor(RegressorMixin, BayesianRegressorBase):
    """Functional SGHMC (Wu, Xuan & Lu 2025, Algorithm 2) for regression.

    SGHMC with friction, momentum refreshed every ``n_leapfrog`` steps, and a
    fresh minibatch and measurement set at every step, under a GP prior on
    function values. See :class:`FunctionalSGLDRegressor` for the prior.

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
    n_chains : int, default=8
        Independent chains, vectorised over a leading batch dimension (8 beat 4 on the validation
        rows for all four samplers, at about the same fit time on a CPU;
        ``benchmarks/results/tuning_chains.csv``).
    n_burnin : int, default=4000
        Steps discarded before the first kept draw (an adaptive preconditioner adapts during these).
    n_samples : int, default=25
        Draws kept per chain.
    thinning : int, default=40
        Steps between kept draws.
    min_epochs : int, default=200
        Minimum number of passes over the data: when ``n_burnin + n_samples * thinning`` steps of
        ``batch_size`` rows cover fewer, ``n_burnin`` and ``thinning`` are stretched by the same
        factor (see ``sampler_lengths``), so large data sets are not under-sampled by a fixed step
        count.
    max_steps : int or None, default=20000
        Cap on the run length that ``min_epochs`` asks for (the unstretched ``n_burnin + n_samples *
        thinning`` steps always run); None: no cap.
    batch_size : int or 'auto', default='auto'
        Minibatch size (full batch when larger than the data). 'auto': 256 rows on data sets of up
        to 2048 rows (less minibatch noise: a chain heated by it gave a predictive too wide on small
        data), else 64 rows, grown on large data sets so that ``min_epochs`` passes fit in
        ``max_steps`` steps (at most 1024 rows; see ``sampler_batch``).
    schedule : str, default='decay'
        Step-size schedule: 'constant', 'decay' (x0.9 nine times over the run) or 'cyclical' (cosine
        cycles).
    temperature : float, default=1.0
        Posterior temperature multiplying the injected noise (1 = Bayes; below 1 a 'cold'
        posterior). A learned prior scale (``prior_std='learn'``) is drawn given the weights in
        untempered units, so it does not shrink with ``T``; it needs ``temperature > 0``.
    step_cap : float or None, default=0.5
        With the adaptive preconditioner: the largest step, as a fraction of the kernel's stability
        limit in the sharpest direction of the preconditioned log posterior (SGLD: ``2 / lambda``;
        SGHMC: ``2 (2 - friction) / lambda``), measured at the end of burn-in; a chain above it gets
        its step scaled down (``skfbnn.inference.sgmcmc.curvature``). Near the limit chains blow up
        now and then and the variance of the stiff directions is inflated. None: steps as given.
    step_size : float, default=0.5
        Step size per datum: the update uses ``step_size / n_train`` (with the adaptive
        preconditioner ``step_size / clip(n_train, 256, 1024)``) so the same value suits data sets
        of any size.
    friction : float, default=0.1
        SGHMC momentum decay per step (1 turns SGHMC into SGLD).
    n_leapfrog : int or None, default=50
        Steps between momentum refreshes (Algorithm 2 of Wu et al.); None never refreshes.
    preconditioner : str, default='adaptive'
        'identity', or 'adaptive': a diagonal inverse mass 1 / sqrt(mean squared gradient), adapted
        during burn-in and frozen afterwards (pSGLD, Li et al. 2016; scale-adapted SGHMC,
        Springenberg et al. 2016), so one step size suits every parameter and data set.
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
    measurement_margin : float, default=0.25
        Relative widening of the training box on each side; 0.25 for the functional samplers (0.1
        for the variational methods): on the 1-D example it opens the band in the gap between the
        two clusters 1.9x (fSGHMC, six seeds) where 0.1 gave 1.5x, and it leaves the UCI validation
        rows where they were (docs/benchmarks.md, section 2).
    prior_nugget : 'noise' or float, default='noise'
        Variance added to the diagonal of the prior covariance at the measurement points
        (standardised target units). 'noise' uses the observation-noise variance of the pre-fitted
        GP (for classification the Dirichlet GP's per-class mean noise of the transformed labels),
        floored at 1% of the prior variance. A small nugget makes the prior very stiff in low
        dimensions and needs a much smaller step_size (docs/user_guide.md).
    weight_prior_std : float or None, default=None
        Optional weak Gaussian weight prior added to the functional prior. None (the paper's choice)
        leaves the weight posterior improper.

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
        n_chains=8,
        n_burnin=4000,
        n_samples=25,
        thinning=40,
        min_epochs=200,
        max_steps=20000,
        batch_size='auto',
        schedule='decay',
        temperature=1.0,
        step_cap=0.5,
        step_size=0.5,
        friction=0.1,
        n_leapfrog=50,
        preconditioner='adaptive',
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
        n_measurement_points='auto',
        measurement_train_fraction=0.5,
        measurement_margin=0.25,
        prior_nugget='noise',
        weight_prior_std=None,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.noise_std = noise_std
        self.normalize_y = normalize_y
        self.n_chains = n_chains
        self.n_burnin = n_burnin
        self.n_samples = n_samples
        self.thinning = thinning
        self.min_epochs = min_epochs
        self.max_steps = max_steps
        self.batch_size = batch_size
        self.schedule = schedule
        self.temperature = temperature
        self.step_cap = step_cap
        self.step_size = step_size
        self.friction = friction
        self.n_leapfrog = n_leapfrog
        self.preconditioner = preconditioner
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.n_measurement_points = n_measurement_points
        self.measurement_train_fraction = measurement_train_fraction
        self.measurement_margin = measurement_margin
        self.prior_nugget = prior_nugget
        self.weight_prior_std = weight_prior_std
    # END GENERATED __init__


class FunctionalSGHMCClassifier(ClassifierMixin, BayesianClassifierBase):
    """Functional SGHMC classification with a Dirichlet-based GP prior on the logits.

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
    n_chains : int, default=8
        Independent chains, vectorised over a leading batch dimension (8 beat 4 on the validation
        rows for all four samplers, at about the same fit time on a CPU;
        ``benchmarks/results/tuning_chains.csv``).
    n_burnin : int, default=4000
        Steps discarded before the first kept draw (an adaptive preconditioner adapts during these).
    n_samples : int, default=25
        Draws kept per chain.
    thinning : int, default=40
        Steps between kept draws.
    min_epochs : int, default=200
        Minimum number of passes over the data: when ``n_burnin + n_samples * thinning`` steps of
        ``batch_size`` rows cover fewer, ``n_burnin`` and ``thinning`` are stretched by the same
        factor (see ``sampler_lengths``), so large data sets are not under-sampled by a fixed step
        count.
    max_steps : int or None, default=20000
        Cap on the run length that ``min_epochs`` asks for (the unstretched ``n_burnin + n_samples *
        thinning`` steps always run); None: no cap.
    batch_size : int or 'auto', default='auto'
        Minibatch size (full batch when larger than the data). 'auto': 256 rows on data sets of up
        to 2048 rows (less minibatch noise: a chain heated by it gave a predictive too wide on small
        data), else 64 rows, grown on large data sets so that ``min_epochs`` passes fit in
        ``max_steps`` steps (at most 1024 rows; see ``sampler_batch``).
    schedule : str, default='decay'
        Step-size schedule: 'constant', 'decay' (x0.9 nine times over the run) or 'cyclical' (cosine
        cycles).
    temperature : float, default=1.0
        Posterior temperature multiplying the injected noise (1 = Bayes; below 1 a 'cold'
        posterior). A learned prior scale (``prior_std='learn'``) is drawn given the weights in
        untempered units, so it does not shrink with ``T``; it needs ``temperature > 0``.
    step_cap : float or None, default=0.5
        With the adaptive preconditioner: the largest step, as a fraction of the kernel's stability
        limit in the sharpest direction of the preconditioned log posterior (SGLD: ``2 / lambda``;
        SGHMC: ``2 (2 - friction) / lambda``), measured at the end of burn-in; a chain above it gets
        its step scaled down (``skfbnn.inference.sgmcmc.curvature``). Near the limit chains blow up
        now and then and the variance of the stiff directions is inflated. None: steps as given.
    step_size : float, default=0.5
        Step size per datum: the update uses ``step_size / n_train`` (with the adaptive
        preconditioner ``step_size / clip(n_train, 256, 1024)``) so the same value suits data sets
        of any size.
    friction : float, default=0.1
        SGHMC momentum decay per step (1 turns SGHMC into SGLD).
    n_leapfrog : int or None, default=50
        Steps between momentum refreshes (Algorithm 2 of Wu et al.); None never refreshes.
    preconditioner : str, default='adaptive'
        'identity', or 'adaptive': a diagonal inverse mass 1 / sqrt(mean squared gradient), adapted
        during burn-in and frozen afterwards (pSGLD, Li et al. 2016; scale-adapted SGHMC,
        Springenberg et al. 2016), so one step size suits every parameter and data set.
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
    measurement_margin : float, default=0.25
        Relative widening of the training box on each side; 0.25 for the functional samplers (0.1
        for the variational methods): on the 1-D example it opens the band in the gap between the
        two clusters 1.9x (fSGHMC, six seeds) where 0.1 gave 1.5x, and it leaves the UCI validation
        rows where they were (docs/benchmarks.md, section 2).
    prior_nugget : 'noise' or float, default='noise'
        Variance added to the diagonal of the prior covariance at the measurement points
        (standardised target units). 'noise' uses the observation-noise variance of the pre-fitted
        GP (for classification the Dirichlet GP's per-class mean noise of the transformed labels),
        floored at 1% of the prior variance. A small nugget makes the prior very stiff in low
        dimensions and needs a much smaller step_size (docs/user_guide.md).
    weight_prior_std : float or None, default=None
        Optional weak Gaussian weight prior added to the functional prior. None (the paper's choice)
        leaves the weight posterior improper.

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
        n_chains=8,
        n_burnin=4000,
        n_samples=25,
        thinning=40,
        min_epochs=200,
        max_steps=20000,
        batch_size='auto',
        schedule='decay',
        temperature=1.0,
        step_cap=0.5,
        step_size=0.5,
        friction=0.1,
        n_leapfrog=50,
        preconditioner='adaptive',
        kernel=None,
        prior_fit_iter=100,
        prior_mean='constant',
        n_measurement_points='auto',
        measurement_train_fraction=0.5,
        measurement_margin=0.25,
        prior_nugget='noise',
        weight_prior_std=None,
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.random_state = random_state
        self.device = device
        self.dtype = dtype
        self.verbose = verbose
        self.n_chains = n_chains
        self.n_burnin = n_burnin
        self.n_samples = n_samples
        self.thinning = thinning
        self.min_epochs = min_epochs
        self.max_steps = max_steps
        self.batch_size = batch_size
        self.schedule = schedule
        self.temperature = temperature
        self.step_cap = step_cap
        self.step_size = step_size
        self.friction = friction
        self.n_leapfrog = n_leapfrog
        self.preconditioner = preconditioner
        self.kernel = kernel
        self.prior_fit_iter = prior_fit_iter
        self.prior_mean = prior_mean
        self.n_measurement_points = n_measurement_points
        self.measurement_train_fraction = measurement_train_fraction
        self.measurement_margin = measurement_margin
        self.prior_nugget = prior_nugget
        self.weight_prior_std = weight_prior_std
    # END GENERATED __init__
