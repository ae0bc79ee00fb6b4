"""The contracts shared by every inference method.

A method sees the model only through a :class:`BayesProblem`: a batched
``forward``, a likelihood object, a prior object and the data size. Priors and
likelihoods are small objects (``skfbnn.priors``, ``skfbnn.likelihoods``) that
expose what the methods need: log densities, the prior's scale for closed-form
divergences, measurement sets for functional priors, the noise model.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, Protocol

import torch
from torch import Tensor

from ..nn.functional import Params

__all__ = ["Batch", "BayesProblem", "Likelihood", "Prior", "Transform", "Schedule",
           "OPTIONAL_MEMBERS", "member"]

Batch = dict[str, Any]
"""``{"x": (n, d) or (C, n, d), "y": ..., "measure": MeasurementDraw | None}``."""

Schedule = Callable[[int], float]
"""Step size as a function of the step index."""


class Likelihood(Protocol):
    """Observation model: what the methods and the predictive need of it.

    Besides the two methods, the inference layer reads two optional members, with the
    defaults of :data:`OPTIONAL_MEMBERS` when an object does not define them:
    ``learned`` (bool: the likelihood has parameters of its own in the parameter
    dictionaries, such as a learned noise, which the variational runs calibrate on held-out
    rows) and ``log_density(f, y, params, weights=None)`` (the per-row score the held-out
    monitor ranks fits by; ``log_prob`` when absent). Read them with :func:`member`.
    """

    learned: bool

    def log_prob(self, f: Tensor, y: Tensor, params: Params) -> Tensor:
        """``sum_i log p(y_i | f_i)`` per parameter set, ``(C,)``."""

    def log_prior(self, params: Params) -> Tensor | float:
        """Log prior of the likelihood's own parameters (e.g. the noise), ``(C,)`` or 0."""


class Prior(Protocol):
    """Prior over networks: a log density in weights and/or function values.

    Optional members (defaults in :data:`OPTIONAL_MEMBERS`, read with :func:`member`):
    ``resample(params, gen)``, a Gibbs step of the prior's own hyperparameters that the
    samplers take every ``GIBBS_EVERY`` steps (None: none), and ``gp``, the fitted GP prior
    whose noise floors a variational fit's learned noise (None: no GP).
    """

    def log_prob(self, params: Params, f_measure: Tensor | None, measure: Any) -> Tensor:
        """Log prior density per parameter set, ``(C,)``."""


OPTIONAL_MEMBERS: dict[str, Any] = {
    "learned": False,  # Likelihood: parameters of its own in the dictionaries
    "log_density": None,  # Likelihood: per-row held-out score (None: log_prob)
    "n_outputs": None,  # Likelihood: network outputs for k targets (None: k)
    "targets": None,  # Likelihood: targets of the Gaussian readout (None: y itself)
    "resample": None,  # Prior: a Gibbs step of its hyperparameters
    "gp": None,  # Prior: the fitted GP prior
    "log_prob_grad": None,  # Prior: its log density's gradient in closed form
    "stability_limit": None,  # Transform: the kernel's stable step times curvature
    "base": None,  # forward: the forward a wrapped one adds to (ifBDE's random function)
    "preconditioner": None,  # sampler state: its preconditioner (SG-MCMC)
    "scale": None,  # preconditioner: the step factor of the curvature cap, per chain
}
"""The optional members of the likelihood, prior, transform, forward and sampler-state
contracts and their values for an object that does not define them: the one place they
are declared."""


def member(obj: Any, name: str) -> Any:
    """``obj``'s optional contract member ``name`` (:data:`OPTIONAL_MEMBERS`), or its
    declared default when ``obj`` (or None) does not define it.

    Examples
    --------
    >>> member(None, "learned"), member(Transform(None, None, 2.0), "stability_limit")
    (False, 2.0)
    """
    if name not in OPTIONAL_MEMBERS:
        raise KeyError(f"{name!r} is not an optional contract member; declared: "
                       f"{sorted(OPTIONAL_MEMBERS)}.")
    return getattr(obj, name, OPTIONAL_MEMBERS[name])


class _CallableLikelihood:
    """Adapter for a plain ``log_likelihood(f, y, params)`` function."""

    learned = False

    def __init__(self, fn: Callable[[Tensor, Tensor, Params], Tensor]) -> None:
        self.log_prob = fn

    def log_prior(self, params: Params) -> float:
        return 0.0


class _CallablePrior:
    """Adapter for a plain ``log_prior(params, f_measure, measure)`` function."""

    resample = None
    gp = None

    def __init__(self, fn: Callable[[Params, Tensor | None, Any], Tensor]) -> None:
        self.log_prob = fn


