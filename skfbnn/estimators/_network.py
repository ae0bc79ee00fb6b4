"""The network of a fit: the built-in MLP, or the user's module behind ``network=``.

One place decides the architecture of every fit (:func:`network_for`), checks what the
inference cannot take (:func:`check_module`, :func:`check_forward`) and turns the rows a
user passes into the flat rows scikit-learn validates (:func:`flat_rows`). The user's
callable or instance is never modified: the fit works on a deep copy, and the initial
weights are drawn from the fit's generator (:func:`skfbnn.nn.functional.init_params`), so
an instance's own weights are read as an architecture only.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import numpy as np
import torch
from torch import nn

from ..inference.ensemble.anchored import PREFIX as ANCHOR
from ..inference.ensemble.random_function import PREFIX as RANDOM_FUNCTION
from ..inference.mh.body import check_network
from ..likelihoods import VARIANCE_FLOOR_KEY
from ..nn.functional import ModuleForward, Params, init_rule
from ..nn.mlp import make_network
from ..priors.weight import NOISE_KEY

__all__ = ["RESERVED_NAMES", "RESERVED_PREFIXES", "network_for", "check_module",
           "check_forward", "flat_rows", "input_shape_of"]

RESERVED_NAMES = (NOISE_KEY, VARIANCE_FLOOR_KEY)
"""Entries of a fit's parameter dictionaries that are the package's own, not a network's."""
RESERVED_PREFIXES = (RANDOM_FUNCTION, ANCHOR)
"""Prefixes of the package's own entries (ifBDE's random functions, anchored ensembles)."""

def input_shape_of(est) -> tuple[int, ...] | None:
    """``input_shape`` checked: None, or a tuple of positive integers."""
    shape = est.input_shape
    if shape is None:
        return None
    shape = tuple(shape)
    if not shape or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                            and s >= 1 for s in shape):
        raise ValueError("input_shape must be None or a non-empty tuple of positive "
                         f"integers, such as (1, 40) or (1, 8, 8). Got {est.input_shape!r}.")
    return tuple(int(s) for s in shape)


def flat_rows(est, X: Any) -> Any:
    """``X`` as flat rows ``(n, prod(input_shape))`` when ``input_shape`` is set.

    An array whose trailing shape is ``input_shape`` is flattened; a two-dimensional one
    must have ``prod(input_shape)`` columns. Without ``input_shape``, ``X`` is returned as
    given (scikit-learn's validation follows either way).
    """
    shape = input_shape_of(est)
    if shape is None:
        return X
    if not hasattr(X, "ndim"):  # a list of rows
        X = np.asarray(X)
    n_values = math.prod(shape)
    if X.ndim > 2:
        if tuple(X.shape[1:]) != shape:
            raise ValueError(f"X has rows of shape {tuple(X.shape[1:])}, but input_shape is "
                             f"{shape}: give rows of shape {shape}, or flat rows of "
                             f"{n_values} values.")
        return np.asarray(X).reshape(len(X), n_values)
    if X.ndim == 2 and X.shape[1] != n_values:
        raise ValueError(f"X has rows of shape ({X.shape[1]},), but input_shape is {shape}, "
                         f"whose rows hold {n_values} values: give rows of shape {shape} or "
                         f"flat rows of {n_values} values.")
    return X


def _same(value: Any) -> Any:
    """A list as the tuple it equals (``hidden_layer_sizes=[50]`` is the default ``(50,)``)."""
    return tuple(value) if isinstance(value, list) else value


def _declared_default(est, name: str) -> Any:
    return {p.name: p.default for p in type(est)._declared_params()}[name]


def network_for(est, spec, hyper: dict, n_in: int, n_out: int) -> nn.Module:
    """The fit's network: ``make_network`` for ``network=None``, else the user's module
    (built by the callable with ``network_params``, or a deep copy of the instance),
    checked (:func:`check_module`; for the Metropolis-Hastings family an ``nn.Sequential``
    ending in ``nn.Linear``, :func:`~skfbnn.inference.mh.body.check_network`) and kept on the
    CPU (its parameters are never used)."""
    if est.network is None:
        return make_network(n_in, n_out, *est._architecture(spec))
    changed = [name for name in ("hidden_layer_sizes", "activation")
               if _same(getattr(est, name)) != _same(_declared_default(est, name))]
    if changed:
        raise ValueError(
            f"{' and '.join(changed)} set together with network: they describe the "
            "built-in MLP, which network replaces. Leave "
            f"{' and '.join(changed)} at {'their defaults' if len(changed) > 1 else 'its default'}"
            ", or give network=None.")
    params = dict(est.network_params or {})
    if n_out == 0:  # nothing to learn (every target constant): no outputs to compute
        return make_network(n_in, 0, (), "identity")
    if isinstance(est.network, nn.Module):
        if params:
            raise ValueError("network_params are the keyword arguments of a network "
                             "callable; network is a module instance, which takes none. "
                             "Give network_params=None, or a callable as network.")
        module = copy.deepcopy(est.network)
    elif callable(est.network):
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Initializing zero-element tensors", UserWarning)
            module = est.network(n_in, n_out, **params)  # its draws leave no trace
        if not isinstance(module, nn.Module):
            raise TypeError(f"network(n_features_in, n_outputs, **network_params) must return "
                            f"a torch.nn.Module. Got {type(module).__name__}.")
        module = copy.deepcopy(module)
    else:
        raise TypeError("network must be None, a callable returning a torch.nn.Module, or "
                        f"a torch.nn.Module. Got {type(est.network).__name__}.")
    check_module(module)
    if spec.family == "mh":  # the marginal-conditional split needs a linear readout
        check_network(module)
    return module.to("cpu")


