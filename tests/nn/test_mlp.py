"""Tests for skfbnn.nn.mlp.build_mlp."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from skfbnn.nn.mlp import ACTIVATIONS, build_mlp


@pytest.mark.parametrize(
    "n_in, n_out, hidden",
    [(3, 1, ()), (3, 2, (8,)), (2, 4, (5, 6)), (1, 1, (3, 3, 3))],
)
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_structure(n_in, n_out, hidden, activation):
    net = build_mlp(n_in, n_out, hidden, activation)
    assert isinstance(net, nn.Sequential)
    assert len(net) == 2 * len(hidden) + 1
    widths = [n_in, *hidden, n_out]
    linears = list(net)[0::2]
    acts = list(net)[1::2]
    for layer, w_in, w_out in zip(linears, widths[:-1], widths[1:], strict=False):
        assert type(layer) is nn.Linear
        assert (layer.in_features, layer.out_features) == (w_in, w_out)
        assert layer.bias is not None
    assert all(type(a) is ACTIVATIONS[activation] for a in acts)
    # no activation after the output layer
    assert type(net[-1]) is nn.Linear
    # architecture only: parameters live on the meta device
    assert all(p.device.type == "meta" for p in net.parameters())
    n_params = sum(w_in * w_out + w_out for w_in, w_out in itertools.pairwise(widths))
    assert sum(p.numel() for p in net.parameters()) == n_params


def test_no_hidden_layers_is_a_single_linear_map():
    net = build_mlp(5, 3, (), "relu")
    assert len(net) == 1 and type(net[0]) is nn.Linear
    assert [name for name, _ in net.named_parameters()] == ["0.weight", "0.bias"]


def test_activation_classes():
    assert ACTIVATIONS == {
        "identity": nn.Identity, "relu": nn.ReLU, "tanh": nn.Tanh,
        "logistic": nn.Sigmoid, "gelu": nn.GELU, "silu": nn.SiLU,
    }


def test_unknown_activation_raises():
    with pytest.raises(KeyError):
        build_mlp(2, 1, (3,), "softsign")
    # but a linear model never looks the activation up
    assert len(build_mlp(2, 1, (), "softsign")) == 1


def test_global_default_device_untouched():
    build_mlp(2, 1, (3,), "tanh")
    assert torch.empty(1).device.type == "cpu"
