"""Tests for skfbnn.nn.functional: batched forward, init_params, helpers."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from skfbnn.nn.functional import ModuleForward, index_params, init_params, make_forward, n_batch
from skfbnn.nn.mlp import ACTIVATIONS, build_mlp

F64 = torch.float64
CPU = torch.device("cpu")
B = 4


class Wrapper(nn.Module):
    """A non-Sequential module: make_forward must take the vmap fallback."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)


def _params(net, seed=0, dtype=F64):
    return init_params(net, B, torch.Generator().manual_seed(seed), device=CPU, dtype=dtype)


def _manual(params, X, activation, n_linear):
    """Loop over parameter sets and layers in plain torch."""
    outs = []
    act = ACTIVATIONS[activation]()
    for b in range(B):
        h = X if X.dim() == 2 else X[b]
        for i in range(n_linear):
            h = h @ params[f"{2 * i}.weight"][b].T + params[f"{2 * i}.bias"][b]
            if i < n_linear - 1:
                h = act(h)
        outs.append(h)
    return torch.stack(outs)


@pytest.mark.parametrize("hidden", [(), (5,), (6, 4)])
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("per_set", [False, True])
def test_batched_path_equals_vmap_fallback(hidden, activation, per_set):
    net = build_mlp(3, 2, hidden, activation)
    params = _params(net)
    gen = torch.Generator().manual_seed(1)
    X = torch.randn((B, 7, 3) if per_set else (7, 3), generator=gen, dtype=F64)
    batched = make_forward(net)(params, X)
    fallback_forward = make_forward(Wrapper(net))
    assert isinstance(fallback_forward, ModuleForward)
    assert not isinstance(make_forward(net), ModuleForward)
    fallback = fallback_forward({f"net.{k}": v for k, v in params.items()}, X)
    assert batched.shape == fallback.shape == (B, 7, 2)
    torch.testing.assert_close(batched, fallback, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(batched, _manual(params, X, activation, len(hidden) + 1))


def test_per_set_inputs_are_not_shared():
    net = build_mlp(2, 1, (3,), "tanh")
    params = _params(net)
    X = torch.randn(B, 5, 2, generator=torch.Generator().manual_seed(2), dtype=F64)
    out = make_forward(net)(params, X)
    shared = make_forward(net)(params, X[0])
    torch.testing.assert_close(out[0], shared[0])
    assert not torch.allclose(out[1], shared[1])


def test_forward_is_differentiable_in_params():
    net = build_mlp(2, 1, (3,), "tanh")
    params = {k: v.requires_grad_() for k, v in _params(net).items()}
    X = torch.randn(5, 2, generator=torch.Generator().manual_seed(3), dtype=F64)
    for fwd, p in [(make_forward(net), params),
                   (make_forward(Wrapper(net)), {f"net.{k}": v for k, v in params.items()})]:
        grads = torch.autograd.grad(fwd(p, X).sum(), list(p.values()))
        assert all(g.shape == v.shape and g.abs().sum() > 0
                   for g, v in zip(grads, p.values(), strict=True))


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_init_params_bounds_shapes_and_dtype(dtype):
    net = build_mlp(16, 3, (64, 4), "relu")
    params = init_params(net, 50, torch.Generator().manual_seed(0), device=CPU, dtype=dtype)
    fan_in = {"0": 16, "2": 64, "4": 4}
    assert list(params) == [name for name, _ in net.named_parameters()]
    for name, p in net.named_parameters():
        v = params[name]
        assert v.shape == (50, *p.shape) and v.dtype == dtype and v.device.type == "cpu"
        bound = fan_in[name.split(".")[0]] ** -0.5
        assert v.abs().max() <= bound
        # uniform on the full interval: extremes near +-bound, mean near 0, var bound^2/3
        assert v.max() > 0.9 * bound and v.min() < -0.9 * bound
        assert abs(v.mean().item()) < 0.1 * bound
        assert v.var().item() == pytest.approx(bound**2 / 3, rel=0.15)


def test_init_params_determinism_and_independence():
    net = build_mlp(3, 1, (8,), "tanh")
    a = _params(net, seed=0)
    b = _params(net, seed=0)
    c = _params(net, seed=1)
    for k in a:
        assert torch.equal(a[k], b[k])
        assert not torch.equal(a[k], c[k])
        assert not torch.equal(a[k][0], a[k][1])  # sets differ from each other
    # the global RNG is not used
    torch.manual_seed(0)
    state = torch.get_rng_state()
    _params(net)
    assert torch.equal(torch.get_rng_state(), state)


def test_n_batch_and_index_params():
    net = build_mlp(3, 1, (8,), "tanh")
    params = _params(net)
    assert n_batch(params) == B
    sub = index_params(params, slice(1, 3))
    assert n_batch(sub) == 2
    idx = index_params(params, torch.tensor([3, 0]))
    for k in params:
        assert torch.equal(sub[k], params[k][1:3])
        assert torch.equal(idx[k][0], params[k][3]) and torch.equal(idx[k][1], params[k][0])


def test_init_rule_reads_torch_fan_in_for_every_parameter():
    """Fan-in by torch.nn.init's rule (a bias by its own module's weight), normalisation
    layers at 1 and 0, and a parameter without a rule refused by name."""
    from torch import nn

    from skfbnn.nn.functional import init_rule

    net = nn.Sequential(nn.Conv2d(3, 4, (3, 2)), nn.GroupNorm(2, 4), nn.Flatten(),
                        nn.Linear(8, 2), nn.LayerNorm(2), nn.Embedding(5, 3))
    rules = {n: init_rule(net, n, p) for n, p in net.named_parameters()}
    assert rules == {"0.weight": 18, "0.bias": 18, "1.weight": 1.0, "1.bias": 0.0,
                     "3.weight": 8, "3.bias": 8, "4.weight": 1.0, "4.bias": 0.0,
                     "5.weight": 3}
    params = init_params(net, 4, torch.Generator().manual_seed(0), device=torch.device("cpu"),
                         dtype=F64)
    assert float(params["0.bias"].abs().max()) <= 18 ** -0.5
    assert bool((params["1.weight"] == 1).all()) and bool((params["4.bias"] == 0).all())

    class Free(nn.Module):
        def __init__(self):
            super().__init__()
            self.temperature = nn.Parameter(torch.ones(()))

    with pytest.raises(ValueError, match="'temperature'.*no initialisation rule"):
        init_params(Free(), 1, torch.Generator(), device=torch.device("cpu"), dtype=F64)


def test_readout_names_are_the_last_module_holding_parameters():
    from torch import nn

    from skfbnn.nn import CNN1d, ResidualMLP
    from skfbnn.nn.functional import readout_names

    assert readout_names(CNN1d(40, 3)) == ["readout.weight", "readout.bias"]
    assert readout_names(ResidualMLP(4, 2)) == ["readout.weight", "readout.bias"]
    assert readout_names(nn.Linear(3, 1)) == ["weight", "bias"]


def test_values_per_row_counts_every_layer_output_of_one_row():
    from skfbnn.nn import ResidualMLP
    from skfbnn.nn.functional import values_per_row

    net = nn.Sequential(nn.Conv1d(1, 4, 3), nn.GELU(), nn.Flatten(), nn.Linear(32, 2))
    grad = torch.is_grad_enabled()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    assert values_per_row(net, (1, 10), 10) == 32 + 32 + 32 + 2
    assert torch.is_grad_enabled() == grad and not net._forward_hooks
    assert all(not m._forward_hooks for m in net.modules())  # hooks removed
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert values_per_row(build_mlp(5, 1, (8, 8), "tanh"), None, 5) is None  # weights tell
    residual = ResidualMLP(5, 2, width=8, n_blocks=1)  # embed, norm, act, linear: 8 each
    assert values_per_row(residual, None, 5) == 4 * 8 + 2


def test_forward_values_of_a_plain_mlp_is_what_the_hooks_count():
    """A plain MLP's count comes from its widths (no forward pass at fit); the same as the
    hooks count on the same layers wrapped so that the shortcut does not apply."""
    import torch.nn as nn

    from skfbnn.nn.functional import forward_values

    mlp = build_mlp(5, 2, (8, 6), "tanh")
    wrapped = nn.Sequential(nn.Sequential(*mlp))  # not a plain MLP: counted by hooks
    assert forward_values(mlp, None, 5) == forward_values(wrapped, None, 5) == 8 + 8 + 6 + 6 + 2


def test_a_sequential_with_its_own_forward_keeps_it():
    """A Sequential subclass whose forward differs is not taken for a plain MLP."""

    class Doubled(nn.Sequential):
        def forward(self, x):
            return 2 * super().forward(x)

    net = Doubled(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    params = _params(net)
    X = torch.randn(5, 3, generator=torch.Generator().manual_seed(3), dtype=F64)
    forward = make_forward(net)
    assert type(forward) is ModuleForward
    plain = make_forward(nn.Sequential(*net))
    torch.testing.assert_close(forward(params, X), 2 * plain(params, X))
