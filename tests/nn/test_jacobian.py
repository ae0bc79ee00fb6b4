"""The closed-form MLP Jacobian equals torch.func's, and stays differentiable."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call, jacrev

from skfbnn.nn.functional import init_params
from skfbnn.nn.jacobian import flat_jacobian, mlp_jacobian
from skfbnn.nn.mlp import ACTIVATIONS, build_mlp

F64 = torch.float64


def _brute_force(net, params, X, n_out):
    """Jacobian of each set's first ``n_out`` outputs by torch.func, one set at a time."""
    out = {}
    for c in range(next(iter(params.values())).shape[0]):
        p = {k: v[c] for k, v in params.items()}
        x = X if X.dim() == 2 else X[c]
        jac = jacrev(lambda q, x=x: functional_call(net, q, (x,))[:, :n_out])(p)
        for k, v in jac.items():  # (M, k, *shape) -> (k, M, *shape)
            out.setdefault(k, []).append(v.movedim(1, 0))
    return {k: torch.stack(v) for k, v in out.items()}


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("sizes", [(), (5,), (5, 4)])
def test_closed_form_equals_torch_func(activation, sizes):
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(3, 3, sizes, activation)
    params = init_params(net, 2, gen, device=torch.device("cpu"), dtype=F64)
    params = {k: 3 * v for k, v in params.items()}  # away from the linear regime
    X = torch.randn(7, 3, generator=gen, dtype=F64)
    f, jac = mlp_jacobian(net, params, X, n_out=2)
    expected = _brute_force(net.to_empty(device="cpu").double(), params, X, 2)
    assert f.shape == (2, 7, 2)
    for k in expected:
        torch.testing.assert_close(jac[k], expected[k], rtol=1e-10, atol=1e-12)


def test_per_set_inputs():
    gen = torch.Generator().manual_seed(1)
    net = build_mlp(2, 1, (4,), "tanh")
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    X = torch.randn(3, 5, 2, generator=gen, dtype=F64)
    _, jac = mlp_jacobian(net, params, X)
    expected = _brute_force(net.to_empty(device="cpu").double(), params, X, 1)
    for k in expected:
        torch.testing.assert_close(jac[k], expected[k], rtol=1e-10, atol=1e-12)


def test_gradient_through_the_jacobian_matches_finite_differences():
    gen = torch.Generator().manual_seed(2)
    net = build_mlp(2, 1, (3,), "tanh")
    params = init_params(net, 1, gen, device=torch.device("cpu"), dtype=F64)
    X = torch.randn(4, 2, generator=gen, dtype=F64)

    def ntk_trace(w):
        _, jac = mlp_jacobian(net, {**params, "0.weight": w}, X)
        A = flat_jacobian(jac)
        return (A @ A.transpose(-1, -2)).diagonal(dim1=-2, dim2=-1).sum()

    w = params["0.weight"].clone().requires_grad_(True)
    assert torch.autograd.gradcheck(ntk_trace, (w,))


def test_flat_jacobian_scales_columns():
    gen = torch.Generator().manual_seed(3)
    net = build_mlp(2, 1, (3,), "relu")
    params = init_params(net, 2, gen, device=torch.device("cpu"), dtype=F64)
    _, jac = mlp_jacobian(net, params, torch.randn(5, 2, generator=gen, dtype=F64))
    scale = {k: torch.rand(v.shape, generator=gen, dtype=F64) for k, v in params.items()}
    A, B = flat_jacobian(jac), flat_jacobian(jac, scale)
    flat_scale = torch.cat([s.reshape(2, -1) for s in scale.values()], -1)
    torch.testing.assert_close(B, A * flat_scale[:, None, None, :])


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_ntk_without_the_jacobian_equals_j_j_transpose(activation):
    from skfbnn.nn.jacobian import mlp_ntk

    gen = torch.Generator().manual_seed(4)
    net = build_mlp(3, 3, (5, 4), activation)
    params = init_params(net, 2, gen, device=torch.device("cpu"), dtype=F64)
    X = torch.randn(2, 6, 3, generator=gen, dtype=F64)
    f, ntk = mlp_ntk(net, params, X, n_out=2)
    A = flat_jacobian(mlp_jacobian(net, params, X, n_out=2)[1])
    torch.testing.assert_close(ntk, A @ A.transpose(-1, -2), rtol=1e-10, atol=1e-12)


def _cnn():
    from torch import nn
    return nn.Sequential(nn.Conv1d(1, 3, 3, padding=1), nn.GroupNorm(1, 3), nn.GELU(),
                         nn.Flatten(), nn.Linear(3 * 6, 2))


