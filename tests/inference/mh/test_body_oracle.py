"""Sampling oracles of the generic (any Sequential ending in Linear) path, at the
inference level (problems built by hand, fixed seeds, MCSE z-scores).

* Equivalence: the built-in MLP with its activations wrapped in a user module goes
  through the generic path and gives the fast path's draws, in float64, for pCN and pCNL.
* A body of fixed features (a convolution with a fixed kernel, a buffer): the network is
  linear in its parameters, and pCN and pCNL draws match the closed-form linear-Gaussian
  posterior of the NTK-scaled readout.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
from torch import nn

from skfbnn.device import cpu_threads
from skfbnn.diagnostics import ess_mean
from skfbnn.inference.mh import build as mh_build
from skfbnn.inference.mh import mala, pcn, pcnl
from skfbnn.inference.mh.body import BodyLayout
from skfbnn.inference.mh.kernel import adapt_step
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp

from .._harness import z_critical
from .test_body import FixedConv

F64 = torch.float64
NTK = dict(sigma_w=math.sqrt(2.0), sigma_b=0.1, sigma_w_out=1.0, sigma_b_out=0.1)
METHODS = {"pcn": pcn, "pcnl": pcnl, "mala": mala}


class Wrapped(nn.Module):
    """An activation inside a user module: the network is no longer a plain MLP."""

    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x)


def _problem(net, X, noise_std):
    lik = GaussianLikelihood(None if noise_std is None else [noise_std])
    return BayesProblem(make_forward(net), lik, None, len(X), network=net)


def _chains(net, X, y, method, **kw):
    """Prior draws, then ``n_steps`` steps (the first ``burnin`` adapting the step): the
    parameters every ``thinning`` steps after burn-in and the acceptances, on one thread
    as a fit runs (:func:`skfbnn.device.cpu_threads`)."""
    with cpu_threads(torch.device("cpu")):
        return _run(net, X, y, method, **kw)


def _run(net, X, y, method, *, noise_std, n_chains, n_steps, step, seed=0, burnin=0,
         thinning=1, target_accept=None, reparametrize=True, marginalize_readout=False):
    problem = _problem(net, X, noise_std)
    batch = {"x": X, "y": y}
    gen = torch.Generator().manual_seed(seed)
    params = init_params(net, n_chains, gen, device="cpu", dtype=F64)
    params.update(problem.likelihood.init_params(n_chains, y.shape[1], "cpu", F64))
    ntk = dict(NTK, reparametrize=reparametrize, marginalize_readout=marginalize_readout)
    params = mh_build.prior_draws(problem, batch, params, gen, **ntk)
    transform = METHODS[method].build(problem, step_size=step, **ntk)
    state = transform.init(params, batch, gen)
    assert isinstance(state.target.layout, BodyLayout) == (not _plain(net))
    draws, accepted = [], []
    for i in range(n_steps):
        state, info = transform.update(state, batch, gen)
        if i < burnin:
            state = adapt_step(state, info, i, target_accept=target_accept)
            continue
        accepted.append(info.accepted)
        if (i + 1 - burnin) % thinning == 0:
            draws.append(state.params)
    return draws, torch.stack(accepted)


def _plain(net):
    return not any(isinstance(m, (Wrapped, FixedConv)) for m in net)


@pytest.mark.parametrize("method, noise_std, marginalize", [
    ("pcn", 0.3, False), ("pcn", None, True), ("pcnl", 0.3, False), ("pcnl", None, True),
    ("mala", 0.3, False),
])
def test_the_mlp_through_the_generic_path_gives_the_fast_paths_draws(monkeypatch, method,
                                                                     noise_std, marginalize):
    monkeypatch.setattr(mh_build, "FEATURES_DTYPE", F64)  # both paths in float64
    net = build_mlp(2, 1, (8, 8), "gelu")
    wrapped = nn.Sequential(*(m if isinstance(m, nn.Linear) else Wrapped(m) for m in net))
    g = torch.Generator().manual_seed(0)
    X = torch.randn(20, 2, generator=g, dtype=F64)
    y = X[:, :1].sin() + 0.3 * torch.randn(20, 1, generator=g, dtype=F64)
    kw = dict(noise_std=noise_std, n_chains=3, n_steps=40, step=0.02 if method == "mala" else 0.3,
              marginalize_readout=marginalize)
    fast, fast_acc = _chains(net, X, y, method, **kw)
    generic, generic_acc = _chains(wrapped, X, y, method, **kw)
    assert 0.0 < float(fast_acc.mean()) < 1.0  # both branches of the accept/reject step
    assert torch.equal(fast_acc, generic_acc)
    for a, b in zip(fast, generic, strict=True):
        assert list(a) == list(b)
        for key in a:
            torch.testing.assert_close(b[key], a[key], rtol=1e-10, atol=1e-12)


SIGMA, LENGTH, WIDTH = 0.5, 6, 4
KERNEL = torch.tensor([[[0.8, -0.4, 0.3, 0.5, -0.6]], [[-0.3, 0.9, 0.2, -0.7, 0.4]]], dtype=F64)


def _fixed_features(Z, readout_scale=None):
    """The NTK-scaled readout features ``[sigma_w_out / sqrt(h) tanh(conv(z)), sigma_b_out]``
    written out in NumPy (``readout_scale``: the factor in front, for the negative control;
    default ``1 / sqrt(WIDTH)``)."""
    readout_scale = 1.0 / math.sqrt(WIDTH) if readout_scale is None else readout_scale
    k = KERNEL.numpy()[:, 0]
    n_pos = LENGTH - k.shape[1] + 1
    conv = np.array([[[z[j:j + k.shape[1]] @ k[c] for j in range(n_pos)]
                      for c in range(k.shape[0])] for z in Z]).reshape(len(Z), -1)
    return np.column_stack([readout_scale * np.tanh(conv), np.full(len(Z), 0.1)])


def _exact(X, y, Z, **kw):
    """Posterior predictive mean and variance of ``f = Psi theta``, ``theta ~ N(0, I)``."""
    P = _fixed_features(X, **kw)
    cov = np.linalg.inv(np.eye(P.shape[1]) + P.T @ P / SIGMA**2)
    mu = cov @ P.T @ y / SIGMA**2
    Q = _fixed_features(Z, **kw)
    return Q @ mu, np.einsum("ij,jk,ik->i", Q, cov, Q)


def _z_scores(f, mean, var):
    """MCSE z-scores of the mean and second central moment at each point; ``f`` is
    (n_chains, n_draws, n_points)."""
    z = []
    for i in range(f.shape[-1]):
        for stat, target in ((f[..., i] - mean[i], 0.0), ((f[..., i] - mean[i]) ** 2, var[i])):
            z.append((stat.mean() - target) / (stat.std() / math.sqrt(ess_mean(stat))))
    return np.array(z)


@functools.cache
def _fixed_feature_draws(method, reparametrize):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, LENGTH))
    y = np.tanh(X[:, 1] - X[:, 3]) + SIGMA * rng.normal(size=25)
    Z = rng.normal(size=(3, LENGTH)) * 1.5
    net = nn.Sequential(nn.Unflatten(1, (1, LENGTH)), FixedConv(KERNEL), nn.Tanh(),
                        nn.Flatten(), nn.Linear(WIDTH, 1))
    if reparametrize:  # the target is N(0, I) itself: every proposal accepted, and with
        kw = dict(n_steps=400, step=1.0)  # beta = 1 the draws are independent
    else:  # a Gaussian likelihood in theta itself: a real accept/reject chain
        kw = dict(n_steps=3000, step=0.5, burnin=500, thinning=5,
                  target_accept=0.25 if method == "pcn" else 0.5)
    draws, accepted = _chains(net, torch.as_tensor(X), torch.as_tensor(y).unsqueeze(-1),
                              method, noise_std=SIGMA, n_chains=4, seed=1,
                              reparametrize=reparametrize, **kw)
    stacked = {key: torch.stack([p[key] for p in draws], 1).flatten(0, 1) for key in draws[0]}
    f = make_forward(net.double())(stacked, torch.as_tensor(Z))[..., 0]
    return f.reshape(4, len(draws), len(Z)).numpy(), accepted, (X, y, Z)


@pytest.mark.parametrize("method", ["pcn", "pcnl"])
@pytest.mark.parametrize("reparametrize", [True, False])
def test_fixed_feature_body_matches_the_linear_gaussian_posterior(method, reparametrize):
    f, accepted, (X, y, Z) = _fixed_feature_draws(method, reparametrize)
    if reparametrize:
        assert float(accepted.min()) == 1.0
    else:
        assert 0.1 < float(accepted.mean()) < 0.9
    mean, var = _exact(X, y, Z)
    z = _z_scores(f, mean, var)
    assert np.abs(z).max() < z_critical(len(z)), z


def test_fixed_feature_oracle_detects_a_wrong_readout_scale():
    """The same draws against an oracle whose features miss the NTK factor 1/sqrt(h)
    (the scale a wrong fan-in would give) must fail."""
    f, _, (X, y, Z) = _fixed_feature_draws("pcn", True)
    mean, var = _exact(X, y, Z, readout_scale=1.0)
    z = _z_scores(f, mean, var)
    assert np.abs(z).max() > z_critical(len(z)), z
