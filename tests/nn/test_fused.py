"""The fused linear + tanh node and the tanh layer + readout node against the unfused
autograd reference: values, first and second derivatives, forward mode, and their place in
the batched forward."""

from __future__ import annotations

import pytest
import torch
from torch.autograd import forward_ad

from skfbnn.nn import batched_mlp
from skfbnn.nn.functional import make_forward
from skfbnn.nn.fused import linear_tanh, tanh_readout
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


def _readout_inputs(B=3, hidden=4, d=2, n=5, out=1, seed=0, dtype=F64, shared=False):
    b1, w1, h = _inputs(B, hidden, d, n, seed, dtype, shared)
    gen = torch.Generator().manual_seed(seed + 10)
    return (b1, w1, h, torch.randn(B, out, generator=gen, dtype=dtype),
            torch.randn(B, out, hidden, generator=gen, dtype=dtype))


def _readout_reference(b1, w1, h, b2, w2):
    return torch.baddbmm(b2.unsqueeze(-1), w2, _reference(b1, w1, h))


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-7), (F64, 1e-15)])
@pytest.mark.parametrize("out", [1, 3])
def test_readout_values_are_the_linear_map_of_the_tanh_layer(dtype, tol, out):
    args = _readout_inputs(B=2, hidden=50, d=13, n=40, out=out, dtype=dtype)
    got, expected = tanh_readout(*args), _readout_reference(*args)
    scale = float(expected.abs().max())
    assert float((got - expected).abs().max()) <= 64 * tol * scale


@pytest.mark.parametrize("out", [1, 3])
@pytest.mark.parametrize("shared", [False, True])
def test_readout_gradients_equal_autograd_through_the_unfused_layers(out, shared):
    args = _readout_inputs(out=out, shared=shared)
    leaves = [t.clone().requires_grad_(True) for t in args]
    weights = torch.randn(3, out, 5, generator=torch.Generator().manual_seed(1), dtype=F64)
    got = torch.autograd.grad((tanh_readout(*leaves) * weights).sum(), leaves)
    expected = torch.autograd.grad((_readout_reference(*leaves) * weights).sum(), leaves)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("out", [1, 2])
def test_readout_gradcheck_and_second_derivatives(out):
    """Second derivatives flow through the hidden activations, which the node returns as a
    second output for that purpose (``gradgradcheck`` fails if they are treated as
    constants); undefined output gradients are handled (``gradcheck``'s own check)."""
    args = [t.requires_grad_(True) for t in _readout_inputs(B=2, hidden=3, d=2, n=4, out=out)]
    assert torch.autograd.gradcheck(tanh_readout, args)
    assert torch.autograd.gradgradcheck(tanh_readout, args)


def test_readout_hessian_vector_product_equals_the_unfused_one():
    """The samplers' curvature estimate: a Hessian-vector product of a loss in the weights."""
    args = _readout_inputs(out=1)
    y = torch.randn(3, 1, 5, generator=torch.Generator().manual_seed(4), dtype=F64)
    gen = torch.Generator().manual_seed(5)
    vectors = [torch.randn(t.shape, generator=gen, dtype=F64) for t in args]
    results = []
    for fn in (tanh_readout, _readout_reference):
        leaves = [t.clone().requires_grad_(True) for t in args]
        grads = torch.autograd.grad((fn(*leaves) - y).pow(2).sum(), leaves, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(grads, vectors, strict=True))
        results.append(torch.autograd.grad(dot, leaves))
    for g, e in zip(*results, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("node,inputs,reference", [
    (linear_tanh, _inputs(), _reference),
    (tanh_readout, _readout_inputs(out=1), _readout_reference),
    (tanh_readout, _readout_inputs(out=3), _readout_reference),
], ids=["linear_tanh", "tanh_readout-1", "tanh_readout-3"])
def test_forward_mode_equals_the_jvp_of_the_unfused_layers(node, inputs, reference):
    gen = torch.Generator().manual_seed(2)
    tangents = [torch.randn(t.shape, generator=gen, dtype=F64) for t in inputs]
    _, expected = torch.func.jvp(reference, inputs, tuple(tangents))
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(inputs, tangents, strict=True)]
        got = forward_ad.unpack_dual(node(*duals)).tangent
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fused", [True, False])
def test_the_batched_forward_fuses_every_linear_tanh_pair_and_keeps_the_numbers(
        monkeypatch, fused):
    """Two tanh layers and a readout: the batched forward (fused, or not below the size
    threshold) against the same network evaluated with torch.tanh layer by layer, in value
    and in every parameter's gradient. Fused, the first tanh layer is a linear + tanh node
    and the second one node with the readout."""
    calls = []

    def counted(fn):
        def call(*args):
            calls.append(fn.__name__)
            return fn(*args)
        return call

    monkeypatch.setattr(batched_mlp, "linear_tanh", counted(linear_tanh))
    monkeypatch.setattr(batched_mlp, "tanh_readout", counted(tanh_readout))
    monkeypatch.setattr(batched_mlp, "FUSE_MIN_ELEMENTS", 0 if fused else 10**9)
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
    assert calls == (["linear_tanh", "tanh_readout"] if fused else [])


def test_a_readout_followed_by_an_activation_is_folded_before_it(monkeypatch):
    """tanh layer, Linear, ReLU: the node takes the first two, the ReLU acts on its output."""
    monkeypatch.setattr(batched_mlp, "FUSE_MIN_ELEMENTS", 0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2),
                              torch.nn.ReLU()).double()
    gen = torch.Generator().manual_seed(6)
    params = {k: torch.randn(4, *v.shape, generator=gen, dtype=F64)
              for k, v in net.named_parameters()}
    X = torch.randn(7, 3, generator=gen, dtype=F64)
    expected = torch.stack([torch.func.functional_call(net, {k: v[i] for k, v in params.items()},
                                                       (X,)) for i in range(4)])
    torch.testing.assert_close(make_forward(net)(params, X), expected, rtol=1e-13, atol=1e-13)
