"""A batched forward for ``nn.Sequential`` convolutional networks: the parameter sets are
folded into the convolutions' and normalisations' channel groups.

``torch.func.vmap`` over ``functional_call`` (:class:`~skfbnn.nn.functional.ModuleForward`)
runs any module, but a convolution under ``vmap`` becomes a grouped convolution in a layout of
its own, with copies between layers, and a shared input is copied once per parameter set. A
``Sequential`` of the layers below is evaluated here in one layout, rows first and the sets'
channels side by side, ``(n, B * C, *spatial)``:

* ``Conv1d``/``Conv2d``/``Conv3d`` (zero padding): one convolution with ``groups * B``
  groups and the sets' kernels stacked; on rows shared by the sets (the first layer, as a
  fit calls it) one ungrouped convolution with ``B * out_channels`` outputs;
* ``GroupNorm``: one ``group_norm`` with ``num_groups * B`` groups and the sets' affine
  parameters stacked (its statistics are per row and group, so per set as well);
* ``Linear``: a batched matrix product (``baddbmm``), or one product on shared rows;
* ``Flatten`` (from the first dimension), :class:`~skfbnn.nn.zoo.RowShape` and element-wise
  activations (not in place).

The numbers are those of ``vmap`` up to the order of floating-point sums
(``tests/nn/test_sequential.py``). Anything else (other layers, a module with its own
``forward``, buffers, a layer used twice) is not planned here and stays with ``vmap``.

Examples
--------
>>> from skfbnn.nn.zoo import CNN1d
>>> plan_sequential(CNN1d(40, 10)) is not None
True
>>> plan_sequential(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))) is None
True
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .mlp import ELEMENTWISE
from .zoo import RowShape

__all__ = ["plan_sequential", "run_plan"]

_CONV = {nn.Conv1d: F.conv1d, nn.Conv2d: F.conv2d, nn.Conv3d: F.conv3d}

Plan = list[tuple[str, nn.Module]]


def plan_sequential(module: nn.Module) -> Plan | None:
    """``(name, layer)`` for every layer of ``module`` when this module's batched forward
    can run it, else None (exact layer types: a subclass may do anything in its forward)."""
    if not isinstance(module, nn.Sequential) or type(module).forward is not nn.Sequential.forward:
        return None
    layers = list(module._modules.items())  # a layer used twice appears twice
    if len({id(layer) for _, layer in layers}) < len(layers) or next(module.buffers(), None) \
            is not None or len(layers) == 0:
        return None
    return layers if all(_supported(layer) for _, layer in layers) else None


def _supported(layer: nn.Module) -> bool:
    kind = type(layer)
    if kind in _CONV:
        return layer.padding_mode == "zeros"
    if kind in ELEMENTWISE:
        return not getattr(layer, "inplace", False)
    if kind is nn.Flatten:
        return layer.start_dim == 1 and layer.end_dim == -1
    return kind in (nn.GroupNorm, nn.Linear, RowShape)


def run_plan(plan: Plan, params: dict[str, Tensor], X: Tensor, n_sets: int,
             input_shape: tuple[int, ...] | None) -> Tensor:
    """Outputs ``(B, n, n_out)`` of ``n_sets`` parameter sets at flat rows ``X``: ``(n, d)``
    shared by the sets or ``(B, n, d)`` one slice per set (``params`` holds the module's
    parameters by name, each with a leading dimension of ``n_sets``)."""
    n = X.shape[-2]
    if X.dim() == 2:  # shared: (n, *row), no set dimension yet
        h, shared = X if input_shape is None else X.reshape(n, *input_shape), True
    else:  # the sets' own rows: (n, B, *row)
        h = X.transpose(0, 1)
        h, shared = h if input_shape is None else h.reshape(n, n_sets, *input_shape), False
    for name, layer in plan:
        kind = type(layer)
        if kind in _CONV:
            h, shared = _conv(layer, params, f"{name}.", h, shared, n_sets), False
        elif kind is nn.GroupNorm:
            h = _per_set(h, shared, n_sets)
            shared = False
            flat = h.reshape(n, -1, *h.shape[3:])
            out = F.group_norm(flat, layer.num_groups * n_sets,
                               *_stacked(layer, params, f"{name}."), layer.eps)
            h = out.view(h.shape)
        elif kind is nn.Linear:
            h, shared = _linear(params, f"{name}.", h, shared, n_sets), False
        elif kind is nn.Flatten:
            h = h.reshape(n, -1) if shared else h.reshape(n, n_sets, -1)
        elif kind is RowShape:
            h = h.reshape(n, *layer.shape) if shared else h.reshape(n, n_sets, *layer.shape)
        else:
            h = layer(h)
    return _per_set(h, shared, n_sets).transpose(0, 1)


def _per_set(h: Tensor, shared: bool, n_sets: int) -> Tensor:
    """``(n, *f)`` shared rows as ``(n, B, *f)``; the sets' own rows as they are."""
    return h.unsqueeze(1).expand(h.shape[0], n_sets, *h.shape[1:]) if shared else h


def _stacked(layer: nn.Module, params: dict[str, Tensor], prefix: str
             ) -> tuple[Tensor | None, Tensor | None]:
    """The layer's weight and bias over the sets, flattened to ``(B * C,)``-led stacks
    (None where the layer has none)."""
    out = []
    for leaf in ("weight", "bias"):
        p = params.get(prefix + leaf) if getattr(layer, leaf, None) is not None else None
        out.append(None if p is None else p.reshape(-1, *p.shape[2:]))
    return out[0], out[1]


def _conv(layer: nn.Module, params: dict[str, Tensor], prefix: str, h: Tensor,
          shared: bool, n_sets: int) -> Tensor:
    n, weight, bias = h.shape[0], *_stacked(layer, params, prefix)
    args = (layer.stride, layer.padding, layer.dilation)
    if shared and layer.groups == 1:  # one convolution of the shared rows, B * out channels
        out = _CONV[type(layer)](h, weight, bias, *args, 1)
    else:
        h = _per_set(h, shared, n_sets)
        out = _CONV[type(layer)](h.reshape(n, -1, *h.shape[3:]), weight, bias, *args,
                                 layer.groups * n_sets)
    return out.view(n, n_sets, layer.out_channels, *out.shape[2:])


def _linear(params: dict[str, Tensor], prefix: str, h: Tensor, shared: bool,
            n_sets: int) -> Tensor:
    w, b = params[prefix + "weight"], params.get(prefix + "bias")
    n, n_out = h.shape[0], w.shape[1]
    if shared and h.dim() == 2:  # one product for every set: (n, B * out)
        w = w.reshape(-1, w.shape[2]).T
        flat = h @ w if b is None else torch.addmm(b.reshape(-1), h, w)
        return flat.view(n, n_sets, n_out)
    h = _per_set(h, shared, n_sets)
    rows = h.movedim(1, 0).reshape(n_sets, -1, h.shape[-1])  # (B, n * ..., in)
    out = rows @ w.mT if b is None else torch.baddbmm(b.unsqueeze(1), rows, w.mT)
    return out.view(n_sets, n, *h.shape[2:-1], n_out).movedim(0, 1)
