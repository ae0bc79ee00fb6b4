"""NTK parameterisation: features, conversion to ordinary Linear parameters."""

from __future__ import annotations

import math

import torch

from skfbnn.inference.mh.ntk import NTKLayout
from skfbnn.nn.functional import make_forward
from skfbnn.nn.mlp import build_mlp

F64 = torch.float64


def test_standard_parameters_give_the_ntk_network():
    net = build_mlp(3, 2, (6, 5), "tanh")
    layout = NTKLayout.from_network(net, sigma_w=1.3, sigma_b=0.2, sigma_w_out=0.7,
                                    sigma_b_out=0.4)
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(4, layout.n_hidden, generator=g, dtype=F64)
    theta = torch.randn(4, layout.n_features, 2, generator=g, dtype=F64)
    X = torch.randn(9, 3, generator=g, dtype=F64)
    f = layout.features(hidden, X) @ theta
    params = layout.to_standard(hidden, theta)
    torch.testing.assert_close(make_forward(net)(params, X), f)
    # by hand for the first layer: sigma_w / sqrt(fan_in) * W x + sigma_b * b
    W = hidden[:, : 6 * 3].reshape(4, 6, 3)
    torch.testing.assert_close(params["0.weight"], 1.3 / math.sqrt(3) * W)
    back_hidden, back_theta = layout.from_standard(params)
    torch.testing.assert_close(back_hidden, hidden)
    torch.testing.assert_close(back_theta, theta)


def test_no_hidden_layer_features_are_scaled_inputs_and_bias():
    layout = NTKLayout.from_network(build_mlp(2, 1, (), "tanh"))
    X = torch.tensor([[1.0, -2.0]], dtype=F64)
    psi = layout.features(torch.zeros(1, 0, dtype=F64), X)
    torch.testing.assert_close(psi, torch.tensor([[[1 / math.sqrt(2), -math.sqrt(2), 0.1]]],
                                                 dtype=F64))
