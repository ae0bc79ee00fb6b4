"""Hyperparameter tables: one source for names, defaults, constraints and docs.

Each estimator's ``__init__`` and the Parameters section of its docstring are
generated from these tables into the estimator modules by
``tools/generate_estimators.py`` (``tests/estimators/test_generated.py`` checks
that they are current); ``_parameter_constraints`` is computed from them when
the class is created. A parameter is declared once however many estimators
share it.
"""

from __future__ import annotations

import textwrap
from numbers import Integral, Real

import torch

from .._validation import HasMethods, Interval, StrOptions
from ..inference.families import FAMILIES
from ..inference.hyper import Param, merge, param, with_default
from ..inference.registry import METHODS
from ..nn.mlp import ACTIVATIONS
from ..priors.gp import KERNELS

__all__ = [
    "Param",
    "COMMON",
    "common_params",
    "REGRESSION",
    "GENERIC",
    "method_params",
    "format_params",
]


_p = param


COMMON = [
    _p("hidden_layer_sizes", (50,), [tuple, list], "tuple of int",
       "Widths of the hidden layers; ``()`` is a linear model."),
    _p("activation", "tanh", [StrOptions(set(ACTIVATIONS))], "str",
       f"Hidden-layer activation, one of {sorted(ACTIVATIONS)}."),
    _p("random_state", None, ["random_state"], "int, RandomState or None",
       "Seed of the single ``torch.Generator`` used by the fit; the global torch "
       "RNG is never touched."),
    _p("device", "auto", [str, torch.device], "str or torch.device",
       "``'auto'`` (cuda, then mps, then cpu), ``'cpu'``, ``'cuda'``, ``'cuda:N'`` "
       "or ``'mps'``; resolved in ``fit`` to ``device_``."),
    _p("dtype", "float32", [StrOptions({"float32", "float64"})], "str",
       "Floating-point type of the network maths (GP maths is always float64)."),
    _p("verbose", 0, ["verbose"], "int",
       "0: silent; 1: progress bar with the running log posterior (samplers) or "
       "objective (optimisers); 2: also per-chain (per-member) log lines on the "
       "``skfbnn`` logger."),
]

ARCHITECTURE = ("hidden_layer_sizes", "activation")
"""The ``COMMON`` entries a method may give its own defaults (``MethodSpec.architecture``)."""

AUTO_MEASUREMENT_POINTS = 100
"""``n_measurement_points="auto"``: this many, or the number of training rows if fewer."""


def common_params(method: str | None = None) -> list[Param]:
    """``COMMON`` as a method's estimator shows it.

    With a method, its own network defaults (:attr:`MethodSpec.architecture`, e.g.
    two GELU layers for the Metropolis-Hastings samplers) replace the library-wide
    ones. Without (the generic estimators, ``method`` chosen at run time)
    ``hidden_layer_sizes`` and ``activation`` default to None: the chosen method's.

    Examples
    --------
    >>> [p.default for p in common_params("pcn")[:2]], [p.default for p in common_params()[:2]]
    ([(50, 50), 'gelu'], [None, None])
    >>> common_params("sgld")[:2] == COMMON[:2]
    True
    """
    if method is not None:
        own = METHODS[method].architecture
        return [with_default(p, own[p.name]) if p.name in own else p for p in COMMON]
    out = []
    for p in COMMON:
        if p.name in ARCHITECTURE:
            own = {m: spec.architecture[p.name] for m, spec in METHODS.items()
                   if p.name in spec.architecture}
            type_ = p.doc.split(" : ", 1)[1].split(", default=", 1)[0]
            text = " ".join(p.doc.split("\n", 1)[1].split())
            p = param(p.name, None, [None, *p.constraints], f"{type_} or None",
                      f"{text} None: the method's default, {p.default!r}, or its own ("
                      + ", ".join(f"{m}: {v!r}" for m, v in own.items()) + ").")
        out.append(p)
    return out


REGRESSION = [
    _p("noise_std", "learn", [StrOptions({"learn"}), Interval(Real, 0, None, closed="neither")],
       "'learn' or float",
       "Observation-noise standard deviation in the units of ``y``, or ``'learn'`` "
       "to infer it: samplers sample it with the weights under a weak log-normal "
       "prior, Bayes by backprop maximises it under that prior (a point estimate), "
       "deep ensembles predict it with a variance head per member."),
    _p("normalize_y", True, ["boolean"], "bool",
       "Standardise the targets internally; every output is in original units."),
]

GENERIC = [
    _p("method", "fsgld", [StrOptions(set(METHODS))], "str",
       f"Registered inference method, one of {sorted(METHODS)}."),
    _p("method_params", None, [None, dict], "dict or None",
       "Hyperparameters of the method (the named estimator's parameters beyond "
       "the common ones); unspecified ones take that estimator's defaults."),
]

