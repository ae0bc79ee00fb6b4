"""The fused linear + tanh node against the unfused autograd reference: values, first and
second derivatives, forward mode, and its place in the batched forward."""

from __future__ import annotations

import pytest
import torch
from torch.autograd import forward_ad

from skfbnn.nn import functional
from skfbnn.nn.functional import make_forward
from skfbnn.nn.fused import linear_tanh
from skfbnn.nn.mlp import build_mlp

F64 = torch.float64


def _inputs(B=3, out=4, d=2, n=5, seed=0, dtype=F64, shared=False):
    gen = torch.Generator().manual_seed(seed)
    b = torch.randn(B, out, generator=gen, dtype=dtype)
    w = torch.randn(B, out, d, generator=gen, dtype=dtype)
    h = torch.randn(d, n, generator=gen, dtype=dtype).expand(B, d, n) if shared else \
        torch.randn(B, d, n, generator=gen, dtype=dtype)
    return b, w, h


def _reference(b, w, h):
    return torch.tanh(torch.baddbmm(b.unsqueeze(-1), w, h))


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-7), (F64, 1e-15)])
def test_values_are_tanh_of_the_affine_map(dtype, tol):
    b, w, h = _inputs(B=2, out=50, d=13, n=40, dtype=dtype)
    got, expected = linear_tanh(b, w, h), _reference(b, w, h)
    assert float((got - expected).abs().max()) <= 4 * tol


@pytest.mark.parametrize("shared", [False, True])
def test_gradients_equal_autograd_through_the_unfused_layer(shared):
    b, w, h = _inputs(shared=shared)
    leaves = [t.clone().requires_grad_(True) for t in (b, w, h)]
    weights = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(1), dtype=F64)
    got = torch.autograd.grad((linear_tanh(*leaves) * weights).sum(), leaves)
    expected = torch.autograd.grad((_reference(*leaves) * weights).sum(), leaves)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-12, atol=1e-12)


def test_gradcheck_and_second_derivatives():
    b, w, h = (t.requires_grad_(True) for t in _inputs(B=2, out=3, d=2, n=4))
    assert torch.autograd.gradcheck(linear_tanh, (b, w, h))
    assert torch.autograd.gradgradcheck(linear_tanh, (b, w, h))


def test_no_gradient_is_formed_for_inputs_that_do_not_need_one():
    b, w, h = _inputs()
    w.requires_grad_(True)
    (grad,) = torch.autograd.grad(linear_tanh(b, w, h).sum(), [w])
    assert grad.shape == w.shape


def test_forward_mode_equals_the_jvp_of_the_unfused_layer():
    primals = _inputs()
    gen = torch.Generator().manual_seed(2)
    tangents = [torch.randn(t.shape, generator=gen, dtype=F64) for t in primals]
    _, expected = torch.func.jvp(_reference, primals, tuple(tangents))
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)]
        got = forward_ad.unpack_dual(linear_tanh(*duals)).tangent
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fused", [True, False])
def test_the_batched_forward_fuses_every_linear_tanh_pair_and_keeps_the_numbers(
        monkeypatch, fused):
    """Two tanh layers and a readout: the batched forward (fused, or not below the size
    threshold) against the same network evaluated with torch.tanh layer by layer, in value
    and in every parameter's gradient."""
    calls = []

    def counted(*args):
        calls.append(1)
        return linear_tanh(*args)

    monkeypatch.setattr(functional, "linear_tanh", counted)
    monkeypatch.setattr(functional, "FUSE_MIN_ELEMENTS", 0 if fused else 10**9)
    net = build_mlp(3, 2, (6, 5), "tanh").double()
    forward = make_forward(net)
    gen = torch.Generator().manual_seed(3)
    params = {k: torch.randn(4, *v.shape, generator=gen, dtype=F64).requires_grad_(True)
              for k, v in net.named_parameters()}
    X = torch.randn(7, 3, generator=gen, dtype=F64)
    linears = sorted({k.split(".")[0] for k in params}, key=int)

    def unfused(p):
        h = X.mT.expand(4, *X.mT.shape)
        for i, name in enumerate(linears):
            h = torch.baddbmm(p[f"{name}.bias"].unsqueeze(-1), p[f"{name}.weight"], h)
            h = torch.tanh(h) if i < len(linears) - 1 else h
        return h.mT

    out, ref = forward(params, X), unfused(params)
    torch.testing.assert_close(out, ref, rtol=1e-13, atol=1e-13)
    got = torch.autograd.grad(out.pow(2).sum(), list(params.values()))
    expected = torch.autograd.grad(ref.pow(2).sum(), list(params.values()))
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-12, atol=1e-12)
    assert len(calls) == (2 if fused else 0)  # both hidden layers, never the readout
