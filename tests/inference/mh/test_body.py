"""The NTK layout of any Sequential ending in Linear (deterministic): the MLP through the
generic path, a Conv1d body against a forward written out by hand, fixed parameters and
buffers, and the refusals."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from skfbnn.inference.mh import pcnl
from skfbnn.inference.mh.body import BodyLayout, check_network, is_fast_mlp, ntk_layout
from skfbnn.inference.mh.build import prior_draws
from skfbnn.inference.mh.ntk import NTKLayout
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp

F64 = torch.float64
SIGMAS = dict(sigma_w=1.3, sigma_b=0.2, sigma_w_out=0.7, sigma_b_out=0.4)


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sizes", [(6, 5), ()])
def test_generic_path_gives_the_mlp_layout(sizes):
    net = build_mlp(3, 2, sizes, "tanh")
    fast = ntk_layout(net, **SIGMAS)
    generic = ntk_layout(net, **SIGMAS, generic=True)
    assert isinstance(fast, NTKLayout) and isinstance(generic, BodyLayout)
    assert (generic.n_hidden, generic.n_features, generic.n_outputs) == (
        fast.n_hidden, fast.n_features, fast.n_outputs)
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(4, fast.n_hidden, generator=g, dtype=F64)
    theta = torch.randn(4, fast.n_features, 2, generator=g, dtype=F64)
    X = torch.randn(9, 3, generator=g, dtype=F64)
    _close(generic.features(hidden, X), fast.features(hidden, X))
    params = fast.to_standard(hidden, theta)
    got = generic.to_standard(hidden, theta)
    assert list(got) == list(params)
    for key in params:
        _close(got[key], params[key])
    back = generic.from_standard(params)
    _close(back[0], hidden)
    _close(back[1], theta)


def _conv_net(device=None):
    with torch.device(device or "cpu"):
        return nn.Sequential(
            nn.Unflatten(1, (2, 6)),
            nn.Conv1d(2, 4, 3, groups=2),             # weight (4, 1, 3): fan-in 3
            nn.GELU(),
            nn.Conv1d(4, 2, 3, padding=1),            # weight (2, 4, 3): fan-in 12
            nn.GroupNorm(1, 2),                       # affine: no fan-in rule, held fixed
            nn.Tanh(),
            nn.Flatten(),
            nn.Linear(8, 2),
        )


def _by_hand(hidden, X, gain, shift):
    """The features of ``_conv_net`` written out with ``torch.nn.functional``."""
    s = SIGMAS
    rows = []
    for c in range(hidden.shape[0]):
        v = hidden[c]
        w1, b1 = v[:12].reshape(4, 1, 3), v[12:16]
        w2, b2 = v[16:40].reshape(2, 4, 3), v[40:42]
        x = X.reshape(-1, 2, 6)
        h = F.gelu(F.conv1d(x, s["sigma_w"] / math.sqrt(3) * w1, s["sigma_b"] * b1, groups=2))
        h = F.conv1d(h, s["sigma_w"] / math.sqrt(12) * w2, s["sigma_b"] * b2, padding=1)
        h = torch.tanh(F.group_norm(h, 1, gain, shift)).flatten(1)
        rows.append(torch.cat([s["sigma_w_out"] / math.sqrt(8) * h,
                               torch.full((len(X), 1), s["sigma_b_out"], dtype=F64)], 1))
    return torch.stack(rows)


def test_conv1d_body_features_against_a_forward_by_hand():
    net = _conv_net()
    with torch.no_grad():
        net[4].weight.fill_(1.5)  # a fixed parameter keeps the network's own value
        net[4].bias.fill_(-0.25)  # exact in float32
    layout = ntk_layout(net, **SIGMAS)
    assert isinstance(layout, BodyLayout)
    assert [(n, s) for n, s, _ in layout.blocks] == [
        ("1.weight", (4, 1, 3)), ("1.bias", (4,)), ("3.weight", (2, 4, 3)), ("3.bias", (2,))]
    assert sorted(layout.fixed) == ["4.bias", "4.weight"]
    assert (layout.n_hidden, layout.n_features, layout.n_outputs) == (42, 9, 2)
    g = torch.Generator().manual_seed(1)
    hidden = torch.randn(3, 42, generator=g, dtype=F64)
    theta = torch.randn(3, 9, 2, generator=g, dtype=F64)
    X = torch.randn(7, 12, generator=g, dtype=F64)
    gain, shift = torch.full((2,), 1.5, dtype=F64), torch.full((2,), -0.25, dtype=F64)
    Psi = layout.features(hidden, X)
    _close(Psi, _by_hand(hidden, X, gain, shift))
    # the network's own forward with the standard parameters: f = Psi theta
    params = layout.to_standard(hidden, theta)
    assert sorted(params) == sorted(name for name, _ in net.named_parameters())
    _close(make_forward(net.double())(params, X), Psi @ theta)
    back = layout.from_standard(params)
    _close(back[0], hidden)
    _close(back[1], theta)


def test_a_network_on_the_meta_device_keeps_its_modules_initial_fixed_values():
    layout = BodyLayout(_conv_net("meta"), **SIGMAS)
    torch.testing.assert_close(layout.fixed["4.weight"], torch.ones(2))
    torch.testing.assert_close(layout.fixed["4.bias"], torch.zeros(2))
    g = torch.Generator().manual_seed(1)
    hidden = torch.randn(3, 42, generator=g, dtype=F64)
    X = torch.randn(7, 12, generator=g, dtype=F64)
    ones, zeros = torch.ones(2, dtype=F64), torch.zeros(2, dtype=F64)
    _close(layout.features(hidden, X), _by_hand(hidden, X, ones, zeros))


class FixedConv(nn.Module):
    """A convolution with a fixed kernel (a buffer): features with no parameters."""

    def __init__(self, kernel):
        super().__init__()
        self.register_buffer("kernel", kernel)

    def forward(self, x):
        return F.conv1d(x, self.kernel)


def test_a_body_of_fixed_features_has_no_hidden_entries():
    g = torch.Generator().manual_seed(2)
    kernel = torch.randn(2, 1, 5, generator=g)
    net = nn.Sequential(nn.Unflatten(1, (1, 6)), FixedConv(kernel), nn.Tanh(), nn.Flatten(),
                        nn.Linear(4, 1, bias=False))
    layout = ntk_layout(net, **SIGMAS)
    assert layout.n_hidden == 0 and layout.n_features == 4 and list(layout.buffers) == [
        "1.kernel"]
    X = torch.randn(5, 6, generator=g, dtype=F64)
    Psi = layout.features(torch.zeros(3, 0, dtype=F64), X)
    expected = 0.7 / 2 * torch.tanh(F.conv1d(X.unsqueeze(1), kernel.double())).flatten(1)
    _close(Psi, expected.expand(3, 5, 4))
    theta = torch.randn(3, 4, 1, generator=g, dtype=F64)
    params = layout.to_standard(torch.zeros(3, 0, dtype=F64), theta)
    assert list(params) == ["4.weight"]
    _close(make_forward(net.double())(params, X), Psi @ theta)


def test_input_shape_reshapes_the_rows_for_the_body():
    net = nn.Sequential(nn.Conv1d(1, 2, 3), nn.Flatten(), nn.Linear(16, 1))
    layout = ntk_layout(net, input_shape=(1, 10))
    g = torch.Generator().manual_seed(3)
    hidden = torch.randn(2, layout.n_hidden, generator=g, dtype=F64)
    X = torch.randn(4, 10, generator=g, dtype=F64)
    w = math.sqrt(2.0) / math.sqrt(3) * hidden[:, :6].reshape(2, 2, 1, 3)
    b = 0.1 * hidden[:, 6:8]
    for c in range(2):
        h = F.conv1d(X.unsqueeze(1), w[c], b[c]).flatten(1) / math.sqrt(16)
        _close(layout.features(hidden, X)[c, :, :16], h)


def test_a_layer_used_twice_is_one_block_applied_twice():
    layer = nn.Linear(3, 3)
    net = nn.Sequential(layer, nn.Tanh(), layer, nn.Tanh(), nn.Linear(3, 1))
    assert not is_fast_mlp(net)
    layout = ntk_layout(net, **SIGMAS)
    assert [name for name, _, _ in layout.blocks] == ["0.weight", "0.bias"]
    g = torch.Generator().manual_seed(5)
    hidden = torch.randn(2, 12, generator=g, dtype=F64)
    X = torch.randn(4, 3, generator=g, dtype=F64)
    W = 1.3 / math.sqrt(3) * hidden[:, :9].reshape(2, 3, 3)
    b = 0.2 * hidden[:, 9:].unsqueeze(1)
    h = torch.tanh(X @ W.mT + b)
    h = torch.tanh(h @ W.mT + b)
    _close(layout.features(hidden, X)[..., :3], 0.7 / math.sqrt(3) * h)


class Wrapped(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x)


class OwnForward(nn.Sequential):
    def forward(self, x):
        return super().forward(2 * x)


class NotSequential(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        return self.linear(x)


@pytest.mark.parametrize("net, match", [
    (NotSequential(), "end the network with nn.Linear.*Got NotSequential"),
    (nn.Sequential(nn.Linear(3, 4), nn.ReLU()), "end the network with nn.Linear.*ReLU"),
    (nn.Sequential(), "end the network with nn.Linear"),
    (OwnForward(nn.Linear(3, 1)), "its own forward"),
    (nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1)),
     "BatchNorm1d.*'1'.*nn.LayerNorm or nn.GroupNorm"),
    (nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.ReLU(), nn.Dropout(0.1)),
                   nn.Linear(4, 1)), "Dropout.*'1.1'.*Remove it"),
])
def test_refusals_name_the_fix(net, match):
    with pytest.raises(ValueError, match=match):
        check_network(net)
    with pytest.raises(ValueError, match=match):
        ntk_layout(net)


def test_a_body_without_flatten_is_refused_with_the_shapes():
    net = nn.Sequential(nn.Unflatten(1, (1, 6)), nn.Conv1d(1, 2, 3), nn.Linear(4, 1))
    layout = ntk_layout(net)
    with pytest.raises(ValueError, match=r"shape \(2, 4\) per row.*takes 4 features.*Flatten"):
        layout.features(torch.zeros(1, layout.n_hidden), torch.zeros(3, 6))


def test_the_fast_path_is_taken_for_plain_mlps_only():
    assert is_fast_mlp(build_mlp(3, 1, (8, 8), "gelu"))
    assert is_fast_mlp(build_mlp(3, 1, (), "gelu"))
    net = build_mlp(3, 1, (8,), "gelu")
    assert not is_fast_mlp(nn.Sequential(net[0], Wrapped(net[1]), net[2]))
    assert not is_fast_mlp(nn.Sequential(net[0], nn.GELU(approximate="tanh"), nn.Linear(8, 8),
                                         nn.GELU(), nn.Linear(8, 1)))
    assert not is_fast_mlp(nn.Sequential(nn.Linear(3, 8, bias=False), nn.ReLU(),
                                         nn.Linear(8, 1)))


def test_the_family_refuses_before_sampling():
    net = nn.Sequential(nn.Linear(2, 4), nn.Dropout(0.5), nn.Linear(4, 1))
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.3]), None, 5, network=net)
    batch = {"x": torch.zeros(5, 2, dtype=F64), "y": torch.zeros(5, 1, dtype=F64)}
    params = init_params(net, 2, torch.Generator().manual_seed(0), device="cpu", dtype=F64)
    with pytest.raises(ValueError, match="Dropout"):
        prior_draws(problem, batch, params, torch.Generator(), sigma_w=1.0, sigma_b=0.1,
                    sigma_w_out=1.0, sigma_b_out=0.1, reparametrize=True,
                    marginalize_readout=False)
    with pytest.raises(ValueError, match="Dropout"):
        pcnl.build(problem, step_size=0.1).init(params, batch)


def test_a_conv1d_body_runs_through_the_familys_run_policy():
    """pCNL on a sampled Conv1d body with a learned noise, through the family's run policy:
    every network parameter drawn (the fixed ones at the network's values), real accepts and
    rejects, finite predictions."""
    from skfbnn.device import cpu_threads
    from skfbnn.inference.mh.policy import run_accept_reject

    net = _conv_net()
    g = torch.Generator().manual_seed(4)
    X = torch.randn(30, 12, generator=g, dtype=F64)
    y = torch.stack([X[:, :3].sum(1).sin(), X[:, 6:].mean(1)], 1)
    problem = BayesProblem(make_forward(net), GaussianLikelihood(None), None, len(X),
                           network=net)
    ntk = dict(SIGMAS, reparametrize=True, marginalize_readout=False)
    hyper = dict(ntk, n_chains=2, n_burnin=30, n_samples=5, thinning=2, step_size=0.1,
                 adapt_step_size=True, target_accept=0.5)
    params = {name: torch.zeros(2, *p.shape, dtype=F64) for name, p in net.named_parameters()}
    params.update(problem.likelihood.init_params(2, 2, "cpu", F64))
    transform = pcnl.build(problem, step_size=0.1, **ntk)
    with cpu_threads(torch.device("cpu")):  # one thread, as a fit runs
        result = run_accept_reject(transform, params, X, y, g, hyper, problem=problem)
    assert sorted(result.draws) == sorted(params)
    assert all(v.shape[:2] == (2, 5) for v in result.draws.values())
    torch.testing.assert_close(result.draws["4.weight"], torch.ones(2, 5, 2, dtype=F64))
    assert 0.0 < float(result.trace["accepted"].mean()) < 1.0
    f = make_forward(net.double())({k: v.flatten(0, 1) for k, v in result.draws.items()
                                    if k != "log_noise"}, X)
    assert f.shape == (10, 30, 2) and bool(torch.isfinite(f).all())


def test_folded_body_equals_vmap_body():
    """A body of convolutions and GroupNorm (its affine parameters held fixed) runs with the
    chains folded into the channel groups; the features and their gradients are vmap's."""
    from skfbnn.nn.zoo import CNN2d

    net = CNN2d(36, 3, channels=4)
    with torch.no_grad():
        net.norm0.weight.uniform_(0.5, 1.5)
        net.norm1.bias.uniform_(-0.5, 0.5)
    folded = BodyLayout(net, **SIGMAS, input_shape=(1, 6, 6))
    assert folded._plan is not None and set(folded.fixed) == {
        "norm0.weight", "norm0.bias", "norm1.weight", "norm1.bias"}
    reference = BodyLayout(net, **SIGMAS, input_shape=(1, 6, 6))
    reference._plan = None
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, folded.n_hidden, generator=g, dtype=F64, requires_grad=True)
    X = torch.randn(5, 36, generator=g, dtype=F64)
    got, want = folded.features(hidden, X), reference.features(hidden, X)
    _close(got, want)
    _close(torch.autograd.grad(got.sin().sum(), hidden)[0],
           torch.autograd.grad(want.sin().sum(), hidden)[0])
