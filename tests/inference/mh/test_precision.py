"""Float32 features of a float64 chain: the Gram formed exactly in float64, the potential
and its gradient as in float64 up to float32 rounding of the features."""

from __future__ import annotations

import math

import pytest
import torch

from skfbnn.inference.mh.build import _target
from skfbnn.inference.mh.ntk import NTKLayout
from skfbnn.inference.mh.reparam import gram
from skfbnn.inference.mh.target import FEATURES_DTYPE, WideNetTarget
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import make_forward
from skfbnn.nn.mlp import build_mlp

F64 = torch.float64


@pytest.mark.parametrize("layout", ["rows", "features by rows"])
def test_gram_of_float32_features_is_exact_in_float64_with_a_float32_gradient(layout):
    g = torch.Generator().manual_seed(0)
    Psi = torch.randn(3, 200, 7, generator=g)
    if layout != "rows":  # the (C, p, n) storage of NTKLayout.features
        Psi = Psi.mT.contiguous().mT
    Psi.requires_grad_(True)
    Y = torch.randn(200, 2, generator=g, dtype=F64)
    G, b = gram(Psi, Y)
    wide = Psi.detach().double()
    assert G.dtype == b.dtype == F64
    # float32 products are exact in float64: only float64 sums round
    torch.testing.assert_close(G, wide.mT @ wide, rtol=1e-15, atol=1e-12)
    torch.testing.assert_close(b, wide.mT @ Y, rtol=1e-15, atol=1e-12)
    wG = torch.randn(G.shape, generator=g, dtype=F64)
    wb = torch.randn(b.shape, generator=g, dtype=F64)
    (grad,) = torch.autograd.grad((G * wG).sum() + (b * wb).sum(), Psi)
    assert grad.dtype == torch.float32 and grad.shape == Psi.shape
    wide.requires_grad_(True)
    (expected,) = torch.autograd.grad(((wide.mT @ wide) * wG).sum()
                                      + ((wide.mT @ Y) * wb).sum(), wide)
    torch.testing.assert_close(grad.double(), expected, rtol=1e-5, atol=1e-5)
    # same dtype: the plain products
    G64, _ = gram(wide.detach(), Y)
    assert torch.equal(G64, wide.detach().mT @ wide.detach())


FIXED_LOG_NOISE = torch.tensor([math.log(0.3)], dtype=F64)


def _targets(reparametrize, marginalize, n=300, log_noise=FIXED_LOG_NOISE):
    g = torch.Generator().manual_seed(1)
    net = build_mlp(3, 1, (40, 40), "gelu")
    layout = NTKLayout.from_network(net, math.sqrt(2.0), 0.1, 1.0, 0.1)
    X = torch.randn(n, 3, generator=g, dtype=F64)
    Y = (X[:, :1].sin() + 0.3 * torch.randn(n, 1, generator=g, dtype=F64))
    kw = dict(reparametrize=reparametrize, marginalize_readout=marginalize)
    narrow = WideNetTarget(layout, X, Y, log_noise, features_dtype=torch.float32, **kw)
    wide = WideNetTarget(layout, X, Y, log_noise, **kw)
    phi = torch.randn(4, wide.n_dim, generator=g, dtype=F64)
    phi_out = (torch.randn(4, *wide.readout_shape, generator=g, dtype=F64)
               if marginalize else None)
    return narrow, wide, phi, phi_out


@pytest.mark.parametrize("reparametrize, marginalize, n", [
    (True, False, 300), (False, False, 300), (True, True, 300),
    (True, False, 20),  # n < p: the dual system
])
def test_float32_features_move_the_potential_by_float32_rounding_only(
        reparametrize, marginalize, n):
    narrow, wide, phi, phi_out = _targets(reparametrize, marginalize, n)
    value, grad = narrow.potential_and_grad(phi)
    expected, expected_grad = wide.potential_and_grad(phi)
    assert value.dtype == grad.dtype == F64  # the chain stays in float64
    assert narrow.features(narrow.split(phi)[0]).dtype == torch.float32
    torch.testing.assert_close(value, expected, rtol=1e-6, atol=1e-4)
    torch.testing.assert_close(grad, expected_grad, rtol=1e-4, atol=1e-4 * float(
        expected_grad.abs().max()))
    # nearby states (a pCN step of 0.01): the difference the acceptance ratio uses
    near = 0.01 * torch.randn(phi.shape, generator=torch.Generator().manual_seed(2),
                              dtype=F64) + (1 - 1e-4) ** 0.5 * phi
    diff = narrow.potential(near) - narrow.potential(phi)
    torch.testing.assert_close(diff, wide.potential(near) - wide.potential(phi),
                               rtol=1e-4, atol=1e-4)
    for key, v in narrow.params(phi, phi_out, F64).items():
        torch.testing.assert_close(v, wide.params(phi, phi_out, F64)[key], rtol=1e-5,
                                   atol=1e-5)


def test_learned_noise_with_float32_features():
    narrow, wide, phi, _ = _targets(True, False, log_noise=None)  # sampled noise
    assert narrow.n_noise == 1
    torch.testing.assert_close(narrow.potential(phi), wide.potential(phi), rtol=1e-6,
                               atol=1e-4)


def test_the_samplers_build_their_targets_with_float32_features():
    X = torch.randn(30, 2, dtype=F64)
    y = torch.randn(30, 1, dtype=F64)
    net = build_mlp(2, 1, (8,), "gelu")
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.3]), None, 30,
                           network=net)
    target = _target(problem, {"x": X, "y": y}, torch.device("cpu"), sigma_w=math.sqrt(2.0),
                     sigma_b=0.1, sigma_w_out=1.0, sigma_b_out=0.1, reparametrize=True,
                     marginalize_readout=False)
    assert FEATURES_DTYPE == torch.float32
    assert target.features_dtype == FEATURES_DTYPE and target.X.dtype == F64
