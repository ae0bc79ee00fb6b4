"""Preconditioned Crank-Nicolson (pCN) for wide networks.

``__init__`` and the Parameters sections are generated from the parameter
tables by ``tools/generate_estimators.py``; edit the tables, not this file's
generated parts.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin

from ._arviz import ArviZMixin
from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["PCNRegressor", "PCNClassifier"]


class PCNRegressor(ArviZMixin, RegressorMixin, BayesianRegressorBase):
    """Bayesian neural-network regression by the preconditioned Crank-Nicolson sampler (pCN).

    The network is NTK-parameterised (every weight and bias standard normal a
    priori) with a Gaussian likelihood; with ``reparametrize=True`` the readout
    is sampled in the data-dependent coordinates of Hron et al. (2022), where
    the posterior tends to the reference measure ``N(0, I)`` as the width grows.
    ``noise_std="learn"`` fixes the noise by empirical Bayes on the chains'
    prior features before sampling (see the user guide, "Wide-network MCMC").

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
    n_chains : int, default=4
        Independent chains, vectorised over a leading batch dimension.
    n_burnin : int, default=1000
        Full-batch Metropolis-Hastings steps discarded before the first kept draw (the step size
        adapts during these).
    n_samples : int, default=100
        Draws kept per chain.
    thinning : int, default=10
        Steps between kept draws.
    step_size : float, default=0.1
        pCN step ``beta`` in (0, 1]: ``phi' = sqrt(1 - beta^2) phi + beta xi`` (the paper's default
        0.1).
    adapt_step_size : bool, default=True
        Tune ``step_size`` during burn-in towards ``target_accept`` (Robbins-Monro on its
        logarithm); it is frozen afterwards, so the kept chain is a valid Metropolis-Hastings chain.
    target_accept : float, default=0.25
        Mean acceptance probability aimed at by the burn-in adaptation.
    sigma_w : float, default=1.4142135623730951
        Hidden-layer weight scale of the NTK parameterisation: a layer with fan-in n computes
        ``sigma_w / sqrt(n) * W h + sigma_b * b`` with every entry of W and b standard normal a
        priori.
    sigma_b : float, default=0.1
        Hidden-layer bias scale.
    sigma_w_out : float, default=1.0
        Readout weight scale.
    sigma_b_out : float, default=0.1
        Readout bias scale.
    reparametrize : bool, default=True
        Sample the readout in the data-dependent coordinates of Hron et al. (2022), in which the
        posterior tends to N(0, I) as the width grows.
    marginalize_readout : bool, default=False
        Run the Metropolis-Hastings step on the hidden weights only (on the readout's negative log
        marginal likelihood) and draw the readout exactly from its conditional posterior at every
        step.

    Attributes
    ----------
    posterior_ : Particles
        Kept draws, ``(n_chains, n_samples)`` parameter sets (ordinary
        ``nn.Linear`` coordinates; ``log_noise`` when learned).
    diagnostics_ : dict
        ``acceptance_rate`` (per chain, after burn-in), ``step_size`` (after
        adaptation), R-hat and ESS of the predictions at probe points
        (``max_r_hat``, ...), the per-step ``trace`` and warnings.

    See Also
    --------
    PCNLRegressor : pCN with a Langevin drift.
    MALARegressor : the standard Langevin baseline.

    References
    ----------
    Pezzetti, Favaro & Peluchetti (2024), Function-space MCMC for Bayesian wide
    neural networks. Hron et al. (2022), Wide Bayesian neural networks have a
    simple weight posterior. Cotter et al. (2013), MCMC methods for functions.

    Examples
    --------
    >>> from skfbnn import PCNRegressor
    >>> from skfbnn.datasets import make_oscillation
    >>> X, y = make_oscillation(random_state=0)
    >>> est = PCNRegressor(hidden_layer_sizes=(64,), n_chains=2, n_burnin=100,
    ...                     n_samples=10, thinning=5, random_state=0).fit(X, y)
    >>> mean, std = est.predict(X[:3], return_std=True)
    >>> mean.shape, bool((std > 0).all()), est.diagnostics_["acceptance_rate"].shape
    ((3,), True, (2,))
    """

    _method = "pcn"

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
        n_chains=4,
        n_burnin=1000,
        n_samples=100,
        thinning=10,
        step_size=0.1,
        adapt_step_size=True,
        target_accept=0.25,
        sigma_w=1.4142135623730951,
        sigma_b=0.1,
        sigma_w_out=1.0,
        sigma_b_out=0.1,
        reparametrize=True,
        marginalize_readout=False,
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
        self.step_size = step_size
        self.adapt_step_size = adapt_step_size
        self.target_accept = target_accept
        self.sigma_w = sigma_w
        self.sigma_b = sigma_b
        self.sigma_w_out = sigma_w_out
        self.sigma_b_out = sigma_b_out
        self.reparametrize = reparametrize
        self.marginalize_readout = marginalize_readout
    # END GENERATED __init__


class PCNClassifier(ArviZMixin, ClassifierMixin, BayesianClassifierBase):
    """Bayesian neural-network classification by the preconditioned Crank-Nicolson sampler (pCN).

    As in the paper (after Hron et al. 2022) the labels are regressed as
    shifted one-hot targets ``onehot(y) - 1/K`` with Gaussian noise
    ``noise_std``; a draw's class probabilities are (``proba="argmax"``) the
    probabilities under that noise that each class's output is the largest, and
    ``predict_proba`` averages them over draws.

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
    n_chains : int, default=4
        Independent chains, vectorised over a leading batch dimension.
    n_burnin : int, default=1000
        Full-batch Metropolis-Hastings steps discarded before the first kept draw (the step size
        adapts during these).
    n_samples : int, default=100
        Draws kept per chain.
    thinning : int, default=10
        Steps between kept draws.
    step_size : float, default=0.1
        pCN step ``beta`` in (0, 1]: ``phi' = sqrt(1 - beta^2) phi + beta xi`` (the paper's default
        0.1).
    adapt_step_size : bool, default=True
        Tune ``step_size`` during burn-in towards ``target_accept`` (Robbins-Monro on its
        logarithm); it is frozen afterwards, so the kept chain is a valid Metropolis-Hastings chain.
    target_accept : float, default=0.25
        Mean acceptance probability aimed at by the burn-in adaptation.
    sigma_w : float, default=1.4142135623730951
        Hidden-layer weight scale of the NTK parameterisation: a layer with fan-in n computes
        ``sigma_w / sqrt(n) * W h + sigma_b * b`` with every entry of W and b standard normal a
        priori.
    sigma_b : float, default=0.1
        Hidden-layer bias scale.
    sigma_w_out : float, default=1.0
        Readout weight scale.
    sigma_b_out : float, default=0.1
        Readout bias scale.
    reparametrize : bool, default=True
        Sample the readout in the data-dependent coordinates of Hron et al. (2022), in which the
        posterior tends to N(0, I) as the width grows.
    marginalize_readout : bool, default=False
        Run the Metropolis-Hastings step on the hidden weights only (on the readout's negative log
        marginal likelihood) and draw the readout exactly from its conditional posterior at every
        step.
    noise_std : float, default=0.1
        Std of the Gaussian likelihood of the shifted one-hot targets ``onehot(y) - 1/K`` (the
        paper's 0.1); see ``predict_proba``.
    proba : str, default='argmax'
        How a draw's outputs become class probabilities: 'argmax' (the probability under the
        Gaussian noise that the class's output is the largest; better calibrated, docs/mh.md) or
        'clip' (``f + 1/K`` clipped at 1e-3 and renormalised); ``predict_proba`` averages them over
        draws.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    posterior_ : Particles
        Kept draws, ``(n_chains, n_samples)`` parameter sets.
    diagnostics_ : dict
        ``acceptance_rate`` per chain, ``step_size``, R-hat and ESS of the
        class probabilities at probe points, the per-step ``trace``.

    See Also
    --------
    PCNRegressor : the same sampler for regression.

    Examples
    --------
    >>> import numpy as np
    >>> from skfbnn import PCNClassifier
    >>> X = np.random.default_rng(0).normal(size=(40, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> est = PCNClassifier(hidden_layer_sizes=(32,), n_chains=2, n_burnin=50,
    ...                      n_samples=5, thinning=2, random_state=0).fit(X, y)
    >>> est.predict_proba(X[:2]).shape
    (2, 2)
    """

    _method = "pcn"

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
        n_chains=4,
        n_burnin=1000,
        n_samples=100,
        thinning=10,
        step_size=0.1,
        adapt_step_size=True,
        target_accept=0.25,
        sigma_w=1.4142135623730951,
        sigma_b=0.1,
        sigma_w_out=1.0,
        sigma_b_out=0.1,
        reparametrize=True,
        marginalize_readout=False,
        noise_std=0.1,
        proba='argmax',
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
        self.step_size = step_size
        self.adapt_step_size = adapt_step_size
        self.target_accept = target_accept
        self.sigma_w = sigma_w
        self.sigma_b = sigma_b
        self.sigma_w_out = sigma_w_out
        self.sigma_b_out = sigma_b_out
        self.reparametrize = reparametrize
        self.marginalize_readout = marginalize_readout
        self.noise_std = noise_std
        self.proba = proba
    # END GENERATED __init__