class BayesProblem:
    """Everything an update rule may know about the model.

    Parameters
    ----------
    forward : callable
        ``forward(params, X) -> (C, n, n_out)``.
    likelihood : Likelihood
        ``likelihood.log_prob(f, y, params) -> (C,)`` summed over the points
        given, and ``likelihood.log_prior(params)`` for its own parameters.
    prior : Prior or None
        ``prior.log_prob(params, f_measure, measure) -> (C,)``; ``f_measure``
        are the network outputs at the measurement points (``None`` for
        weight priors). ``None`` means a flat prior (maximum likelihood).
    n_data : int
        Number of training points ``N``.
    log_likelihood, log_prior : callable, optional
        Plain functions instead of objects (tests, quick experiments); they
        are wrapped into minimal likelihood and prior objects.
    network : torch.nn.Module, optional
        The architecture (a :func:`~skfbnn.nn.mlp.build_mlp` stack or a user's module),
        for methods that re-parameterise it (the Metropolis-Hastings samplers) or add to
        it (ifBDE's random functions).
    jacobian : callable, optional
        ``jacobian(params, X, n_out) -> (f, jac)``: outputs ``(C, M, n_out)``
        and per-parameter Jacobians ``(C, n_out, M, *shape)`` (see
        :func:`skfbnn.nn.jacobian.mlp_jacobian`), for the linearised methods.
    ntk : callable, optional
        ``ntk(params, X, n_out) -> (f, J J^T)`` with the kernel ``(C, n_out, M, M)``
        (:func:`skfbnn.nn.jacobian.mlp_ntk`); built from ``jacobian`` when not given.
        Both default to the closed forms for ``network`` when it is given, or for a
        ``forward`` that is a :class:`~skfbnn.nn.functional.ModuleForward` (any module),
        to :func:`~skfbnn.nn.jacobian.forward_jacobian` and ``J J^T``.
    sample_weight : Tensor of shape (n_data,), optional
        Row weights of a weighted likelihood (``fit(..., sample_weight=w)``); the run
        policies hand them to the driver, which gives each batch its rows' share as
        ``batch["w"]``. None: every row weighs 1.
    n_outputs : int, optional
        The network's output width (targets, classes, or twice the targets with variance
        heads), for methods that size something by it (ifBDE's random functions); None:
        read from an MLP's readout.
    input_shape : tuple of int, optional
        The shape each flat row of ``X`` takes inside ``network`` (``input_shape=`` of the
        estimators), for methods that evaluate parts of the network themselves (the
        Metropolis-Hastings samplers' body); None: flat rows.
    """

    def __init__(
        self,
        forward: Callable[[Params, Tensor], Tensor],
        likelihood: Likelihood | None = None,
        prior: Prior | None = None,
        n_data: int = 1,
        *,
        log_likelihood: Callable[[Tensor, Tensor, Params], Tensor] | None = None,
        log_prior: Callable[[Params, Tensor | None, Any], Tensor] | None = None,
        network: Any = None,
        jacobian: Callable[..., tuple[Tensor, Params]] | None = None,
        ntk: Callable[..., tuple[Tensor, Tensor]] | None = None,
        sample_weight: Tensor | None = None,
        n_outputs: int | None = None,
        input_shape: tuple[int, ...] | None = None,
    ) -> None:
        if (likelihood is None) == (log_likelihood is None):
            raise ValueError("Give exactly one of likelihood or log_likelihood.")
        if prior is not None and log_prior is not None:
            raise ValueError("Give at most one of prior or log_prior.")
        self.forward = forward
        self.likelihood = likelihood or _CallableLikelihood(log_likelihood)
        self.prior = prior if log_prior is None else _CallablePrior(log_prior)
        self.n_data = int(n_data)
        if sample_weight is not None and tuple(sample_weight.shape) != (self.n_data,):
            raise ValueError(f"sample_weight must have shape ({self.n_data},) (one weight per "
                             f"row). Got {tuple(sample_weight.shape)}.")
        self.sample_weight = sample_weight
        self.network = network
        self.n_outputs = n_outputs
        self.input_shape = None if input_shape is None else tuple(input_shape)
        if network is not None:  # the closed forms of skfbnn.nn.jacobian
            from ..nn.functional import ModuleForward
            from ..nn.jacobian import forward_jacobian, mlp_jacobian, mlp_ntk

            if isinstance(forward, ModuleForward):  # any module: torch.func, its own rows
                jacobian = jacobian or partial(forward_jacobian, forward)
            else:
                jacobian = jacobian or partial(mlp_jacobian, network)
                ntk = ntk or partial(mlp_ntk, network)
        self.jacobian = jacobian
        self.ntk = ntk if ntk is not None or jacobian is None else _ntk_from(jacobian)

    @property
    def log_likelihood(self) -> Callable[[Tensor, Tensor, Params], Tensor]:
        """``likelihood.log_prob`` as a plain function."""
        return self.likelihood.log_prob

    @property
    def log_prior(self) -> Callable[[Params, Tensor | None, Any], Tensor]:
        """The network prior's ``log_prob`` as a plain function (0 for a flat prior)."""
        if self.prior is None:
            return lambda params, f_measure=None, measure=None: 0.0
        return self.prior.log_prob


def _ntk_from(jacobian):
    def ntk(params, X, n_out=None):
        f, jac = jacobian(params, X, n_out)
        J = torch.cat([j.reshape(*j.shape[:3], -1) for j in jac.values()], -1)
        return f, J @ J.transpose(-1, -2)

    return ntk


class Transform(NamedTuple):
    """``init(params, batch=None, gen=None) -> state`` and ``update(state, batch, gen)``.

    ``init`` receives the starting parameters (leading chain / member
    dimension), the first batch and the generator, so that a method can
    initialise from data (e.g. variational scales) or draw initial momenta.
    ``update`` returns ``(state, info)`` with ``info`` a ``NamedTuple`` of
    per-chain tensors, every field of which the driver traces.
    ``stability_limit`` (Langevin-type kernels) is the largest product of the
    step and the sharpest preconditioned curvature at which the update is a
    stable recursion (see :mod:`skfbnn.inference.sgmcmc.curvature`).
    """

    init: Callable[..., Any]
    update: Callable[[Any, Batch, torch.Generator], tuple[Any, Any]]
    stability_limit: float | None = None
