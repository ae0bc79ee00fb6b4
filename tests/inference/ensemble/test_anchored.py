"""Anchored ensembles: exact posterior draws for linear-Gaussian regression (oracle), zero
anchors equal the plain ensemble step for step, pickles, and bad values refused by name."""

from __future__ import annotations

import math
import pickle
from functools import partial

import numpy as np
import pytest
import torch

from skfbnn import DeepEnsembleClassifier, DeepEnsembleRegressor, IFBDEClassifier, IFBDERegressor
from skfbnn.inference.ensemble import anchored, deep_ensemble, ifbde
from skfbnn.inference.families import lr_schedule
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood, HeteroscedasticGaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.jacobian import mlp_jacobian
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.functional import FunctionalPrior, FunctionPrior, MeasurementDraw
from skfbnn.priors.weight import WeightPrior

F64 = torch.float64
CPU = torch.device("cpu")


def _linear_posterior(Phi, y, prior_std, noise):
    """Posterior mean and covariance of the weights (bias last) of Bayesian linear
    regression with prior N(0, prior_std^2 I) and noise std ``noise``."""
    A = torch.eye(Phi.shape[1], dtype=F64) / prior_std**2 + Phi.T @ Phi / noise**2
    cov = torch.linalg.inv(A)
    return cov @ Phi.T @ y / noise**2, cov, A


def test_anchored_linear_members_are_exact_posterior_draws():
    """No hidden layer, fixed noise, anchors plus perturbed targets: the members'
    predictions at three points have the posterior's mean and covariance, within
    Monte-Carlo standard errors (|z| < 4 for each of 3 means and 6 covariances)."""
    C, N, d, s, sigma, steps = 4000, 12, 2, 1.0, 0.4, 3000
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(N, d, generator=gen, dtype=F64)
    y = X @ torch.tensor([[1.0], [-0.5]], dtype=F64) + 0.3 \
        + sigma * torch.randn(N, 1, generator=gen, dtype=F64)
    net = build_mlp(d, 1, (), "identity")
    problem = BayesProblem(make_forward(net), GaussianLikelihood([sigma]), WeightPrior(s), N)
    transform = deep_ensemble.build(problem, learning_rate=lr_schedule("cosine", 0.05, steps),
                                    prior_std=s, anchored=True)
    state = transform.init(init_params(net, C, gen, device=CPU, dtype=F64), None, gen)
    targets = anchored.perturb_targets(y, C, sigma, gen)  # (C, N, 1), fixed
    for _ in range(steps):
        state, _ = transform.update(state, {"x": X, "y": targets, "measure": None}, gen)
    p = state.params
    w = torch.cat([p["0.weight"][:, 0], p["0.bias"]], dim=1)  # (C, d + 1)
    Phi = torch.cat([X, torch.ones(N, 1, dtype=F64)], dim=1)
    mean, cov, A = _linear_posterior(Phi, y, s, sigma)
    # each member is its own randomised MAP (optimisation converged)
    anchor = torch.cat([p["anchor.0.weight"][:, 0], p["anchor.0.bias"]], dim=1)
    rhs = anchor / s**2 + (targets[..., 0] @ Phi) / sigma**2
    exact = torch.linalg.solve(A, rhs.T).T
    assert float((w - exact).abs().max()) < 1e-3 * float(cov.diagonal().sqrt().min())
    # the members' predictions: a Monte-Carlo sample of the posterior predictive
    Z = torch.tensor([[0.0, 0.0, 1.0], [1.5, -1.0, 1.0], [-2.0, 2.0, 1.0]], dtype=F64)
    f = w @ Z.T  # (C, 3)
    m, S = (Z @ mean)[:, 0], Z @ cov @ Z.T
    z_mean = (f.mean(0) - m) / (S.diagonal() / C).sqrt()
    S_hat = torch.cov(f.T)
    se = ((S.diagonal()[:, None] * S.diagonal()[None, :] + S**2) / C).sqrt()
    z_cov = ((S_hat - S) / se)[torch.triu_indices(3, 3).unbind()]
    assert float(z_mean.abs().max()) < 4, z_mean
    assert float(z_cov.abs().max()) < 4, z_cov
    # without anchors and perturbations every member is the posterior mean
    assert float(S_hat.diagonal().min()) > 0.5 * float(S.diagonal().min())


def _zero_anchors(state):
    return state._replace(params={k: torch.zeros_like(v) if k.startswith(anchored.PREFIX)
                                  else v for k, v in state.params.items()})


def test_zero_anchors_are_the_deep_ensemble_step_for_step():
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(2, 2, (8,), "tanh")
    problem = BayesProblem(make_forward(net), HeteroscedasticGaussianLikelihood(),
                           WeightPrior(0.7), 20)
    params = init_params(net, 3, gen, device=CPU, dtype=F64)
    schedule = lr_schedule("cosine", 1e-2, 6)
    ours = deep_ensemble.build(problem, learning_rate=schedule, prior_std=0.7, anchored=True)
    theirs = deep_ensemble.build(problem, learning_rate=schedule, prior_std=0.7)
    a = ours.init(params, None, torch.Generator().manual_seed(1))
    assert sorted(k for k in a.params if k.startswith(anchored.PREFIX)) == [
        "anchor.0.bias", "anchor.0.weight", "anchor.2.bias", "anchor.2.weight"]
    a, b = _zero_anchors(a), theirs.init(params)
    for _ in range(6):
        x = torch.randn(3, 8, 2, generator=gen, dtype=F64)
        batch = {"x": x, "y": torch.sin(x[..., :1]), "measure": None}
        a, info_a = ours.update(a, batch, gen)
        b, info_b = theirs.update(b, batch, gen)
        for k in params:
            torch.testing.assert_close(a.params[k], b.params[k], rtol=0, atol=0)
        torch.testing.assert_close(info_a.objective, info_b.objective, rtol=0, atol=0)
    assert all(float(a.params[k].abs().max()) == 0 for k in a.params
               if k.startswith(anchored.PREFIX))  # never moved


