"""The NTK parameterisation of any ``nn.Sequential`` that ends in ``nn.Linear``.

The marginal-conditional split of the samplers needs the network to be features
followed by a linear readout, ``f = Psi @ theta``: the *body* is every layer but the
last (convolutions, normalisations, any activations, ``nn.Flatten``...), the readout
is the final ``nn.Linear``. Every body parameter with a fan-in rule is one block of
the flat vector of standard-normal entries that the chains move, scaled as in
:mod:`.ntk`:

* a weight (a parameter of two or more dimensions) by ``sigma_w / sqrt(fan_in)``, with
  ``fan_in`` from PyTorch's own rule (:func:`torch.nn.init._calculate_fan_in_and_fan_out`:
  ``in_features`` of a ``Linear``, ``in_channels / groups`` times the kernel size of a
  convolution);
* the ``bias`` of a module whose ``weight`` has such a rule by ``sigma_b``, whatever the
  fan-in, as the hidden biases of the MLP are.

A parameter with no rule (the one-dimensional affine ``weight`` and ``bias`` of
``nn.LayerNorm`` and ``nn.GroupNorm``, a ``PReLU`` slope) is **held fixed** at its
value in the network (its module's initial value when the network lives on the
``meta`` device), as buffers are. Why not sample it: a standard-normal prior would
centre a normalisation's gain on zero, flipping and silencing units at random, and
any other prior would be a choice the NTK parameterisation does not make; before a
linear layer the affine part is absorbed by that layer's weights anyway. Its draws
carry the fixed value, so predictions use it.

The features are the body's outputs, the chains folded into the channel groups of its
convolutions and normalisations (:mod:`skfbnn.nn.sequential`) where its layers allow, else
through :func:`torch.func.functional_call` vectorised over chains with
:func:`torch.func.vmap`; a plain MLP keeps the faster batched path of
:class:`~.ntk.NTKLayout` (:func:`ntk_layout` picks it).
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap
from torch.nn.init import _calculate_fan_in_and_fan_out

from ...nn.functional import Params
from ...nn.mlp import ELEMENTWISE
from ...nn.sequential import plan_sequential, run_plan
from .ntk import NTKLayout

__all__ = ["BodyLayout", "check_network", "ntk_layout", "is_fast_mlp"]

READOUT_MESSAGE = ("The Metropolis-Hastings samplers need a linear readout: end the network "
                   "with nn.Linear (an nn.Sequential whose last layer is nn.Linear, after "
                   "nn.Flatten for convolutional features).")


def check_network(network: nn.Module) -> None:
    """Refuse, with a ``ValueError`` naming the fix, what the samplers cannot take.

    The network must be an ``nn.Sequential`` (with ``Sequential``'s own forward) whose
    last layer is an ``nn.Linear``; it may not hold batch normalisation, which couples
    the rows (and the chains, through its batch statistics), nor dropout, which makes the
    potential random and the accept/reject step invalid.

    Examples
    --------
    >>> check_network(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)))
    >>> check_network(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    Traceback (most recent call last):
    ...
    ValueError: The Metropolis-Hastings samplers need a linear readout: ...
    """
    if (not isinstance(network, nn.Sequential) or len(network) == 0
            or type(network[-1]).forward is not nn.Linear.forward):
        got = type(network).__name__ if not isinstance(network, nn.Sequential) or not len(
            network) else f"a Sequential ending in {type(network[-1]).__name__}"
        raise ValueError(f"{READOUT_MESSAGE} Got {got}.")
    if type(network).forward is not nn.Sequential.forward:
        raise ValueError(f"{READOUT_MESSAGE} Got {type(network).__name__}, a Sequential with "
                         "its own forward: the samplers split it layer by layer, so build "
                         "the network as a plain nn.Sequential.")
    for name, module in network.named_modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            raise ValueError(
                f"The Metropolis-Hastings samplers cannot take {type(module).__name__} "
                f"(layer {name!r}): batch normalisation couples the rows and, through its "
                "batch statistics, the chains. Use nn.LayerNorm or nn.GroupNorm instead.")
        if isinstance(module, nn.modules.dropout._DropoutNd):
            raise ValueError(
                f"The Metropolis-Hastings samplers cannot take {type(module).__name__} "
                f"(layer {name!r}): a random layer makes the potential random and the "
                "accept/reject step invalid. Remove it (the posterior over the weights is "
                "the model's uncertainty).")


def is_fast_mlp(network: nn.Module) -> bool:
    """Whether ``network`` is ``Linear``, activation, ..., ``Linear`` with biases, one
    element-wise activation throughout and no layer used twice: the layout of
    :class:`~.ntk.NTKLayout`.

    Examples
    --------
    >>> is_fast_mlp(nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Linear(8, 1)))
    True
    >>> is_fast_mlp(nn.Sequential(nn.Linear(3, 8), nn.LayerNorm(8), nn.Linear(8, 1)))
    False
    """
    if type(network) is not nn.Sequential or len(network) % 2 == 0:
        return False
    linear, acts = list(network)[::2], list(network)[1::2]
    if any(type(m) is not nn.Linear or m.bias is None for m in linear) or len(
            {id(m) for m in linear}) < len(linear):  # a layer used twice: one set of weights
        return False
    return all(type(a) in ELEMENTWISE and type(a) is type(acts[0])
               and a.extra_repr() == acts[0].extra_repr() for a in acts)


def ntk_layout(network: nn.Module, sigma_w: float = math.sqrt(2.0), sigma_b: float = 0.1,
               sigma_w_out: float = 1.0, sigma_b_out: float = 0.1, *,
               generic: bool | None = None, input_shape: Sequence[int] | None = None):
    """The NTK layout of ``network``: :class:`~.ntk.NTKLayout` for a plain MLP
    (:func:`is_fast_mlp`), else :class:`BodyLayout`.

    Parameters
    ----------
    network : nn.Sequential
        Ending in ``nn.Linear`` (:func:`check_network`).
    sigma_w, sigma_b, sigma_w_out, sigma_b_out : float
        Scales of the body's weights and biases and of the readout's.
    generic : bool or None
        True: the generic path even for an MLP (tests); None: the MLP's when it applies.
    input_shape : sequence of int or None
        Shape each row of ``X`` is given to the body in (generic path only); None: rows
        as they come.

    Examples
    --------
    >>> from skfbnn.nn.mlp import build_mlp
    >>> type(ntk_layout(build_mlp(3, 1, (8,), "relu"))).__name__
    'NTKLayout'
    >>> type(ntk_layout(build_mlp(3, 1, (8,), "relu"), generic=True)).__name__
    'BodyLayout'
    """
    check_network(network)
    if not generic and input_shape is None and is_fast_mlp(network):
        return NTKLayout.from_network(network, sigma_w, sigma_b, sigma_w_out, sigma_b_out)
    return BodyLayout(network, sigma_w, sigma_b, sigma_w_out, sigma_b_out,
                      input_shape=input_shape)


def _owner(module: nn.Module, name: str) -> tuple[nn.Module, str]:
    prefix, _, leaf = name.rpartition(".")
    return module.get_submodule(prefix) if prefix else module, leaf


def _scale(module: nn.Module, name: str, p: Tensor, sigma_w: float, sigma_b: float
           ) -> float | None:
    """The NTK scale of parameter ``name`` of ``module``, None where no rule applies."""
    if p.dim() >= 2:
        fan_in, _ = _calculate_fan_in_and_fan_out(p)
        return sigma_w / math.sqrt(fan_in) if fan_in else None
    owner, leaf = _owner(module, name)
    weight = getattr(owner, "weight", None)
    if leaf == "bias" and isinstance(weight, Tensor) and weight.dim() >= 2:
        return sigma_b
    return None


def _fixed_value(module: nn.Module, name: str, value: Tensor, kind: str) -> Tensor:
    """The value a fixed parameter or buffer keeps: its own, or its module's initial value
    for a module on the ``meta`` device."""
    if not value.is_meta:
        return value.detach().clone()
    owner, leaf = _owner(module, name)
    if kind == "parameter" and hasattr(owner, "reset_parameters"):
        fresh = copy.deepcopy(owner).to_empty(device="cpu")
        fresh.reset_parameters()
        return getattr(fresh, leaf).detach().clone()
    raise ValueError(
        f"The Metropolis-Hastings samplers hold the {kind} {name!r} of the network fixed (it "
        "has no fan-in rule), but it has no values (meta device) and its module no "
        "reset_parameters(). Give the network with real tensors.")


class BodyLayout:
    """The NTK layout of an ``nn.Sequential`` ending in ``nn.Linear`` (module docstring).

    Same interface as :class:`~.ntk.NTKLayout`: hidden entries are one flat vector per
    chain (the body's scaled parameters in ``named_parameters`` order, each flattened),
    the readout a ``(p, k)`` matrix ``theta`` on features
    ``Psi = [sigma_w_out / sqrt(h) * body(x), sigma_b_out]`` (``p = h + 1``; no bias
    column when the readout has no bias).

    Parameters
    ----------
    network : nn.Sequential
        Ending in ``nn.Linear`` (:func:`check_network`); may live on the ``meta`` device.
    sigma_w, sigma_b, sigma_w_out, sigma_b_out : float
        See :func:`ntk_layout`.
    input_shape : sequence of int or None
        Shape of one row as the body takes it (None: as it comes).

    Attributes
    ----------
    blocks : tuple of (str, tuple of int, float)
        ``(name, shape, scale)`` of every sampled body parameter.
    fixed : dict of str to Tensor
        Body parameters with no fan-in rule, at their fixed values.
    buffers : dict of str to Tensor
        The body's buffers.

    Examples
    --------
    >>> import torch
    >>> net = nn.Sequential(nn.Unflatten(1, (1, 6)), nn.Conv1d(1, 2, 3), nn.GELU(),
    ...                     nn.Flatten(), nn.Linear(8, 1))
    >>> layout = BodyLayout(net)
    >>> [(name, shape) for name, shape, _ in layout.blocks]
    [('1.weight', (2, 1, 3)), ('1.bias', (2,))]
    >>> layout.n_hidden, layout.n_features
    (8, 9)
    >>> g = torch.Generator().manual_seed(0)
    >>> psi = layout.features(torch.randn(4, 8, generator=g), torch.zeros(5, 6))
    >>> tuple(psi.shape)
    (4, 5, 9)
    """

    def __init__(self, network: nn.Sequential, sigma_w: float = math.sqrt(2.0),
                 sigma_b: float = 0.1, sigma_w_out: float = 1.0, sigma_b_out: float = 0.1,
                 *, input_shape: Sequence[int] | None = None) -> None:
        check_network(network)
        self.sigma_w, self.sigma_b = float(sigma_w), float(sigma_b)
        self.sigma_w_out, self.sigma_b_out = float(sigma_w_out), float(sigma_b_out)
        self.input_shape = None if input_shape is None else tuple(int(s) for s in input_shape)
        children = list(network._modules.items())  # a layer used twice counts twice
        self.body = nn.Sequential(OrderedDict(children[:-1]))
        self.prefix, readout = children[-1]
        self.width, _ = _calculate_fan_in_and_fan_out(readout.weight)
        self.bias = readout.bias is not None
        self._n_outputs = readout.weight.shape[0]
        blocks, self.fixed = [], {}
        for name, p in self.body.named_parameters():
            scale = _scale(self.body, name, p, self.sigma_w, self.sigma_b)
            if scale is None:
                self.fixed[name] = _fixed_value(self.body, name, p, "parameter")
            else:
                blocks.append((name, tuple(p.shape), scale))
        self.blocks = tuple(blocks)
        self.buffers = {name: _fixed_value(self.body, name, b, "buffer")
                        for name, b in self.body.named_buffers()}
        self._plan = plan_sequential(self.body)  # None: vmap over functional_call

    @property
    def n_hidden(self) -> int:
        """Number of sampled body entries."""
        return sum(math.prod(shape) for _, shape, _ in self.blocks)

    @property
    def n_features(self) -> int:
        """Readout input dimension ``p`` (``h + 1`` with a readout bias)."""
        return self.width + int(self.bias)

    @property
    def n_outputs(self) -> int:
        """Network outputs ``k``."""
        return self._n_outputs

    def _unpack(self, hidden: Tensor) -> Params:
        """The body's scaled parameters ``(C, *shape)`` of hidden entries ``(C, D_h)``."""
        params, off, C = {}, 0, hidden.shape[0]
        for name, shape, scale in self.blocks:
            size = math.prod(shape)
            params[name] = scale * hidden[:, off: off + size].reshape(C, *shape)
            off += size
        return params

    def _fixed(self, like: Tensor) -> Params:
        """Fixed parameters and buffers on the device of ``like``, floating ones in its
        dtype."""
        return {name: v.to(device=like.device, dtype=like.dtype) if v.is_floating_point()
                else v.to(like.device) for name, v in {**self.fixed, **self.buffers}.items()}

    def body_outputs(self, hidden: Tensor, X: Tensor) -> Tensor:
        """The body's outputs ``(C, n, h)`` at ``X`` ``(n, d)``, in the dtype of
        ``hidden``."""
        C = hidden.shape[0]
        x = X.to(hidden.dtype)
        fixed = self._fixed(hidden)
        params = self._unpack(hidden)
        if params and self._plan is not None:  # the chains folded into the channel groups
            every = {**params, **{k: v.expand(C, *v.shape) for k, v in fixed.items()}}
            h = run_plan(self._plan, every, x, C, self.input_shape)
        else:
            x = x if self.input_shape is None else x.reshape(len(x), *self.input_shape)
            if params:
                def one(p: Params, rows: Tensor) -> Tensor:
                    return functional_call(self.body, {**p, **fixed}, (rows,))

                h = vmap(one, in_dims=(0, None))(params, x)
            else:  # fixed features: one forward shared by every chain
                out = functional_call(self.body, fixed, (x,))
                h = out.expand(C, *out.shape)
        if h.dim() != 3 or h.shape[-1] != self.width:
            raise ValueError(
                f"The body of the network (every layer but the readout) gives outputs of "
                f"shape {tuple(h.shape[2:]) if h.dim() > 2 else ()} per row, but the readout "
                f"nn.Linear takes {self.width} features: end the body with nn.Flatten() and "
                "give the readout in_features equal to the flattened width.")
        return h

    def features(self, hidden: Tensor, X: Tensor) -> Tensor:
        """Readout features ``Psi`` ``(C, n, p)`` of hidden entries ``(C, D_h)`` at ``X``."""
        h = (self.sigma_w_out / math.sqrt(self.width)) * self.body_outputs(hidden, X)
        if not self.bias:
            return h
        ones = torch.full((*h.shape[:2], 1), self.sigma_b_out, dtype=h.dtype, device=h.device)
        return torch.cat([h, ones], dim=-1)

    def from_standard(self, params: Params) -> tuple[Tensor, Tensor]:
        """Inverse of :meth:`to_standard`: hidden entries ``(C, D_h)`` and ``theta``
        (fixed parameters are not part of the state)."""
        w = params[f"{self.prefix}.weight"]
        parts = [params[name].flatten(1) / scale for name, _, scale in self.blocks]
        theta = w.transpose(1, 2) * (math.sqrt(self.width) / self.sigma_w_out)
        if self.bias:
            bias = params[f"{self.prefix}.bias"] / self.sigma_b_out
            theta = torch.cat([theta, bias.unsqueeze(1)], 1)
        hidden = torch.cat(parts, 1) if parts else theta.new_zeros((theta.shape[0], 0))
        return hidden, theta

    def to_standard(self, hidden: Tensor, theta: Tensor) -> Params:
        """Every parameter of the network, ``(C, *shape)``, of hidden entries ``(C, D_h)``
        and readout ``theta`` ``(C, p, k)`` (fixed parameters repeated per chain)."""
        C = hidden.shape[0]
        params = self._unpack(hidden)
        for name, value in self.fixed.items():
            params[name] = value.to(hidden).expand(C, *value.shape).clone()
        h = self.width
        params[f"{self.prefix}.weight"] = (self.sigma_w_out / math.sqrt(h)
                                           * theta[:, :h, :].transpose(1, 2))
        if self.bias:
            params[f"{self.prefix}.bias"] = self.sigma_b_out * theta[:, h, :]
        return params