@pytest.mark.parametrize("per_set", [False, True])
def test_generic_jacobian_of_a_cnn_matches_finite_differences(per_set):
    """Central differences (step 1e-6, error O(h^2) plus rounding ~1e-10) per entry."""
    from skfbnn.nn.functional import ModuleForward
    from skfbnn.nn.jacobian import forward_jacobian

    net = _cnn()
    forward = ModuleForward(net, (1, 6))
    gen = torch.Generator().manual_seed(0)
    params = init_params(net, 2, gen, device=torch.device("cpu"), dtype=torch.float64)
    params["log_noise"] = torch.zeros(2, 1, dtype=torch.float64)  # not the module's: ignored
    X = torch.randn((2, 4, 6) if per_set else (4, 6), generator=gen, dtype=torch.float64)
    f, jac = forward_jacobian(forward, params, X)
    assert set(jac) == {n for n, _ in net.named_parameters()}
    torch.testing.assert_close(f, forward(params, X))
    h = 1e-6
    for name, J in jac.items():
        flat = params[name].reshape(2, -1)
        for j in range(0, flat.shape[1], max(1, flat.shape[1] // 5)):
            bumped = {}
            for sign in (1, -1):
                p = dict(params)
                v = flat.clone()
                v[:, j] += sign * h
                p[name] = v.reshape(params[name].shape)
                bumped[sign] = forward(p, X)
            fd = (bumped[1] - bumped[-1]) / (2 * h)  # (C, M, k)
            exact = J.reshape(*J.shape[:3], -1)[..., j].movedim(1, 2)
            torch.testing.assert_close(exact, fd, rtol=1e-6, atol=1e-8)


def test_ntk_of_a_cnn_is_j_jt():
    from skfbnn.inference.types import BayesProblem
    from skfbnn.nn.functional import ModuleForward

    net = _cnn()
    forward = ModuleForward(net, (1, 6))
    problem = BayesProblem(forward, log_likelihood=lambda f, y, p: f.sum(), network=net)
    params = init_params(net, 3, torch.Generator().manual_seed(1), device=torch.device("cpu"),
                         dtype=torch.float64)
    X = torch.randn(5, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    f, ntk = problem.ntk(params, X, 2)
    A = flat_jacobian(problem.jacobian(params, X, 2)[1])
    assert ntk.shape == (3, 2, 5, 5)
    torch.testing.assert_close(ntk, A @ A.transpose(-1, -2))
    eig = torch.linalg.eigvalsh(ntk)
    assert (eig > -1e-10).all()  # a Gram matrix


@pytest.mark.parametrize("per_set", [False, True])
def test_generic_jacobian_row_by_row_equals_jacrev_of_all_rows(per_set):
    """The rows' Jacobians taken one row at a time are those of all rows at once (the
    cross-row blocks of which are zero), and so are their gradients (ifBNN differentiates
    through them)."""
    from torch.func import jacrev, vmap

    from skfbnn.nn.functional import make_forward
    from skfbnn.nn.jacobian import forward_jacobian

    net = _cnn()
    forward = make_forward(net, (1, 6))
    gen = torch.Generator().manual_seed(3)
    params = {k: v.requires_grad_(True) for k, v in init_params(
        net, 2, gen, device=torch.device("cpu"), dtype=torch.float64).items()}
    X = torch.randn((2, 4, 6) if per_set else (4, 6), generator=gen, dtype=torch.float64)
    _, jac = forward_jacobian(forward, params, X)
    buffers = forward.buffers(X.device, X.dtype)
    dims = (0, 0) if per_set else (0, None)
    whole = vmap(jacrev(lambda p, x: forward.single(p, x, buffers)), in_dims=dims)(params, X)
    for name, J in jac.items():
        torch.testing.assert_close(J, whole[name].movedim(2, 1), rtol=1e-12, atol=1e-12)
    weights = torch.randn(sum(J.numel() for J in jac.values()), generator=gen,
                          dtype=torch.float64)
    flat = torch.cat([J.reshape(-1) for J in jac.values()])
    flat_whole = torch.cat([whole[n].movedim(2, 1).reshape(-1) for n in jac])
    got = torch.autograd.grad((flat * weights).sum(), list(params.values()), allow_unused=True)
    want = torch.autograd.grad((flat_whole * weights).sum(), list(params.values()),
                               allow_unused=True)
    for g, w, p in zip(got, want, params.values(), strict=True):  # None: J does not use p
        torch.testing.assert_close(torch.zeros_like(p) if g is None else g,
                                   torch.zeros_like(p) if w is None else w,
                                   rtol=1e-10, atol=1e-10)
