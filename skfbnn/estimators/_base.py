"""The fit template shared by every estimator: a composition root.

``fit`` validates, builds the problem (:func:`skfbnn.inference.fit.build_problem`: the
prior from :mod:`skfbnn.priors`, the likelihood from :mod:`skfbnn.likelihoods`), runs it
(:func:`skfbnn.inference.fit.infer`: the driver and its progress), stores the posterior and
checks it (:mod:`skfbnn.diagnostics`). The task parts (:mod:`._regression`,
:mod:`._classification`) encode targets and summarise predictions; the registry entry of
the method declares everything else.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._validation import _fit_context, validate_parameter_constraints
from .._warnings import warn_at_caller
from ..device import (
    cpu_threads,
    make_generator,
    resolve_device,
    resolve_dtype,
    spawn_seed,
    threads_for_work,
    to_numpy,
    to_tensor,
    torch_state_kept,
)
from ..diagnostics import SamplerWarning
from ..diagnostics.advice import FitAdvice
from ..diagnostics.fit import chain_diagnostics, optimisation_diagnostics
from ..diagnostics.scale import scale_warnings
from ..exceptions import DivergenceError
from ..inference.families import FAMILIES
from ..inference.fit import build_problem, infer
from ..inference.registry import METHODS, MethodSpec
from ..inference.sgmcmc.policy import sampler_lengths
from ..nn.batched_mlp import is_plain_mlp
from ..nn.functional import forward_values, init_params, make_forward
from ..posterior import POSTERIORS, Particles, outputs_at
from ..priors.functional import FunctionPrior
from ..priors.gp import GPPrior
from ..priors.weight import HierarchicalWeightPrior
from ._network import check_forward, flat_rows, input_shape_of, network_for
from ._params import COMMON, GENERIC, Param, common_params, format_params, method_params

__all__ = ["BayesianNetBase"]

logger = logging.getLogger("skfbnn")


class BayesianNetBase(BaseEstimator):
    """Fit template: validation, network, prior, run, stored draws, checks.

    Subclasses set ``_method`` (a registry key) or ``_generic = True``; a task part
    (:mod:`._regression`, :mod:`._classification`) supplies ``_task``,
    ``_task_params``, ``_validate_fit_data``, ``_encode_target``, ``_make_likelihood``,
    ``_check_fit`` and ``_probe_moments``. ``__init__`` (keyword-only, one argument per
    declared parameter), ``_parameter_constraints`` and the docstring's ``{parameters}``
    placeholder are made from the parameter tables when the class is created.
    """

    _method: str | None = None
    _generic: bool = False
    _task_params: list[Param] = []
    _task: str = "regression"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_method" not in cls.__dict__ and "_generic" not in cls.__dict__:
            return
        params = cls._declared_params()
        cls._parameter_constraints = {p.name: p.constraints for p in params}
        if "__init__" not in cls.__dict__:
            cls.__init__ = _make_init(cls.__name__, params)
        if cls.__doc__ and "{parameters}" in cls.__doc__:
            cls.__doc__ = cls.__doc__.replace("{parameters}", format_params(params))

    @classmethod
    def _declared_params(cls) -> list[Param]:
        if cls._generic:
            return [*GENERIC, *common_params(), *cls._task_params]
        return [*common_params(cls._method), *cls._task_params,
                *method_params(cls._method, cls._task)]

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> BayesianNetBase:
        """Fit the posterior of the network to ``(X, y)`` and store its draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights of the likelihood: row ``i``'s log-likelihood term
            is multiplied by ``w_i`` (a minibatch of ``n`` of the ``N`` rows counts
            ``(N / n) sum w_i log p(y_i | f(x_i))``), so a row of weight 2 counts as the
            row twice; ``normalize_y`` standardises with the weighted mean and standard
            deviation. The prior (a GP prior's hyperparameters, the measurement sets)
            and the run length are built from the rows as given. None: weight 1 each.

        Returns
        -------
        self
        """
        previous = self.__dict__.get("posterior_") if self.warm_start else None
        before = dict(self.__dict__)
        try:
            with torch_state_kept(), cpu_threads(resolve_device(self.device)):
                return self._fit(X, y, previous, sample_weight)
        except BaseException:  # also a fit warning turned into an error by a filter
            if self.__dict__.get("posterior_") is not before.get("posterior_"):
                # the run failed: the previous fit is gone, and no draws are kept
                self.__dict__.pop("posterior_", None)
                raise
            # refused before the run (data, parameters, device, warm_start): the
            # previous fit, if any, stays as it was, its attributes included
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def __sklearn_is_fitted__(self) -> bool:
        return "posterior_" in self.__dict__

    def _fit(self, X: Any, y: Any, previous=None, sample_weight: Any = None
             ) -> BayesianNetBase:
        X, y = self._validate_fit_data(X, y)
        weights = _check_weights(sample_weight, X)
        spec, hyper = self._spec_and_hyper()
        family = FAMILIES[spec.family]
        device, dtype = resolve_device(self.device), resolve_dtype(self.dtype)
        # a warm-started fit continues the random stream too: fresh noise and minibatches
        continued = 0 if previous is None else self.__dict__.get("_n_continued", 0) + 1
        gen = make_generator(spawn_seed(self.random_state, continued), device)
        Xt = to_tensor(X, device, dtype)
        yt, n_targets = self._encode_target(y, device, dtype, weights)
        likelihood = self._make_likelihood(spec, hyper)
        n_out = likelihood.n_outputs(n_targets)
        network = network_for(self, spec, hyper, X.shape[1], n_out)
        self._network_shape = None if self.network is None else input_shape_of(self)
        n_batch = family.n_batch(hyper)
        params = init_params(network, n_batch, gen, device=device, dtype=dtype)
        if self.network is not None and n_out:  # the user's module, before any sampling
            check_forward(network, make_forward(network, self._network_shape), params, Xt,
                          n_out, self._network_shape, hyper.get("prior_std") == "ard")
        params.update(likelihood.init_params(n_batch, n_targets, device, dtype))
        if previous is not None:  # warm_start: continue from the previous fit
            params = _continued(params, previous.start())
        self._n_continued = continued
        found, advice = self._advice(X, y, spec, hyper)
        # Validated: the previous fit goes, so that a failed run leaves no draws of it to
        # be combined with this fit's scaling or classes at predict time.
        self.__dict__.pop("posterior_", None)
        try:
            return self._run_and_check(
                X, Xt, yt, n_targets, spec, hyper, family, network, likelihood, params,
                weights, gen, device, found, advice,
                prior_start=None if previous is None else self.__dict__.get("prior_"))
        except DivergenceError as err:  # say what was measured that bears on it
            if advice.measured() and err.args and isinstance(err.args[0], str):
                err.args = (f"{err.args[0]} {advice.measured()}", *err.args[1:])
            raise

    def _run_and_check(self, X, Xt, yt, n_targets, spec, hyper, family, network, likelihood,
                       params, weights, gen, device, found, advice, prior_start=None
                       ) -> BayesianNetBase:
        """Build and run the problem, store and check the result (the second half of
        :meth:`_fit`); ``found`` are the data-scale warnings, ``advice`` the causes the
        checks' messages list, ``prior_start`` the previous fit's GP prior to start the
        prior's fit from (``warm_start``)."""
        prior = result = None
        per_row = forward_values(network, self._network_shape, Xt.shape[1])
        self._values_per_row = None if self._network_shape is None and is_plain_mlp(network) \
            else per_row  # prediction's blocks: None, the weights' rule for a plain MLP
        threads_for_work(family.rows_per_step(hyper, len(Xt)) * family.n_batch(hyper)
                         * per_row)
        if n_targets:
            problem = build_problem(
                spec, hyper, network, make_forward(network, self._network_shape), likelihood,
                Xt, yt, n_targets,
                gen, classification=self._task == "classification",
                sample_weight=None if weights is None else to_tensor(weights, device, Xt.dtype),
                input_shape=self._network_shape, prior_start=prior_start)
            prior = problem.prior
            result, posterior = infer(spec, hyper, problem, params, Xt, yt, gen, self.verbose)
        else:  # nothing to learn (regression: every target column is constant)
            posterior = _placeholder_posterior(params, hyper.get("n_samples", 1))
        if isinstance(prior, HierarchicalWeightPrior):
            prior.check_scale(family.step_name)
        self.device_, self.network_, self.likelihood_ = device, network, likelihood
        if weights is not None and not (weights > 0).all():  # rows of weight 0 count nowhere
            kept = np.flatnonzero(weights > 0)
            X, yt = X[kept], yt[torch.as_tensor(kept, device=yt.device)]
        checks = self._check_fit(posterior, lambda rows: outputs_at(
            posterior, self._forward(), rows, row_values=self._row_values()), likelihood, X, yt,
            family.step_name, advice=advice)
        checks["warnings"][:0] = found
        self.posterior_ = posterior
        self.prior_ = prior.gp if isinstance(prior, FunctionPrior) else None
        self.diagnostics_ = self._diagnostics(spec, hyper, result, Xt, prior, checks, advice)
        if isinstance(prior, HierarchicalWeightPrior):  # the learned scales, per chain
            self.diagnostics_["prior_std"] = {k: to_numpy(v)
                                              for k, v in prior.prior_std().items()}
        self._report(self.diagnostics_["warnings"])
        return self

    def _advice(self, X: np.ndarray, y: np.ndarray, spec: MethodSpec, hyper: dict
                ) -> tuple[list[SamplerWarning], FitAdvice]:
        """The data-scale warnings (inputs; targets too with ``normalize_y=False``) and the
        likely causes the checks' messages list: those findings, the step parameter with
        its value and default, the parameter that lengthens the run."""
        check_y = None if getattr(self, "normalize_y", True) else y
        found, notes = scale_warnings(X, check_y)
        family = FAMILIES[spec.family]
        method = self.method if self._generic else self._method
        defaults = {p.name: p.default for p in method_params(method, self._task)}
        step = hyper.get(family.step_name)
        default = defaults.get(family.step_name)
        numbers = all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                      for v in (step, default))
        return found, FitAdvice(family.step_name, float(step) if numbers else None,
                                float(default) if numbers else None,
                                "n_burnin" if family.chains else "n_iter", notes)

    def _spec_and_hyper(self) -> tuple[MethodSpec, dict[str, Any]]:
        """The registry entry of the method and its parameters' values."""
        if not self._generic:
            names = [p.name for p in method_params(self._method, self._task)]
            return METHODS[self._method], {name: getattr(self, name) for name in names}
        params = method_params(self.method, self._task)
        given = dict(self.method_params or {})
        unknown = sorted(set(given) - {p.name for p in params})
        if unknown:
            raise ValueError(
                f"method_params has keys {unknown} that method {self.method!r} does not "
                f"take. Valid keys: {sorted(p.name for p in params)}."
            )
        validate_parameter_constraints(
            {p.name: p.constraints for p in params}, given, caller_name="method_params"
        )
        return METHODS[self.method], {**{p.name: p.default for p in params}, **given}

    def _architecture(self, spec: MethodSpec) -> tuple[tuple[int, ...], str]:
        """``hidden_layer_sizes`` (checked) and ``activation``; None (the generic
        estimators' default) means the method's own default."""
        defaults = {p.name: p.default for p in COMMON}
        defaults.update(spec.architecture)
        given = self.hidden_layer_sizes
        sizes = tuple(defaults["hidden_layer_sizes"] if given is None else given)
        if not all(isinstance(s, (int, np.integer)) and s >= 1 for s in sizes):
            raise ValueError(
                "hidden_layer_sizes must hold positive integers. "
                f"Got {self.hidden_layer_sizes!r}."
            )
        activation = defaults["activation"] if self.activation is None else self.activation
        return tuple(int(s) for s in sizes), activation

    def _check_fit(self, posterior, outputs, likelihood, X, yt, step_name, advice=None
                   ) -> dict[str, Any]:
        """Task hook: raise :class:`~skfbnn.exceptions.DivergenceError` for an unusable fit.

        ``outputs(rows)`` gives every draw's network outputs at inputs ``rows``; ``X``
        holds the validated training inputs, ``yt`` the encoded targets; ``advice`` (a
        :class:`~skfbnn.diagnostics.advice.FitAdvice`) the likely causes the messages
        list. Returns entries for ``diagnostics_``; its ``"warnings"`` come first there.
        """
        return {"warnings": []}

    def _diagnostics(self, spec, hyper, result, Xt, prior, checks, advice=None
                     ) -> dict[str, Any]:
        """``diagnostics_``: the family's (none without a run) and the task's checks,
        whose warnings come first (``advice``: the causes the messages list)."""
        family = FAMILIES[spec.family]
        if result is None:
            diagnostics: dict[str, Any] = {"warnings": []}
        elif family.chains:
            functional = prior.functional if isinstance(prior, FunctionPrior) else None
            diagnostics = chain_diagnostics(
                result.log_post, sampler_lengths(hyper, len(Xt))[0], self.posterior_.shape,
                len(Xt), lambda rows: self._probe_moments(
                    outputs_at(self.posterior_, self._forward(), Xt[rows],
                               row_values=self._row_values())),
                functional.n_escalations if functional is not None else 0)
            self._probe_X = to_numpy(Xt[diagnostics["probe_indices"]])
        else:
            diagnostics = optimisation_diagnostics(
                result.trace, bounded_likelihood=self._task == "classification",
                step_name=family.step_name, advice=advice)
        if result is not None and family.summarize is not None:
            diagnostics.update(family.summarize(result, hyper))
        diagnostics.update({k: v for k, v in checks.items() if k != "warnings"})
        diagnostics["warnings"][:0] = checks["warnings"]
        return diagnostics

    def _report(self, found: list[SamplerWarning]) -> None:
        """Issue the warnings that carry a category as Python warnings; log all if verbose."""
        for w in found:
            if w.category is not None:
                warn_at_caller(f"{type(self).__name__}: {w.message}", w.category)
        if self.verbose:
            for w in found:
                logger.warning("%s: %s", w.kind, w.message)

    # ------------------------------------------------------------ predict
    def _spec(self) -> MethodSpec:
        return METHODS[self.method if self._generic else self._method]

    def _forward(self):
        """The network's forward function as predictions use it (the method's
        ``wrap_forward`` applied, e.g. ifBDE's fixed random functions)."""
        forward = make_forward(self.network_, getattr(self, "_network_shape", None))
        wrap = self._spec().wrap_forward
        return forward if wrap is None else wrap(forward)

    def _draws_at(self, X: Any, reduce: Callable[[torch.Tensor, slice], Any] | None = None
                  ) -> Any:
        """Validated ``X`` through every stored draw: ``(D, n, n_out)``; with ``reduce``, its
        summaries computed a block of rows at a time
        (:func:`skfbnn.posterior.outputs_at`)."""
        check_is_fitted(self)
        X = validate_data(self, flat_rows(self, X), reset=False, dtype=[np.float64, np.float32])
        return outputs_at(self.posterior_, self._forward(), X, reduce, self._row_values())

    def _row_values(self) -> int | None:
        """Values a row makes through the network (prediction's block sizes), counted
        once at fit."""
        return self._values_per_row

    def __getstate__(self) -> dict[str, Any]:
        """Move every tensor to the CPU so that pickles load anywhere."""
        state = dict(super().__getstate__())  # a copy: never mutate self
        cpu = torch.device("cpu")
        for key, value in state.items():
            if isinstance(value, tuple(POSTERIORS.values())):
                state[key] = value.to(cpu)
            elif isinstance(value, torch.Tensor):
                state[key] = value.to(cpu)
            elif isinstance(value, GPPrior):
                state[key] = copy.deepcopy(value).to(cpu)
        return state