PRIORS = {
    "ntk": [],
    "weight": [
        _p("prior_std", 1.0, [Interval(Real, 0, None, closed="neither")], "float",
           "Standard deviation of the isotropic Gaussian weight prior."),
    ],
    "weight_sampler": [
        _p("prior_std", "learn",
           [StrOptions({"learn", "ard"}), Interval(Real, 0, None, closed="neither")],
           "float, 'learn' or 'ard'",
           "Standard deviation of the isotropic Gaussian weight prior. 'learn': one "
           "prior precision per layer's weights and per layer's biases, with a "
           "Gamma(2, 2) hyperprior (standardised units), drawn from its conditional "
           "by a Gibbs step every 50 steps from the middle of burn-in on; the learned "
           "scales are in ``diagnostics_['prior_std']``. 'ard': as 'learn', with one "
           "precision per input feature for the first layer's weights (automatic "
           "relevance determination; its scales are ``(n_chains, n_features)``)."),
    ],
    "function": [
        _p("kernel", None, [None, StrOptions(set(KERNELS)), HasMethods(["forward"])],
           "None, str or gpytorch kernel",
           f"GP prior covariance: None (scaled ARD RBF), one of {list(KERNELS)}, or "
           "a gpytorch kernel instance (copied, never modified)."),
        _p("prior_fit_iter", 100, [Interval(Integral, 0, None, closed="left")], "int",
           "Maximum L-BFGS iterations of exact marginal-likelihood fitting of the GP "
           "hyperparameters (positive ones in log scale) on at most 1000 training "
           "points; it stops earlier once converged. 0 keeps them fixed."),
        _p("prior_mean", "constant", [StrOptions({"zero", "constant"})], "str",
           "GP prior mean: zero, or a constant fitted with the hyperparameters."),
        _p("n_measurement_points", "auto",
           [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")], "int or 'auto'",
           "Size of the measurement set redrawn at every step. 'auto': "
           f"``min({AUTO_MEASUREMENT_POINTS}, n_train)``, so on tiny training sets the "
           "functional prior does not get more points than the likelihood has rows (the "
           "paper uses as many as the training set, up to 1000; on the 1-D example 20 "
           "points instead of 100 widen the gap band to the exact GP's, and no UCI "
           "training set has fewer than 100 rows)."),
        _p("measurement_train_fraction", 0.5, [Interval(Real, 0, 1, closed="both")], "float",
           "Fraction of the measurement set drawn from the training inputs; the "
           "rest is uniform in the widened training box."),
        _p("measurement_margin", 0.1, [Interval(Real, 0, None, closed="left")], "float",
           "Relative widening of the training box on each side."),
        _p("prior_nugget", "noise", [StrOptions({"noise"}), Interval(Real, 0, None, closed="left")],
           "'noise' or float",
           "Variance added to the diagonal of the prior covariance at the measurement "
           "points (standardised target units). 'noise' uses the observation-noise "
           "variance of the pre-fitted GP (for classification the Dirichlet GP's "
           "per-class mean noise of the transformed labels), floored at 1% of the prior "
           "variance. "
           "A small nugget makes the prior very stiff in low dimensions and needs a "
           "much smaller step_size (docs/user_guide.md)."),
    ],
}


FUNCTIONAL_SAMPLER = [
    _p("measurement_margin", 0.25, [Interval(Real, 0, None, closed="left")], "float",
       "Relative widening of the training box on each side; 0.25 for the functional "
       "samplers (0.1 for the variational methods): on the 1-D example it opens the band "
       "in the gap between the two clusters 1.9x (fSGHMC, six seeds) where 0.1 gave 1.5x, "
       "and it leaves the UCI validation rows where they were (docs/benchmarks.md, "
       "section 2)."),
    _p("weight_prior_std", None, [None, Interval(Real, 0, None, closed="neither")],
       "float or None",
       "Optional weak Gaussian weight prior added to the functional prior. "
       "None (the paper's choice) leaves the weight posterior improper."),
]
"""Parameters of the functional samplers only (the variational methods regularise the
weights through their own objective, and keep the measurement margin their defaults were
validated with)."""


def measurement_points(value: int | str, n_train: int) -> int:
    """The measurement-set size: ``value``, or for ``"auto"`` the smaller of
    ``AUTO_MEASUREMENT_POINTS`` and the number of training rows.

    Examples
    --------
    >>> measurement_points("auto", 20), measurement_points("auto", 5000), measurement_points(64, 20)
    (20, 100, 64)
    """
    return min(AUTO_MEASUREMENT_POINTS, n_train) if value == "auto" else value


def method_params(method: str, task: str = "regression") -> list[Param]:
    """The parameters a registered method needs beyond ``COMMON`` and the task's.

    Its family's run-policy parameters, the method module's own ``HYPER``
    table (plus ``REGRESSION_HYPER`` for regressors, ``CLASSIFICATION_HYPER``
    for classifiers: options of the
    method's noise model) and its prior's parameters; an entry of ``HYPER``
    replaces a family or prior entry of the same name (e.g. the ensemble's
    optional ``prior_std``).
    """
    spec = METHODS[method]
    own = (*spec.module.HYPER, *(getattr(spec.module, "REGRESSION_HYPER", ())
                                 if task == "regression" else
                                 getattr(spec.module, "CLASSIFICATION_HYPER", ())))
    prior = PRIORS[spec.prior]
    if spec.prior == "weight" and spec.family == "sampler":
        prior = PRIORS["weight_sampler"]
    if spec.prior == "function" and spec.family == "sampler":
        prior = [*prior, *FUNCTIONAL_SAMPLER]
    return merge(merge(FAMILIES[spec.family].params, own, prior), own)


def format_params(params: list[Param], indent: str = "    ", width: int = 100) -> str:
    """The numpydoc Parameters section for ``params``, indented for a class docstring.

    The first line is not indented (it replaces text already at ``indent``);
    descriptions are wrapped so that no line, ``indent`` included, exceeds ``width``.
    """
    lines = ["Parameters", "----------"]
    for p in params:
        header, _, text = p.doc.partition("\n")
        lines.append(header)
        lines += textwrap.wrap(" ".join(text.split()), width - len(indent),
                               initial_indent="    ", subsequent_indent="    ",
                               break_long_words=False, break_on_hyphens=False)
    return ("\n" + indent).join(lines)
