"""Tests for skfbnn.inference.registry: every method builds and steps."""

from __future__ import annotations

import inspect
import math

import pytest
import torch

from skfbnn.inference.objective import make_log_posterior
from skfbnn.inference.registry import METHODS, MethodSpec
from skfbnn.inference.schedules import make_schedule
from skfbnn.inference.types import BayesProblem, Transform
from skfbnn.likelihoods import gaussian_log_likelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.functional import FunctionalPrior
from skfbnn.priors.gp import GPPrior, make_kernel
from skfbnn.priors.measurement import MeasurementSampler
from skfbnn.priors.weight import isotropic_log_prior

F64 = torch.float64


def _problem(prior: str, X: torch.Tensor) -> BayesProblem:
    net = build_mlp(2, 1, (4,), "tanh")
    log_noise = torch.tensor([math.log(0.3)], dtype=F64)
    if prior == "weight":
        log_prior = lambda p, f_m, m: isotropic_log_prior(p, 1.0)
    else:
        log_prior = lambda p, f_m, m: FunctionalPrior.log_prob(f_m, m)
    return net, BayesProblem(
        forward=make_forward(net),
        log_likelihood=lambda f, y, p: gaussian_log_likelihood(f, y, log_noise),
        log_prior=log_prior,
        n_data=len(X),
    )


def test_registry_lists_the_four_methods():
    assert set(METHODS) == {"sgld", "fsgld", "sghmc", "fsghmc"}
    assert all(isinstance(spec, MethodSpec) for spec in METHODS.values())
    assert all(spec.prior in ("weight", "function") and spec.step_size > 0
               for spec in METHODS.values())


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_builds_a_transform_that_steps(name):
    spec = METHODS[name]
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(8, 2, generator=gen, dtype=F64)
    y = torch.sin(X[:, :1])
    net, problem = _problem(spec.prior, X)
    # the registered hyperparameters are keyword arguments of build
    signature = inspect.signature(spec.build)
    assert all(h in signature.parameters for h in spec.hyper)
    transform = spec.build(problem, step_size=make_schedule("constant", 1e-3, 10))
    assert isinstance(transform, Transform)
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    state = transform.init(params)
    batch = {"x": X, "y": y, "measure": None}
    if spec.prior == "function":
        gp = GPPrior(make_kernel("rbf", X, 1), 1, constant_mean=False)
        batch["measure"] = FunctionalPrior(gp, MeasurementSampler(X, 5, 0.4, 0.1), 0.1).draw(gen)
    new_state, info = transform.update(state, batch, gen)
    assert new_state.step == 1 and state.step == 0
    assert info.log_post.shape == (3,) and torch.isfinite(info.log_post).all()
    torch.testing.assert_close(info.log_post, make_log_posterior(problem)(params, batch))
    for k, v in params.items():
        assert new_state.params[k].shape == v.shape
        assert not torch.equal(new_state.params[k], v)
        assert torch.equal(state.params[k], v)  # update is pure
    # a second step runs from the new state
    newer, info2 = transform.update(new_state, batch, gen)
    assert newer.step == 2 and torch.isfinite(info2.log_post).all()


@pytest.mark.parametrize("name", [n for n, s in METHODS.items() if s.prior == "function"])
def test_functional_variant_shares_build_with_weight_space_twin(name):
    twin = name[1:]
    assert twin in METHODS
    spec, twin_spec = METHODS[name], METHODS[twin]
    assert twin_spec.prior == "weight"
    assert spec.build is twin_spec.build
    assert spec.hyper == twin_spec.hyper
