"""The built-in MLP's batched path: ``torch.baddbmm`` over the parameter sets.

A ``Sequential`` of ``Linear`` layers and element-wise activations is evaluated without
``torch.func.vmap``: each layer is one batched product ``W h + b`` over the sets, features kept
by rows, and a tanh layer, on large enough layers, one fused node of :mod:`.fused`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from .fused import linear_tanh, tanh_readout
from .mlp import ELEMENTWISE

__all__ = ["FUSE_MIN_ELEMENTS", "batched_mlp_forward", "is_plain_mlp"]


def is_plain_mlp(module: nn.Module) -> bool:
    """A ``Sequential`` (with ``Sequential``'s own forward) of ``Linear`` layers and
    element-wise activations only, matched by exact type (:data:`~skfbnn.nn.mlp.ELEMENTWISE`).

    Examples
    --------
    >>> is_plain_mlp(nn.Sequential(nn.Linear(2, 3), nn.GELU(), nn.Linear(3, 1)))
    True
    >>> class Doubled(nn.Sequential):
    ...     def forward(self, x):
    ...         return 2 * super().forward(x)
    >>> is_plain_mlp(Doubled(nn.Linear(2, 1)))
    False
    """
    return isinstance(module, nn.Sequential) \
        and type(module).forward is nn.Sequential.forward and all(
            type(layer) is nn.Linear or type(layer) in ELEMENTWISE for layer in module)


FUSE_MIN_ELEMENTS = 32768
"""Smallest layer output (parameter sets x units x rows) evaluated by the fused nodes
(:func:`.fused.linear_tanh`, and :func:`.fused.tanh_readout` for a tanh layer with a linear
layer after it). A node saves arithmetic but costs about 20 us of Python per step: a whole
one-chain SGLD step on 256 rows (12 800 elements) took 0.640 ms with both nodes and 0.629
without, one with eight chains (102 400) 0.884 and 0.934;
in isolation (forward and backward of the 13-50-1 network) their gain grows from 12 us at
12 800 elements to 50 us at 51 200."""


def batched_mlp_forward(module: nn.Sequential) -> Callable[[dict[str, Tensor], Tensor], Tensor]:
    """``forward(params, X) -> (B, n, n_out)`` of a plain MLP (:func:`is_plain_mlp`) by batched
    matrix products over the ``B`` parameter sets (:func:`skfbnn.nn.functional.make_forward`
    chooses it), with the fused tanh nodes on large enough layers."""
    # [weight name, bias name, the tanh that follows it or None]; a Linear followed by a
    # tanh is one fused node on large enough layers (FUSE_MIN_ELEMENTS), together with the
    # Linear after it when no activation follows that one (the readout).
    plan: list = []
    for i, layer in enumerate(module):
        if isinstance(layer, nn.Linear):
            plan.append([f"{i}.weight", f"{i}.bias", None])
        elif isinstance(layer, nn.Tanh) and plan and isinstance(plan[-1], list) \
                and plan[-1][2] is None:
            plan[-1][2] = layer
        else:
            plan.append(layer)

    def forward(params: dict[str, Tensor], X: Tensor) -> Tensor:
        # Features by rows, (B, width, n): each layer is W h + b, and the
        # products have the wide row dimension as their columns, which runs
        # faster than (B, n, width) x (B, width, width') on small networks,
        # most of all the readout (a batched matrix-vector product otherwise).
        n_sets = next(iter(params.values())).shape[0]
        h = X.mT.expand(n_sets, *X.mT.shape) if X.dim() == 2 else X.mT
        i = 0
        while i < len(plan):
            step = plan[i]
            i += 1
            if not isinstance(step, list):
                h = step(h)
                continue
            w, b = params[step[0]], params[step[1]]
            if step[2] is not None and n_sets * w.shape[1] * h.shape[-1] >= FUSE_MIN_ELEMENTS:
                after = plan[i] if i < len(plan) else None
                if isinstance(after, list) and after[2] is None:  # a linear layer next
                    h = tanh_readout(b, w, h, params[after[1]], params[after[0]])
                    i += 1
                else:
                    h = linear_tanh(b, w, h)
            else:
                h = torch.baddbmm(b.unsqueeze(2), w, h)
                h = h if step[2] is None else step[2](h)
        return h.mT

    return forward
