"""Parameter tables: one source for names, defaults, constraints and docs.

Each estimator's ``__init__``, ``_parameter_constraints`` and the Parameters section of
its docstring are made from these tables (and the registry entry's) when the class is
created (:mod:`._factory`). A parameter is declared once however many estimators share it.
"""

from __future__ import annotations

import textwrap
from numbers import Real

import torch

from .._hyper import Param, merge, param, with_default
from .._validation import Interval, StrOptions
from ..inference.families import FAMILIES
from ..inference.registry import METHODS
from ..nn.mlp import ACTIVATIONS

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
    _p("network", None, [None, callable], "None, callable or torch.nn.Module",
       "The network: None, the built-in MLP (``hidden_layer_sizes``, ``activation``); a "
       "callable ``network(n_features_in, n_outputs, **network_params)`` returning a "
       "``torch.nn.Module`` (a function or an ``nn.Module`` subclass); or an ``nn.Module`` "
       "instance. ``n_outputs`` is the number of targets, of classes, or twice the targets "
       "for the ensembles' variance heads (``noise_std='learn'``). The fit works on a deep "
       "copy, never modifying the instance given: its weights are read as an architecture "
       "only, and every chain or member starts from weights drawn from the fit's generator "
       "(uniform on +-1/sqrt(fan-in), normalisation layers at 1 and 0). Every parameter is "
       "inferred; fixed tensors belong in buffers. Refused: batch normalisation (use "
       "LayerNorm or GroupNorm) and random layers such as dropout; the Metropolis-Hastings "
       "samplers take an ``nn.Sequential`` ending in ``nn.Linear`` (their linear readout). "
       "See the user guide's networks page."),
    _p("network_params", None, [None, dict], "dict or None",
       "Keyword arguments of a ``network`` callable (searchable by ``GridSearchCV``, e.g. "
       "``{'network_params': [{'channels': 8}, {'channels': 16}]}``)."),
    _p("input_shape", None, [None, tuple, list], "tuple of int or None",
       "The shape of one input row as the network takes it, e.g. ``(1, 40)`` for a "
       "one-channel signal or ``(1, 8, 8)`` for an image. ``X`` stays two-dimensional, "
       "``(n_samples, prod(input_shape))``, through validation, pipelines and "
       "cross-validation, and each row is reshaped inside the network's call; an array "
       "whose trailing shape is ``input_shape`` is also accepted, and flattened. None: "
       "flat rows."),
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
    _p("warm_start", False, ["boolean"], "bool",
       "Start the next ``fit`` from this fit's final state (each chain's last draw, the "
       "variational means, the members) instead of a fresh initialisation, and run the "
       "step counts then set (e.g. a shorter burn-in or fewer steps for an update on new "
       "rows). A GP prior's marginal-likelihood fit starts from the previous fit's prior "
       "(kernel, mean, noise), unless the kernel changed. The shapes must match: same "
       "features, outputs or classes, network and number of chains or members. Each "
       "continued fit draws from a generator of its own "
       "(seeded from ``random_state`` and the number of fits it continues), so an update "
       "draws fresh noise and minibatches, reproducibly."),
]

ARCHITECTURE = ("hidden_layer_sizes", "activation")
"""The ``COMMON`` entries a method may give its own defaults (``MethodSpec.architecture``)."""

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
    _p("method", "fsgld", [StrOptions(METHODS.keys())], "str",  # live: registered later too
       f"Registered inference method, one of {sorted(METHODS)}."),
    _p("method_params", None, [None, dict], "dict or None",
       "Hyperparameters of the method (the named estimator's parameters beyond "
       "the common ones); unspecified ones take that estimator's defaults."),
]

def method_params(method: str, task: str = "regression") -> list[Param]:
    """The parameters a registered method needs beyond ``COMMON`` and the task's.

    Its family's run-policy parameters, the method module's own ``HYPER`` table plus the
    task's additions (:meth:`MethodSpec.task_hyper`), and its prior's parameters
    (:attr:`MethodSpec.prior_params`), all declared by the registry entry; an entry of the
    method's own tables replaces a family or prior entry of the same name (e.g. the
    ensemble's optional ``prior_std``).
    """
    spec = METHODS[method]
    own = (*spec.own_hyper, *spec.task_hyper(task))
    return merge(merge(FAMILIES[spec.family].params, own, spec.prior_params), own)


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
