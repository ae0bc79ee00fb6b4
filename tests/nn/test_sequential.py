"""Tests for skfbnn.nn.sequential: the sets folded into the channel groups equal vmap."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from skfbnn.nn.functional import ModuleForward, SequentialForward, init_params, make_forward
from skfbnn.nn.sequential import plan_sequential
from skfbnn.nn.zoo import CNN1d, CNN2d, RowShape

F64 = torch.float64
CPU = torch.device("cpu")
B = 3


def _perturbed(net, seed=0):
    """Initial parameters plus noise, so that normalisation scales and shifts are not 1, 0."""
    gen = torch.Generator().manual_seed(seed)
    params = init_params(net, B, gen, device=CPU, dtype=F64)
    return {k: v + 0.3 * torch.randn(v.shape, generator=gen, dtype=F64)
            for k, v in params.items()}


NETWORKS = {
    "cnn1d": (lambda: CNN1d(12, 2, channels=4), (1, 12)),
    "cnn2d": (lambda: CNN2d(36, 3, channels=4), (1, 6, 6)),
    "grouped, dilated, no bias, same padding": (lambda: nn.Sequential(
        nn.Conv1d(2, 4, 3, padding="same", dilation=2, bias=False), nn.ReLU(),
        nn.Conv1d(4, 6, 3, stride=2, groups=2), nn.GroupNorm(3, 6), nn.SiLU(),
        nn.Flatten(), nn.Linear(18, 2)), (2, 8)),
    "linear over the last axis, group norm of features": (lambda: nn.Sequential(
        RowShape(2, 5), nn.Linear(5, 4), nn.Tanh(), nn.Flatten(), nn.Linear(8, 6),
        nn.GroupNorm(2, 6, affine=False), nn.GELU(), nn.Linear(6, 1)), None),
    "conv3d": (lambda: nn.Sequential(
        nn.Conv3d(1, 2, 2), nn.Sigmoid(), nn.Flatten(), nn.Linear(2 * 8, 2)), (1, 3, 3, 3)),
    "grouped first layer": (lambda: nn.Sequential(
        nn.Conv1d(2, 4, 3, groups=2), nn.Flatten(), nn.Linear(16, 1)), (2, 6)),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
@pytest.mark.parametrize("per_set", [False, True])
def test_batched_sequential_equals_vmap(name, per_set):
    make, shape = NETWORKS[name]
    net = make()
    forward = make_forward(net, shape)
    assert isinstance(forward, SequentialForward)
    reference = ModuleForward(net, shape)
    params = {k: v.requires_grad_(True) for k, v in _perturbed(net).items()}
    d = sum(p.numel() for p in net.parameters()) and (
        torch.Size(shape).numel() if shape else net[1].in_features * 2)
    gen = torch.Generator().manual_seed(1)
    X = torch.randn((B, 7, d) if per_set else (7, d), generator=gen, dtype=F64)
    out, ref = forward(params, X), reference(params, X)
    assert out.shape == ref.shape
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    # gradients, and Hessian-vector products (the samplers' curvature differentiates twice)
    grads = torch.autograd.grad(out.square().sum(), list(params.values()), create_graph=True)
    ref_grads = torch.autograd.grad(ref.square().sum(), list(params.values()),
                                    create_graph=True)
    for g, r in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-10, atol=1e-10)
    v = [torch.randn(g.shape, generator=gen, dtype=F64) for g in grads]
    hv = torch.autograd.grad(sum((g * u).sum() for g, u in zip(grads, v, strict=True)),
                             list(params.values()))
    ref_hv = torch.autograd.grad(sum((g * u).sum() for g, u in zip(ref_grads, v, strict=True)),
                                 list(params.values()))
    for h, r in zip(hv, ref_hv, strict=True):
        torch.testing.assert_close(h, r, rtol=1e-9, atol=1e-9)


def test_input_is_not_modified_and_errors_match_vmap():
    net = CNN1d(12, 2, channels=4)
    forward, params = make_forward(net, (1, 12)), _perturbed(net)
    X = torch.randn(5, 12, dtype=F64)
    before = X.clone()
    forward(params, X)
    assert torch.equal(X, before)
    with pytest.raises(ValueError, match=r"input_shape \(1, 12\) needs 12"):
        forward(params, torch.zeros(5, 10, dtype=F64))
    with pytest.raises(ValueError, match="but there are 3 sets"):
        forward(params, torch.zeros(2, 5, 12, dtype=F64))


class OwnForward(nn.Sequential):
    def forward(self, x):
        return super().forward(x) * 2


def _shared_twice():
    layer = nn.Linear(3, 3)
    return nn.Sequential(layer, nn.Tanh(), layer)


def _with_buffer():
    net = nn.Sequential(nn.Linear(3, 1))
    net.register_buffer("scale", torch.ones(1))
    return net


@pytest.mark.parametrize("make", [
    lambda: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)),
    lambda: OwnForward(nn.Conv1d(1, 2, 3), nn.Flatten(), nn.Linear(2, 1)),
    lambda: nn.Sequential(nn.Conv1d(1, 2, 3), nn.ReLU(inplace=True), nn.Flatten(),
                          nn.Linear(2, 1)),
    lambda: nn.Sequential(nn.Conv1d(1, 2, 3, padding=1, padding_mode="reflect"),
                          nn.Flatten(), nn.Linear(6, 1)),
    lambda: nn.Sequential(nn.Conv1d(1, 2, 3), nn.Flatten(start_dim=2), nn.Linear(1, 1)),
    _shared_twice,
    _with_buffer,
    lambda: nn.Sequential(nn.Conv1d(1, 2, 3), nn.LayerNorm(1), nn.Flatten(), nn.Linear(2, 1)),
])
def test_other_modules_stay_with_vmap(make):
    net = make()
    assert plan_sequential(net) is None
    forward = make_forward(net, (1, 3))
    assert type(forward) is ModuleForward


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_folded_on_cuda_equals_vmap_and_cpu(name):
    """On a GPU the folded path equals vmap there (outputs and gradients, float64) and the
    CPU's outputs."""
    make, shape = NETWORKS[name]
    net = make()
    forward, reference = make_forward(net, shape), ModuleForward(net, shape)
    d = torch.Size(shape).numel() if shape else net[1].in_features * 2
    cpu_params = _perturbed(net)
    X = torch.randn(7, d, generator=torch.Generator().manual_seed(1), dtype=F64)
    on_cpu = forward(cpu_params, X)
    params = {k: v.cuda().requires_grad_(True) for k, v in cpu_params.items()}
    out, ref = forward(params, X.cuda()), reference(params, X.cuda())
    assert out.device.type == "cuda"
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out.detach().cpu(), on_cpu, rtol=1e-12, atol=1e-12)
    grads = torch.autograd.grad(out.square().sum(), list(params.values()))
    ref_grads = torch.autograd.grad(ref.square().sum(), list(params.values()))
    for g, r in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-10, atol=1e-10)