def _method(est) -> str:
    return est.method if est._generic else est._method


def check_module(module: nn.Module) -> None:
    """Refuse what the inference cannot take, naming the parameter and the fix: batch
    normalisation, random layers, lazy layers, frozen parameters, names that clash with
    the package's own entries and parameters without an initialisation rule."""
    for name, sub in module.named_modules():
        where = f"network layer {name!r}" if name else "network"
        if isinstance(sub, nn.modules.batchnorm._BatchNorm):
            raise ValueError(
                f"{where} is a {type(sub).__name__}: batch normalisation couples the rows of "
                "a batch and keeps running statistics, so a draw's prediction at a row would "
                "depend on the other rows and the chains would share state. Use "
                "nn.LayerNorm or nn.GroupNorm, which normalise each row on its own.")
        if isinstance(sub, nn.modules.dropout._DropoutNd) and sub.p > 0:
            raise ValueError(
                f"{where} is a {type(sub).__name__} with p={sub.p}: random layers would draw "
                "from torch's global generator at every step, and the posterior's spread "
                "already is the network's uncertainty. Remove it or set p=0.")
        if isinstance(sub, nn.modules.lazy.LazyModuleMixin):
            raise ValueError(
                f"{where} is a lazy {type(sub).__name__}, whose parameters have no shape "
                "until it runs. Give its input size (the callable receives n_features_in).")
    names = [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]
    for name in names:
        if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES):
            raise ValueError(
                f"network parameter or buffer {name!r} clashes with the package's own "
                f"entries ({', '.join(RESERVED_NAMES)} and the prefixes "
                f"{', '.join(RESERVED_PREFIXES)}). Rename the attribute that holds it.")
    for name, p in module.named_parameters():
        if not p.requires_grad:
            raise ValueError(
                f"network parameter {name!r} has requires_grad=False: every parameter is "
                "inferred. Register a fixed tensor as a buffer (module.register_buffer).")
        init_rule(module, name, p)  # raises for a parameter without a rule


def check_forward(module: nn.Module, forward, params: Params, X: torch.Tensor, n_out: int,
                  input_shape: tuple[int, ...] | None, ard: bool) -> None:
    """Run the first parameter set on the first two rows before any sampling: the module's
    own error is chained to a ``ValueError``; the outputs must be ``(2, n_out)``; with
    ``ard`` the first layer must be an ``nn.Linear`` of the flat inputs."""
    rows = X[:2]
    first = {k: v[:1] for k, v in params.items()}
    shape = tuple(rows.shape[1:]) if input_shape is None else input_shape
    try:
        out = forward(first, rows)
    except Exception as err:
        random = "random" in str(err)
        raise ValueError(
            f"network: the module's forward failed on the first two rows of X (each of shape "
            f"{shape}), before any sampling: {type(err).__name__}: {err}"
            + (" The module draws random numbers in its forward pass, which a fit cannot "
               "reproduce from its generator: remove the random layer." if random else "")
        ) from err
    if tuple(out.shape) != (1, len(rows), n_out):
        got = tuple(out.shape[1:])
        raise ValueError(
            f"network returns outputs of shape {got} for {len(rows)} rows; this fit needs "
            f"({len(rows)}, {n_out}): one column per target, per class, or per target and "
            "its variance head (the ensembles with noise_std='learn'). Build the module "
            "with the n_outputs the callable receives.")
    if ard and isinstance(forward, ModuleForward):  # else a plain MLP: a Linear comes first
        _check_ard(module, forward, first, rows)


def _check_ard(module: nn.Module, forward, first: Params, rows: torch.Tensor) -> None:
    """``prior_std='ard'`` scales the first weight's columns, one per input feature: the
    first layer to run must be an ``nn.Linear`` of the flat rows owning that weight."""
    seen: list[tuple[str, nn.Module, torch.Tensor]] = []
    hooks = [sub.register_forward_pre_hook(
        lambda m, args, name=name: seen.append((name, m, args[0])) if not seen else None)
        for name, sub in module.named_modules() if sub._parameters]
    try:
        own = {k: v[0] for k, v in forward.own(first).items()}
        forward.single(own, rows, forward.buffers(rows.device, rows.dtype))
    finally:
        for hook in hooks:
            hook.remove()
    names = [n for n, _ in module.named_parameters()]
    ok = bool(seen) and isinstance(seen[0][1], nn.Linear) and names \
        and names[0] == (f"{seen[0][0]}.weight" if seen[0][0] else "weight") \
        and tuple(seen[0][2].shape) == tuple(rows.shape) and torch.equal(seen[0][2], rows)
    if not ok:
        raise ValueError(
            "prior_std='ard' gives each input feature its own prior scale on the columns of "
            "the first layer's weight, which needs the network's first layer to be an "
            "nn.Linear of the flat input rows (and its weight the first parameter). This "
            "network's is not. Use prior_std='learn' or a number.")
