"""Tests for skfbnn.nn.mlp.build_mlp."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from skfbnn.nn.mlp import ACTIVATIONS, Tanh, build_mlp


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
        "identity": nn.Identity, "relu": nn.ReLU, "tanh": Tanh,
        "logistic": nn.Sigmoid, "gelu": nn.GELU, "silu": nn.SiLU,
    }
    assert issubclass(Tanh, nn.Tanh)  # recognised as tanh by type (closed-form Jacobians)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_tanh_is_torch_tanh_to_round_off(dtype):
    # Two units in the last place of 1: the roundings of 2 sigmoid(2x) - 1.
    x = torch.linspace(-20, 20, 100_001, dtype=dtype)
    atol = 2 * torch.finfo(dtype).eps
    torch.testing.assert_close(Tanh()(x), torch.tanh(x), rtol=0, atol=atol)
    assert Tanh()(torch.tensor([-1e4, 1e4], dtype=dtype)).tolist() == [-1.0, 1.0]


def test_tanh_derivatives_are_tanh_derivatives():
    x = torch.linspace(-4, 4, 41, dtype=torch.float64)
    first = torch.func.vmap(torch.func.grad(Tanh()))(x)
    second = torch.func.vmap(torch.func.grad(torch.func.grad(Tanh())))(x)
    y = torch.tanh(x)
    torch.testing.assert_close(first, 1 - y**2, rtol=0, atol=1e-15)
    torch.testing.assert_close(second, -2 * y * (1 - y**2), rtol=0, atol=1e-15)
    tangent = torch.func.jvp(Tanh(), (x,), (torch.ones_like(x),))[1]
    torch.testing.assert_close(tangent, 1 - y**2, rtol=0, atol=1e-15)


def test_unknown_activation_raises():
    with pytest.raises(KeyError):
        build_mlp(2, 1, (3,), "softsign")
    # but a linear model never looks the activation up
    assert len(build_mlp(2, 1, (), "softsign")) == 1


def test_global_default_device_untouched():
    build_mlp(2, 1, (3,), "tanh")
    assert torch.empty(1).device.type == "cpu"
