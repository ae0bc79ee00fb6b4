"""The fit template shared by every estimator."""

from __future__ import annotations

import copy
import logging
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
from ..diagnostics import SamplerWarning, lagging_chains, optimisation_warnings, summarize
from ..inference.families import FAMILIES
from ..inference.registry import METHODS
from ..inference.types import BayesProblem
from ..nn.functional import init_params, make_forward
from ..nn.mlp import build_mlp
from ..posterior import POSTERIORS, from_run
from ..priors.functional import FunctionalPrior, FunctionPrior
from ..priors.gp import GPPrior, make_kernel
from ..priors.measurement import MeasurementSampler
from ..priors.weight import WeightPrior
from ._params import COMMON, GENERIC, Param, method_params

__all__ = ["BayesianNetBase"]

logger = logging.getLogger("skfbnn")
_N_PROBE = 64


class BayesianNetBase(BaseEstimator):
    """Fit template: validation, network, prior, sampler run, stored draws.

    Subclasses set ``_method`` (a registry key) or ``_generic = True``, and a
    task part (:mod:`._regression`, :mod:`._classification`) supplies
    ``_task_params``, ``_validate_fit_data``, ``_encode_target``,
    ``_make_likelihood`` and ``_probe_summary``. ``__init__``, ``_parameter_constraints`` and the
    docstring's Parameters section are generated from the parameter tables.
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
            return [*GENERIC, *COMMON, *cls._task_params]
        return [*COMMON, *cls._task_params, *method_params(cls._method, cls._task)]

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
            return self._fit(X, y)

    def __sklearn_is_fitted__(self) -> bool:
        return "posterior_" in self.__dict__

    def _fit(self, X: Any, y: Any) -> BayesianNetBase:
        X, y = self._validate_fit_data(X, y)
        method, hyper = self._method_and_hyper()
        spec, sizes = METHODS[method], self._check_hidden_layer_sizes()
        family = FAMILIES[spec.family]
        device, dtype = resolve_device(self.device), resolve_dtype(self.dtype)
        gen = make_generator(spawn_seed(self.random_state), device)
        Xt = to_tensor(X, device, dtype)
        yt, n_targets = self._encode_target(y, device, dtype)
        likelihood = self._make_likelihood(spec, hyper)
        network = build_mlp(X.shape[1], likelihood.n_outputs(n_targets), sizes, self.activation)
        n_batch = family.n_batch(hyper)
        params = init_params(network, n_batch, gen, device=device, dtype=dtype)
        params.update(likelihood.init_params(n_batch, n_targets, device, dtype))
        prior = self._make_prior(spec.prior, hyper, Xt, yt, n_targets, gen)
        problem = BayesProblem(make_forward(network), likelihood, prior, len(X))
        transform = spec.build(
            problem, **{**{name: hyper[name] for name in spec.hyper},
                        **family.build_kwargs(hyper, len(X))}
        )
        measure = getattr(prior, "draw_measure", None)
        with _progress(self.verbose, family, family.n_steps(hyper, len(X))) as progress:
            result = family.run(transform, params, Xt, yt, gen, hyper, problem=problem,
                                measure=measure, progress=progress)
        posterior = from_run(spec.posterior, result, hyper.get("n_samples", 1), gen)
        self._check_draws(posterior.flat())
        self.device_ = device
        self.network_ = network
        self.likelihood_ = likelihood
        self.posterior_ = posterior
        self.prior_ = prior.gp if isinstance(prior, FunctionPrior) else None
        functional = prior.functional if isinstance(prior, FunctionPrior) else None
        if spec.family == "sampler":
            self.diagnostics_ = self._diagnose(result.log_post, Xt, functional,
                                               hyper["n_burnin"])
        else:
            self.diagnostics_ = self._diagnose_optimisation(result)
        return self

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

    def _check_hidden_layer_sizes(self) -> tuple[int, ...]:
        sizes = tuple(self.hidden_layer_sizes)
        if not all(isinstance(s, (int, np.integer)) and s >= 1 for s in sizes):
            raise ValueError(
                "hidden_layer_sizes must hold positive integers. "
                f"Got {self.hidden_layer_sizes!r}."
            )
        return tuple(int(s) for s in sizes)

    def _make_prior(self, kind, hyper, Xt, yt, n_out, gen):
        """The network prior object: weights, GP on functions, or None (flat)."""
        if kind == "weight":
            std = hyper["prior_std"]
            return None if std is None else WeightPrior(std)
        gp_device = float64_device(Xt.device)
        X64 = Xt.to(gp_device, torch.float64)
        gp = GPPrior(make_kernel(hyper["kernel"], X64, n_out), n_out,
                     constant_mean=hyper["prior_mean"] == "constant").to(gp_device)
        gp.fit(X64, yt, hyper["prior_fit_iter"], gen, classification=self._is_classifier())
        sampler = MeasurementSampler(
            Xt, hyper["n_measurement_points"], hyper["measurement_train_fraction"],
            hyper["measurement_margin"],
        )
        functional = FunctionalPrior(gp, sampler, _nugget(hyper["prior_nugget"], gp, X64))
        return FunctionPrior(functional, hyper["weight_prior_std"])

    def _check_draws(self, draws) -> None:
        """Task hook: raise :class:`SamplerDivergenceError` for unusable draws."""

    def _is_classifier(self) -> bool:
        return hasattr(self, "_encode_labels")

    def _diagnose(self, trace, Xt, fprior, n_burnin: int) -> dict[str, Any]:
        n_chains, n_draws = self.posterior_.shape
        probe = np.unique(np.linspace(0, len(Xt) - 1, _N_PROBE).round().astype(int))
        diagnostics: dict[str, Any] = {
            "log_posterior": to_numpy(trace),
            "probe_indices": probe,
            "warnings": [],
        }
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
            f = self._probe_summary(self.posterior_.predict_f(self._forward(), Xt[probe]))
            summary, found = summarize(to_numpy(f).reshape(n_chains, n_draws, -1))
            diagnostics.update(summary)
            diagnostics["warnings"].extend(found)
        if self.verbose:
            for w in diagnostics["warnings"]:
                logger.warning("%s: %s", w.kind, w.message)
        return diagnostics

    def _diagnose_optimisation(self, result) -> dict[str, Any]:
        trace = {name: to_numpy(values) for name, values in result.trace.items()}
        objective = next(iter(trace.values()))
        diagnostics: dict[str, Any] = {
            "objective": objective,
            "trace": trace,
            "warnings": optimisation_warnings(objective),
        }
        if self.verbose:
            for w in diagnostics["warnings"]:
                logger.warning("%s: %s", w.kind, w.message)
        return diagnostics

    # ------------------------------------------------------------ predict
    def _forward(self):
        return make_forward(self.network_)

    def _draws_at(self, X: Any) -> torch.Tensor:
        """Validated ``X`` through every stored draw: ``(D, n, n_out)``.

        Predictions are computed in float64 (float32 only on devices without
        float64), so that they do not depend on the row order of ``X``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        first = next(iter(self.posterior_.draws.values()))
        dtype = first.dtype if first.device.type == "mps" else torch.float64
        posterior = self.posterior_.to(first.device, dtype)
        with cpu_threads(first.device):  # as in fit: small ops, threads only contend
            f = posterior.predict_f(self._forward(), to_tensor(X, first.device, dtype))
        return f.reshape(-1, *f.shape[2:])

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