def _check_weights(sample_weight: Any, X: np.ndarray) -> np.ndarray | None:
    """``sample_weight`` as a float64 array of one non-negative, finite weight per row, not
    all zero (scikit-learn's checks and messages); None stays None (every row weight 1)."""
    if sample_weight is None:
        return None
    return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)


def _make_init(class_name: str, params: list[Param]):
    """A keyword-only ``__init__`` storing one attribute per declared parameter, as
    scikit-learn requires: no logic, every argument stored unchanged."""
    names = [p.name for p in params]
    defaults = {p.name: p.default for p in params}

    def __init__(self, **kwargs: Any) -> None:
        unknown = [k for k in kwargs if k not in defaults]
        if unknown:
            raise TypeError(f"{class_name}.__init__() got an unexpected keyword argument "
                            f"{unknown[0]!r}")
        for name in names:
            setattr(self, name, kwargs.get(name, defaults[name]))

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
           for p in params])
    __init__.__qualname__ = f"{class_name}.__init__"
    return __init__


def _continued(fresh: dict[str, torch.Tensor], previous: dict[str, torch.Tensor]
               ) -> dict[str, torch.Tensor]:
    """``fresh`` initial parameters replaced by a previous fit's (``warm_start``), which must
    have every key with the same shape."""
    out = {}
    for key, value in fresh.items():
        old = previous.get(key)
        if old is None or old.shape != value.shape:
            got = "missing" if old is None else tuple(old.shape)
            raise ValueError(
                "warm_start=True continues from the previous fit, but its parameters differ "
                f"from this fit's: {key!r} has shape {got}, this fit needs "
                f"{tuple(value.shape)} (the features, outputs or classes, the network or the "
                "number of chains or members changed). Fit with warm_start=False.")
        out[key] = old.detach().to(value.device, value.dtype).clone()
    return out


def _placeholder_posterior(params: dict[str, torch.Tensor], n_samples: int) -> Particles:
    """The initial parameters repeated as ``(C, n_samples)`` draws, for a fit with nothing
    to learn: predictions then have the usual number of draws."""
    return Particles({k: v.unsqueeze(1).repeat(1, n_samples, *(1,) * (v.dim() - 1))
                      for k, v in params.items()})