def test_zero_anchors_are_ifbde_step_for_step():
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(2, 2, (6,), "tanh")
    problem = BayesProblem(make_forward(net), HeteroscedasticGaussianLikelihood(),
                           FunctionPrior(FunctionalPrior(None, None, 0.1)), 20,
                           jacobian=partial(mlp_jacobian, net))
    params = init_params(net, 3, gen, device=CPU, dtype=F64)
    ours = ifbde.build(problem, learning_rate=lambda t: 1e-2, prior_std=1.0, anchored=True)
    theirs = ifbde.build(problem, learning_rate=lambda t: 1e-2, prior_std=1.0)
    a = _zero_anchors(ours.init(params, None, torch.Generator().manual_seed(1)))
    b = theirs.init(params)
    xm = torch.randn(5, 2, generator=gen, dtype=F64)
    K = torch.exp(-0.5 * torch.cdist(xm, xm).pow(2)) + 0.1 * torch.eye(5, dtype=F64)
    draw = MeasurementDraw(xm, torch.zeros(1, 5, dtype=F64),
                           torch.linalg.cholesky(K).expand(1, 5, 5))
    for _ in range(4):
        x = torch.randn(3, 8, 2, generator=gen, dtype=F64)
        batch = {"x": x, "y": torch.sin(x[..., :1]), "measure": draw}
        a, _ = ours.update(a, batch, gen)
        b, _ = theirs.update(b, batch, gen)
    for k in params:
        torch.testing.assert_close(a.params[k], b.params[k], rtol=0, atol=0)


def test_anchors_pull_members_apart():
    """A member's MAP moves with its anchor: drawn anchors give different members than
    the plain prior from the same start."""
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(1, 1, (), "identity")
    problem = BayesProblem(make_forward(net), GaussianLikelihood([1.0]), WeightPrior(1.0), 1)
    transform = deep_ensemble.build(problem, learning_rate=lambda t: 0.05, prior_std=1.0,
                                    anchored=True)
    params = {k: torch.zeros_like(v) for k, v in
              init_params(net, 2000, gen, device=CPU, dtype=F64).items()}
    state = transform.init(params, None, gen)
    batch = {"x": torch.zeros(1, 1, dtype=F64), "y": torch.zeros(1, 1, dtype=F64)}
    for _ in range(400):
        state, _ = transform.update(state, batch, gen)
    # slope: no data information, the MAP is the anchor (prior std 1)
    assert math.isclose(float(state.params["0.weight"].std()), 1.0, abs_tol=0.05)


FAST = dict(n_iter=40, min_epochs=1, n_estimators=3, hidden_layer_sizes=(8,), device="cpu",
            random_state=0)


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    return X, np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("cls", [DeepEnsembleRegressor, IFBDERegressor])
def test_anchored_fit_is_reproducible_and_pickles(cls):
    X, y = _data()
    est = cls(**FAST, prior_std=3.0, anchored=True).fit(X, y)  # anchors need a weight prior
    assert any(k.startswith(anchored.PREFIX) for k in est.posterior_.members)
    again = cls(**FAST, prior_std=3.0, anchored=True).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), again.predict(X))
    for k, v in est.posterior_.members.items():
        torch.testing.assert_close(v, again.posterior_.members[k], rtol=0, atol=0)
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.predict_std(X, kind="epistemic"),
                                  est.predict_std(X, kind="epistemic"))
    plain = cls(**FAST, prior_std=3.0).fit(X, y)
    assert not any(k.startswith(anchored.PREFIX) for k in plain.posterior_.members)
    assert not np.allclose(plain.predict(X), est.predict(X))


@pytest.mark.parametrize("cls", [DeepEnsembleRegressor, IFBDERegressor])
@pytest.mark.parametrize("value", ["yes", 1.5, None])
def test_bad_anchored_is_refused_by_name(cls, value):
    X, y = _data(12)
    with pytest.raises(ValueError, match="anchored"):
        cls(**FAST, anchored=value).fit(X, y)


@pytest.mark.parametrize("cls", [DeepEnsembleRegressor, IFBDERegressor])
def test_anchored_needs_a_weight_prior(cls):
    X, y = _data(12)
    with pytest.raises(ValueError, match="anchored=True.*prior_std=None"):
        cls(**FAST, anchored=True, prior_std=None).fit(X, y)


@pytest.mark.parametrize("cls", [DeepEnsembleClassifier, IFBDEClassifier])
def test_anchored_classifiers_round_trip(cls):
    X, y = _data()
    labels = np.where(y > 0, "up", "down")
    clf = cls(**FAST, anchored=True).fit(X, labels)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
