"""SGLD (stochastic-gradient Langevin dynamics) with a Gaussian weight prior.

``__init__`` and the Parameters sections are generated from the parameter
tables by ``tools/generate_estimators.py``; edit the tables, not this file's
generated parts.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["SGLDRegressor", "SGLDClassifier"]


class SGLDRegressor(RegressorMixin, BayesianRegressorBase):
    """Bayesian neural-network regression by SGLD with an isotropic Gaussian weight prior.

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
    step_size : float, default=3.0
        Step size per datum: the update uses ``step_size / n_train`` (with the adaptive
        preconditioner ``step_size / clip(n_train, 256, 1024)``) so the same value suits data sets
        of any size.
    preconditioner : str, default='adaptive'
        'identity', or 'adaptive': a diagonal inverse mass 1 / sqrt(mean squared gradient), adapted
        during burn-in and frozen afterwards (pSGLD, Li et al. 2016; scale-adapted SGHMC,
        Springenberg et al. 2016), so one step size suits every parameter and data set.
    prior_std : float, 'learn' or 'ard', default='learn'
        Standard deviation of the isotropic Gaussian weight prior. 'learn': one prior precision per
        layer's weights and per layer's biases, with a Gamma(2, 2) hyperprior (standardised units),
        drawn from its conditional by a Gibbs step every 50 steps from the middle of burn-in on; the
        learned scales are in ``diagnostics_['prior_std']``. 'ard': as 'learn', with one precision
        per input feature for the first layer's weights (automatic relevance determination; its
        scales are ``(n_chains, n_features)``).

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
        step_size=3.0,
        preconditioner='adaptive',
        prior_std='learn',
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
        self.preconditioner = preconditioner
        self.prior_std = prior_std
    # END GENERATED __init__


class SGLDClassifier(ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification by SGLD with a Gaussian weight prior.

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
    step_size : float, default=3.0
        Step size per datum: the update uses ``step_size / n_train`` (with the adaptive
        preconditioner ``step_size / clip(n_train, 256, 1024)``) so the same value suits data sets
        of any size.
    preconditioner : str, default='adaptive'
        'identity', or 'adaptive': a diagonal inverse mass 1 / sqrt(mean squared gradient), adapted
        during burn-in and frozen afterwards (pSGLD, Li et al. 2016; scale-adapted SGHMC,
        Springenberg et al. 2016), so one step size suits every parameter and data set.
    prior_std : float, 'learn' or 'ard', default='learn'
        Standard deviation of the isotropic Gaussian weight prior. 'learn': one prior precision per
        layer's weights and per layer's biases, with a Gamma(2, 2) hyperprior (standardised units),
        drawn from its conditional by a Gibbs step every 50 steps from the middle of burn-in on; the
        learned scales are in ``diagnostics_['prior_std']``. 'ard': as 'learn', with one precision
        per input feature for the first layer's weights (automatic relevance determination; its
        scales are ``(n_chains, n_features)``).

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
        step_size=3.0,
        preconditioner='adaptive',
        prior_std='learn',
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
        self.preconditioner = preconditioner
        self.prior_std = prior_std
    # END GENERATED __init__
