"""The fit template shared by every estimator."""

from __future__ import annotations

import copy
import logging
import warnings
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import _fit_context, validate_parameter_constraints
from ..device import (
    cpu_threads,
    float64_device,
    make_generator,
    resolve_device,
    resolve_dtype,
    spawn_seed,
    to_numpy,
    to_tensor,
)
from ..diagnostics import (
    SamplerWarning,
    collapsed_chains,
    lagging_chains,
    optimisation_warnings,
    predictive_mixing,
)
from ..inference.families import FAMILIES, sampler_lengths
from ..inference.registry import METHODS
from ..exceptions import SamplerDivergenceError
from ..inference.types import BayesProblem
from ..nn.functional import init_params, make_forward
from ..nn.mlp import build_mlp
from ..posterior import POSTERIORS, Particles, from_run
from ..priors.functional import FunctionalPrior, FunctionPrior
from ..priors.gp import GPPrior, make_kernel
from ..priors.measurement import MeasurementSampler
from ..priors.weight import HierarchicalWeightPrior, WeightPrior
from ._params import COMMON, GENERIC, Param, common_params, measurement_points, method_params

__all__ = ["BayesianNetBase"]

logger = logging.getLogger("skfbnn")
_N_PROBE = 64


class BayesianNetBase(BaseEstimator):
    """Fit template: validation, network, prior, sampler run, stored draws.

    Subclasses set ``_method`` (a registry key) or ``_generic = True``, and a
    task part (:mod:`._regression`, :mod:`._classification`) supplies
    ``_task_params``, ``_validate_fit_data``, ``_encode_target``,
    ``_make_likelihood``, ``_check_fit`` and ``_probe_moments``. ``__init__``,
    ``_parameter_constraints`` and the docstring's Parameters section are generated
    from the parameter tables.
    """

    _method: str | None = None
    _generic: bool = False
    _task_params: list[Param] = []
    _task: str = "regression"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_method" not in cls.__dict__ and "_generic" not in cls.__dict__:
            return
        # ``__init__`` and the docstring's Parameters section are written into the
        # class source by tools/generate_estimators.py; the constraints (objects
        # without a literal form) are computed here from the same tables.
        cls._parameter_constraints = {p.name: p.constraints for p in cls._declared_params()}

    @classmethod
    def _declared_params(cls) -> list[Param]:
        if cls._generic:
            return [*GENERIC, *common_params(), *cls._task_params]
        return [*common_params(cls._method), *cls._task_params,
                *method_params(cls._method, cls._task)]

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> BayesianNetBase:
        """Sample the posterior and store its draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        # A failed (re)fit must not leave draws of an earlier fit behind, to be
        # combined with the new fit's scaling or classes at predict time.
        self.__dict__.pop("posterior_", None)
        with cpu_threads(resolve_device(self.device)):
            try:
                return self._fit(X, y)
            except BaseException:  # e.g. a fit warning turned into an error by a filter
                self.__dict__.pop("posterior_", None)
                raise

    def __sklearn_is_fitted__(self) -> bool:
        return "posterior_" in self.__dict__

    def _fit(self, X: Any, y: Any) -> BayesianNetBase:
        X, y = self._validate_fit_data(X, y)
        method, hyper = self._method_and_hyper()
        spec = METHODS[method]
        sizes, activation = self._architecture(spec)
        family = FAMILIES[spec.family]
        device, dtype = resolve_device(self.device), resolve_dtype(self.dtype)
        gen = make_generator(spawn_seed(self.random_state), device)
        Xt = to_tensor(X, device, dtype)
        yt, n_targets = self._encode_target(y, device, dtype)
        likelihood = self._make_likelihood(spec, hyper)
        network = _build_network(X.shape[1], likelihood.n_outputs(n_targets), sizes,
                                 activation)
        n_batch = family.n_batch(hyper)
        params = init_params(network, n_batch, gen, device=device, dtype=dtype)
        params.update(likelihood.init_params(n_batch, n_targets, device, dtype))
        if n_targets:
            prior, result, posterior = self._infer(spec, hyper, network, likelihood, params,
                                                   Xt, yt, n_targets, gen)
        else:  # nothing to learn (regression: every target column is constant)
            prior, result = None, None
            posterior = _placeholder_posterior(params, hyper.get("n_samples", 1))
        if isinstance(prior, HierarchicalWeightPrior):
            prior.check_scale(family.step_name)
        checks = self._check_fit(posterior, make_forward(network), likelihood, X, yt,
                                 family.step_name)
        self.device_ = device
        self.network_ = network
        self.likelihood_ = likelihood
        self.posterior_ = posterior
        self.prior_ = prior.gp if isinstance(prior, FunctionPrior) else None
        functional = prior.functional if isinstance(prior, FunctionPrior) else None
        self.diagnostics_ = self._diagnostics(spec, hyper, result, Xt, functional, checks)
        if isinstance(prior, HierarchicalWeightPrior):  # the learned scales, per chain
            self.diagnostics_["prior_std"] = {k: to_numpy(v)
                                              for k, v in prior.prior_std().items()}
        self._report(self.diagnostics_["warnings"])
        return self

    def _infer(self, spec, hyper, network, likelihood, params, Xt, yt, n_targets, gen):
        """The prior, the run's result and the fitted posterior of method ``spec``."""
        family = FAMILIES[spec.family]
        prior = self._make_prior(spec.prior, hyper, Xt, yt, n_targets, gen)
        problem = BayesProblem(make_forward(network), likelihood, prior, len(Xt),
                               network=network)
        transform = spec.build(
            problem, **{**{name: hyper[name] for name in spec.hyper},
                        **family.build_kwargs(hyper, len(Xt))}
        )
        measure = getattr(prior, "draw_measure", None)
        with _progress(self.verbose, family, family.n_steps(hyper, len(Xt))) as progress:
            result = family.run(transform, params, Xt, yt, gen, hyper, problem=problem,
                                measure=measure, progress=progress)
        return prior, result, from_run(spec.posterior, result, hyper.get("n_samples", 1), gen)

    def _method_and_hyper(self) -> tuple[str, dict[str, Any]]:
        if not self._generic:
            names = [p.name for p in method_params(self._method, self._task)]
            return self._method, {name: getattr(self, name) for name in names}
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
        return self.method, {**{p.name: p.default for p in params}, **given}

    def _architecture(self, spec) -> tuple[tuple[int, ...], str]:
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

    def _make_prior(self, kind, hyper, Xt, yt, n_out, gen):
        """The network prior object: weights, GP on functions, or None (flat)."""
        if kind == "ntk":  # standard-normal NTK entries, handled by the method
            return None
        if kind == "weight":
            std = hyper["prior_std"]
            if std in ("learn", "ard"):
                return HierarchicalWeightPrior(ard=std == "ard",
                                               temperature=hyper.get("temperature", 1.0))
            return None if std is None else WeightPrior(std)
        gp_device = float64_device(Xt.device)
        X64 = Xt.to(gp_device, torch.float64)
        gp = GPPrior(make_kernel(hyper["kernel"], X64, n_out), n_out,
                     constant_mean=hyper["prior_mean"] == "constant").to(gp_device)
        gp.fit(X64, yt, hyper["prior_fit_iter"], gen, classification=self._is_classifier())
        sampler = MeasurementSampler(
            Xt, measurement_points(hyper["n_measurement_points"], len(Xt)),
            hyper["measurement_train_fraction"],
            hyper["measurement_margin"],
        )
        functional = FunctionalPrior(gp, sampler, _nugget(hyper["prior_nugget"], gp, X64))
        return FunctionPrior(functional, hyper.get("weight_prior_std"))

    def _check_fit(self, posterior, forward, likelihood, X, yt, step_name) -> dict[str, Any]:
        """Task hook: raise :class:`SamplerDivergenceError` for an unusable fit.

        ``X`` holds the validated training inputs, ``yt`` the encoded targets.
        Returns entries for ``diagnostics_``; its ``"warnings"`` come first there.
        """
        return {"warnings": []}

    def _is_classifier(self) -> bool:
        return hasattr(self, "_encode_labels")

    def _diagnostics(self, spec, hyper, result, Xt, fprior, checks) -> dict[str, Any]:
        """``diagnostics_``: the family's (none without a run) and the task's checks,
        whose warnings come first."""
        if result is None:
            diagnostics: dict[str, Any] = {"warnings": []}
        elif spec.family in ("sampler", "accept_reject"):
            diagnostics = self._diagnose(result.log_post, Xt, fprior,
                                         sampler_lengths(hyper, len(Xt))[0])
        else:
            diagnostics = self._diagnose_optimisation(result)
        summarize = FAMILIES[spec.family].summarize
        if result is not None and summarize is not None:
            diagnostics.update(summarize(result, hyper))
        diagnostics.update({k: v for k, v in checks.items() if k != "warnings"})
        diagnostics["warnings"][:0] = checks["warnings"]
        return diagnostics

    def _diagnose(self, trace, Xt, fprior, n_burnin: int) -> dict[str, Any]:
        n_chains, n_draws = self.posterior_.shape
        probe = np.unique(np.linspace(0, len(Xt) - 1, _N_PROBE).round().astype(int))
        diagnostics: dict[str, Any] = {
            "log_posterior": to_numpy(trace),
            "probe_indices": probe,
            "warnings": [],
        }
        collapsed = collapsed_chains(diagnostics["log_posterior"], n_burnin)
        if collapsed:
            raise SamplerDivergenceError(
                f"The sampler diverged: chain(s) {collapsed} ended with a log posterior more "
                "than 100 times below their starting value (weights thrown to enormous "
                "values). The step size is too large for this problem: reduce step_size."
            )
        sampling = diagnostics["log_posterior"][n_burnin:]
        lagging = lagging_chains(sampling) if n_chains >= 2 and len(sampling) else []
        if lagging:
            diagnostics["warnings"].append(SamplerWarning(
                "divergence",
                f"chain(s) {lagging} have a log posterior far below the others during "
                "sampling (escaped to a region of negligible mass, e.g. a blown-up "
                "noise or weights); reduce step_size or raise friction.",
                extra={"chains": lagging},
            ))
        if fprior is not None and fprior.n_escalations:
            diagnostics["warnings"].append(SamplerWarning(
                "jitter",
                f"the prior covariance needed {fprior.n_escalations} jitter "
                "escalation(s); consider a larger prior_nugget.",
                extra={"n_escalations": fprior.n_escalations},
            ))
        if n_chains >= 2 and n_draws >= 4:
            out = outputs_at(self.posterior_, self._forward(), Xt[probe])
            f, total_var = self._probe_moments(out)
            summary, found = predictive_mixing(to_numpy(f).reshape(n_chains, n_draws, -1),
                                               to_numpy(total_var).reshape(-1))
            diagnostics.update(summary)
            diagnostics["warnings"].extend(found)
        return diagnostics

    def _diagnose_optimisation(self, result) -> dict[str, Any]:
        trace = {name: to_numpy(values) for name, values in result.trace.items()}
        objective = next(iter(trace.values()))
        return {
            "objective": objective,
            "trace": trace,
            "warnings": optimisation_warnings(objective),
        }

    def _report(self, found: list[SamplerWarning]) -> None:
        """Issue the warnings that carry a category as Python warnings; log all if verbose."""
        for w in found:
            if w.category is not None:
                warnings.warn(f"{type(self).__name__}: {w.message}", w.category,
                              stacklevel=5)
        if self.verbose:
            for w in found:
                logger.warning("%s: %s", w.kind, w.message)

    # ------------------------------------------------------------ predict
    def _forward(self):
        return make_forward(self.network_)

    def _draws_at(self, X: Any) -> torch.Tensor:
        """Validated ``X`` through every stored draw: ``(D, n, n_out)``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return outputs_at(self.posterior_, self._forward(), X)

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


def outputs_at(posterior, forward, X: Any) -> torch.Tensor:
    """Network outputs of every draw of ``posterior`` at ``X``: ``(D, n, n_out)``.

    Computed in float64 (float32 only on devices without float64), so that they
    do not depend on the row order of ``X``.
    """
    first = next(iter(posterior.draws.values()))
    dtype = first.dtype if first.device.type == "mps" else torch.float64
    posterior = posterior.to(first.device, dtype)
    X = X.to(first.device, dtype) if torch.is_tensor(X) else to_tensor(X, first.device, dtype)
    with cpu_threads(first.device):  # as in fit: small ops, threads only contend
        f = posterior.predict_f(forward, X)
    return f.reshape(f.shape[0] * f.shape[1], *f.shape[2:])


def _build_network(n_in: int, n_out: int, sizes: tuple[int, ...], activation: str):
    """:func:`build_mlp`; ``n_out`` may be 0 (a regression whose targets are all constant)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Initializing zero-element tensors", UserWarning)
        return build_mlp(n_in, n_out, sizes, activation)


