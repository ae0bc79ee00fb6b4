"""Multi-layer perceptron architecture (structure only; parameters live elsewhere)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["ACTIVATIONS", "build_mlp"]

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "identity": nn.Identity,
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "logistic": nn.Sigmoid,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
}


def build_mlp(
    n_in: int,
    n_out: int,
    hidden_layer_sizes: Sequence[int],
    activation: str,
) -> nn.Sequential:
    """Build ``Linear -> act -> ... -> Linear`` on the meta device.

    The module only describes the architecture: its parameters are created on
    the ``meta`` device and never used; the samplers pass their own parameter
    dictionaries to :func:`skfbnn.nn.functional.make_forward`.

    Parameters
    ----------
    n_in, n_out : int
        Input and output dimensions.
    hidden_layer_sizes : sequence of int
        Widths of the hidden layers; ``()`` gives a linear model.
    activation : str
        One of :data:`ACTIVATIONS`.

    Returns
    -------
    torch.nn.Sequential

    Examples
    --------
    >>> build_mlp(3, 1, (8,), "tanh")
    Sequential(
      (0): Linear(in_features=3, out_features=8, bias=True)
      (1): Tanh()
      (2): Linear(in_features=8, out_features=1, bias=True)
    )
    """
    widths = [n_in, *hidden_layer_sizes, n_out]
    layers: list[nn.Module] = []
    with torch.device("meta"):
        for i, (w_in, w_out) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
            layers.append(nn.Linear(w_in, w_out))
            if i < len(widths) - 2:
                layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)
