"""Small networks to pass as ``network=``: documented examples of the seam.

Each class is a callable ``(n_features_in, n_outputs, **params)`` returning a
:class:`torch.nn.Module`, as ``network=`` expects, so ``network_params`` holds its keyword
arguments. They normalise with ``GroupNorm`` (per row, never across rows or chains) and
draw nothing at random in their forward pass. Each reshapes flat rows itself, so
``input_shape`` is optional with them (give it anyway to accept unflattened arrays).

Examples
--------
>>> import numpy as np
>>> from skfbnn import SGHMCClassifier
>>> from skfbnn.nn.zoo import CNN2d
>>> from sklearn.datasets import load_digits
>>> X, y = load_digits(return_X_y=True)
>>> clf = SGHMCClassifier(network=CNN2d, network_params={"channels": 4},
...                       input_shape=(1, 8, 8), n_chains=2, n_burnin=20, n_samples=2,
...                       thinning=1, min_epochs=0, random_state=0)
>>> clf.fit(X[:100] / 16, y[:100]).predict_proba(X[:2] / 16).shape
(2, 10)
"""

from __future__ import annotations

import math
from collections import OrderedDict

import torch
from torch import nn

from .mlp import ACTIVATIONS

__all__ = ["CNN1d", "CNN2d", "ResidualMLP", "RowShape"]


def _groups(channels: int) -> int:
    """GroupNorm groups: 4 where they divide the channels, else 1 (LayerNorm-like)."""
    return 4 if channels % 4 == 0 else 1


class RowShape(nn.Module):
    """Reshape each row to ``shape``: flat rows ``(n, prod(shape))`` or rows already in
    that shape become ``(n, *shape)``. Parameter-free, so a network that starts with it
    stays a plain ``nn.Sequential`` (what the Metropolis-Hastings samplers split).

    Examples
    --------
    >>> RowShape(1, 4)(torch.zeros(3, 4)).shape
    torch.Size([3, 1, 4])
    """

    def __init__(self, *shape: int) -> None:
        super().__init__()
        self.shape = tuple(int(s) for s in shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], *self.shape)

    def extra_repr(self) -> str:
        return f"shape={self.shape}"


class CNN1d(nn.Sequential):
    """A small 1-D convolutional network for signals such as MNIST-1D (rows ``(1, 40)``).

    ``n_blocks`` blocks of ``Conv1d(kernel_size, stride 2) -> GroupNorm -> activation``,
    flattened into a linear readout (the layout of the small CNN of the MNIST-1D paper,
    with GroupNorm). A plain ``nn.Sequential`` ending in ``nn.Linear`` (named layers
    ``rows``, ``conv0``, ``norm0``, ``act0``, ..., ``flatten``, ``readout``), so every
    family takes it, the Metropolis-Hastings samplers included.

    Parameters
    ----------
    n_features_in : int
        Values per row: ``in_channels * length``.
    n_outputs : int
        Outputs (classes, targets).
    in_channels : int, default=1
        Channels of the signal; each row is read as ``(in_channels, length)``.
    channels : int, default=16
        Channels of every convolution.
    kernel_size : int, default=5
    n_blocks : int, default=3
    activation : str, default="gelu"
        One of :data:`skfbnn.nn.mlp.ACTIVATIONS`.

    Examples
    --------
    >>> net = CNN1d(40, 10)
    >>> net(torch.zeros(3, 1, 40)).shape, net(torch.zeros(3, 40)).shape
    (torch.Size([3, 10]), torch.Size([3, 10]))
    """

    def __init__(self, n_features_in: int, n_outputs: int, *, in_channels: int = 1,
                 channels: int = 16, kernel_size: int = 5, n_blocks: int = 3,
                 activation: str = "gelu") -> None:
        if n_features_in % in_channels:
            raise ValueError(f"CNN1d: {n_features_in} values per row do not split into "
                             f"in_channels={in_channels} channels.")
        length = n_features_in // in_channels
        layers: dict[str, nn.Module] = {"rows": RowShape(in_channels, length)}
        c_in = in_channels
        for i in range(n_blocks):
            layers[f"conv{i}"] = nn.Conv1d(c_in, channels, kernel_size, stride=2,
                                           padding=kernel_size // 2)
            layers[f"norm{i}"] = nn.GroupNorm(_groups(channels), channels)
            layers[f"act{i}"] = ACTIVATIONS[activation]()
            length = (length + 2 * (kernel_size // 2) - kernel_size) // 2 + 1
            c_in = channels
        layers["flatten"] = nn.Flatten()
        layers["readout"] = nn.Linear(channels * length, n_outputs)
        super().__init__(OrderedDict(layers))


class CNN2d(nn.Sequential):
    """A small 2-D convolutional network for square images such as digits (``(1, 8, 8)``).

    ``n_blocks`` blocks of ``Conv2d(3x3, padding 1) -> GroupNorm -> activation``, the
    second and later with stride 2, flattened into a linear readout. A plain
    ``nn.Sequential`` ending in ``nn.Linear``, as :class:`CNN1d`.

    Parameters
    ----------
    n_features_in : int
        Values per row: ``in_channels * side * side``.
    n_outputs : int
    in_channels : int, default=1
    channels : int, default=16
    n_blocks : int, default=2
    activation : str, default="gelu"

    Examples
    --------
    >>> CNN2d(64, 10)(torch.zeros(3, 1, 8, 8)).shape
    torch.Size([3, 10])
    """

    def __init__(self, n_features_in: int, n_outputs: int, *, in_channels: int = 1,
                 channels: int = 16, n_blocks: int = 2, activation: str = "gelu") -> None:
        side = math.isqrt(n_features_in // in_channels)
        if in_channels * side * side != n_features_in:
            raise ValueError(f"CNN2d takes square images: {n_features_in} values per row are "
                             f"not in_channels={in_channels} times a square.")
        layers: dict[str, nn.Module] = {"rows": RowShape(in_channels, side, side)}
        c_in = in_channels
        for i in range(n_blocks):
            stride = 1 if i == 0 else 2
            layers[f"conv{i}"] = nn.Conv2d(c_in, channels, 3, stride=stride, padding=1)
            layers[f"norm{i}"] = nn.GroupNorm(_groups(channels), channels)
            layers[f"act{i}"] = ACTIVATIONS[activation]()
            side = (side + 2 - 3) // stride + 1
            c_in = channels
        layers["flatten"] = nn.Flatten()
        layers["readout"] = nn.Linear(channels * side * side, n_outputs)
        super().__init__(OrderedDict(layers))


class ResidualMLP(nn.Module):
    """An MLP with residual blocks: ``h + Linear(act(LayerNorm(h)))``.

    Parameters
    ----------
    n_features_in, n_outputs : int
    width : int, default=32
    n_blocks : int, default=2
    activation : str, default="gelu"

    Examples
    --------
    >>> ResidualMLP(5, 2, width=8)(torch.zeros(4, 5)).shape
    torch.Size([4, 2])
    """

    def __init__(self, n_features_in: int, n_outputs: int, *, width: int = 32,
                 n_blocks: int = 2, activation: str = "gelu") -> None:
        super().__init__()
        self.embed = nn.Linear(n_features_in, width)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(width), ACTIVATIONS[activation](), nn.Linear(width, width))
            for _ in range(n_blocks))
        self.readout = nn.Linear(width, n_outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for block in self.blocks:
            h = h + block(h)
        return self.readout(h)