def _placeholder_posterior(params: dict[str, torch.Tensor], n_samples: int) -> Particles:
    """The initial parameters repeated as ``(C, n_samples)`` draws, for a fit with nothing
    to learn: predictions then have the usual number of draws."""
    return Particles({k: v.unsqueeze(1).repeat(1, n_samples, *(1,) * (v.dim() - 1))
                      for k, v in params.items()})


def _nugget(value: str | float, gp: GPPrior, X: torch.Tensor) -> float:
    """The absolute prior nugget for the ``prior_nugget`` parameter."""
    if value != "noise":
        return float(value)
    floor = 0.01 * float(gp.mean_cov(X[:1])[1].mean())
    noise_var = float(gp.noise_std.pow(2).mean())
    return max(noise_var, floor) if noise_var == noise_var else floor  # NaN: not fitted


@contextmanager
def _progress(verbose: int, family, n_steps: int):
    """A progress callback: tqdm bar with the running objective (verbose >= 1) and
    log lines (verbose >= 2)."""
    if not verbose:
        yield None
        return
    from tqdm.auto import tqdm

    sampler = family.step_name == "step_size"
    label, name = ("log_post", "log posterior") if sampler else ("objective", "objective")
    every = max(1, n_steps // 10)
    desc = "sampling" if sampler else "optimising"
    with tqdm(total=n_steps, desc=desc, leave=False) as bar:

        def progress(step: int, value: torch.Tensor) -> None:
            bar.update(1)
            if step % 25 == 0:
                bar.set_postfix({label: f"{float(value.mean()):.4g}"})
            if verbose >= 2 and (step + 1) % every == 0:
                for chain, v in enumerate(value.tolist()):
                    logger.info("step %d chain %d %s %.6g", step + 1, chain, name, v)

        yield progress

