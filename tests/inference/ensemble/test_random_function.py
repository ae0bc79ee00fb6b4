"""ifBDE's random function g(x) = J(x; w_0) w*: the JVP against the materialised Jacobian,
its prior against the hidden layers' NTK (Monte Carlo, z-scores from the MC standard error),
and what it leaves alone (the readout, variance heads, a network without hidden layer)."""

from __future__ import annotations

import pytest
import torch

from skfbnn.inference.ensemble.random_function import PREFIX, draw, offset, randomized, split
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.jacobian import flat_jacobian, mlp_jacobian
from skfbnn.nn.mlp import build_mlp

F64 = torch.float64
CPU = torch.device("cpu")


def _members(net, C, seed):
    gen = torch.Generator().manual_seed(seed)
    w0 = init_params(net, C, gen, device=CPU, dtype=F64)
    return w0, draw(net, w0, gen), gen


@pytest.mark.parametrize("shared", [True, False])
def test_jvp_is_the_materialised_jacobian_times_the_direction(shared):
    net = build_mlp(2, 2, (3, 4), "tanh")
    w0, rf, gen = _members(net, 3, 0)
    X = torch.randn((5, 2) if shared else (3, 5, 2), generator=gen, dtype=F64)
    g = offset(make_forward(net), {**w0, **rf}, X)
    _, jac = mlp_jacobian(net, w0, X)
    J = flat_jacobian(jac)  # (C, n_out, n, P), brute force
    direction = torch.cat([rf[PREFIX + "direction." + k].reshape(3, -1) for k in jac], 1)
    expected = torch.einsum("conp,cp->cno", J, direction)
    torch.testing.assert_close(g, expected, rtol=1e-12, atol=1e-14)
    assert float(g.abs().min()) > 0  # hidden layers give every output a term


def test_readout_direction_is_zero_and_variance_heads_get_nothing():
    net = build_mlp(1, 2, (4,), "tanh")
    w0, _, gen = _members(net, 2, 1)
    rf = draw(net, w0, gen, n_function_outputs=1)
    assert not rf[PREFIX + "direction.2.weight"].any()
    assert not rf[PREFIX + "direction.2.bias"].any()
    g = offset(make_forward(net), {**w0, **rf}, torch.linspace(-1, 1, 7, dtype=F64)[:, None])
    assert bool((g[..., 0] != 0).all()) and not g[..., 1].any()


def test_without_hidden_layer_the_term_is_zero():
    """w* is zero on the readout, the only layer: f~ = f exactly."""
    net = build_mlp(3, 1, (), "tanh")
    w0, rf, gen = _members(net, 4, 2)
    X = torch.randn(6, 3, generator=gen, dtype=F64)
    forward = make_forward(net)
    assert torch.equal(randomized(forward)({**w0, **rf}, X), forward(w0, X))


def test_prior_of_the_term_is_the_hidden_layers_ntk():
    """Given w_0, g(X) ~ N(0, sum_{l<L} J_l V_l J_l^T) with V_l = 1/(3 fan_in) the initial
    variance: sample mean and second moments of 20 000 draws at 3 points, each within
    4 Monte-Carlo standard errors."""
    net = build_mlp(2, 1, (6,), "tanh")
    gen = torch.Generator().manual_seed(7)
    w_one = init_params(net, 1, gen, device=CPU, dtype=F64)
    C = 20_000
    w0 = {k: v.expand(C, *v.shape[1:]).clone() for k, v in w_one.items()}
    rf = draw(net, w0, gen)
    X = torch.tensor([[0.0, 0.0], [0.7, -0.3], [-1.5, 1.0]], dtype=F64)
    g = offset(make_forward(net), {**w0, **rf}, X)[..., 0]  # (C, 3)
    _, jac = mlp_jacobian(net, w_one, X)
    variance = {"0.weight": 1 / 6, "0.bias": 1 / 6, "2.weight": 0.0, "2.bias": 0.0}
    exact = sum(variance[k] * flat_jacobian({k: j})[0, 0] @ flat_jacobian({k: j})[0, 0].T
                for k, j in jac.items())
    mean_z = g.mean(0) / (g.std(0) / C**0.5)
    products = g[:, :, None] * g[:, None, :]  # the mean is known to be 0
    cov_z = (products.mean(0) - exact) / (products.std(0) / C**0.5)
    assert float(mean_z.abs().max()) < 4, mean_z
    assert float(cov_z.abs().max()) < 4, cov_z
    assert float(exact.diagonal().min()) > 0.01  # a non-degenerate check


def test_split_and_the_plain_forward_without_a_term():
    net = build_mlp(2, 1, (3,), "tanh")
    w0, rf, _ = _members(net, 2, 3)
    own, fixed = split({**w0, **rf})
    assert set(own) == set(w0) and set(fixed) == set(rf)
    assert offset(make_forward(net), w0, torch.zeros(2, 2, dtype=F64)) is None
