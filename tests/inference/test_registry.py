"""Kernel-level harness: every registered method on a conjugate Gaussian problem.

Each method is built exactly as the estimators build it (its family's
step-size arguments and its module's ``HYPER`` defaults) on Bayesian linear
regression with a small hidden layer, stepped a few times, and checked for
finite info, purity of ``update`` and identical output for identical seeds.
"""

from __future__ import annotations

import inspect

import pytest
import torch

from skfbnn.inference.families import FAMILIES
from skfbnn.inference.objective import make_log_posterior
from skfbnn.inference.registry import METHODS, POSTERIOR_KINDS, PRIOR_KINDS, MethodSpec
from skfbnn.inference.types import BayesProblem, Transform
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.posterior import POSTERIORS
from skfbnn.priors.functional import FunctionalPrior, FunctionPrior
from skfbnn.priors.gp import GPPrior, make_kernel
from skfbnn.priors.measurement import MeasurementSampler
from skfbnn.priors.weight import WeightPrior

F64 = torch.float64


def _problem(prior: str, X: torch.Tensor):
    net = build_mlp(2, 1, (4,), "tanh")
    if prior == "ntk":  # the MH samplers: standard-normal NTK entries, no prior object
        network_prior = None
    elif prior == "weight":
        network_prior = WeightPrior(1.0)
    else:
        gp = GPPrior(make_kernel("rbf", X, 1), 1, constant_mean=False)
        network_prior = FunctionPrior(FunctionalPrior(gp, MeasurementSampler(X, 5, 0.4, 0.1), 0.1))
    likelihood = GaussianLikelihood([0.3])
    return net, BayesProblem(make_forward(net), likelihood, network_prior, len(X),
                             network=net)


def _defaults(spec: MethodSpec) -> dict:
    family = FAMILIES[spec.family]
    hyper = {p.name: p.default for p in (*family.params, *spec.module.HYPER)}
    if spec.family == "sgmcmc":
        hyper["step_size"] = next(p.default for p in spec.module.HYPER if p.name == "step_size")
    return hyper


def _steps(name: str, seed: int, n_steps: int = 3):
    spec = METHODS[name]
    family = FAMILIES[spec.family]
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(8, 2, generator=torch.Generator().manual_seed(0), dtype=F64)
    y = torch.sin(X[:, :1])
    net, problem = _problem(spec.prior, X)
    hyper = _defaults(spec)
    transform = spec.build(problem, **{**{h: hyper[h] for h in spec.hyper},
                                       **family.build_kwargs(hyper, len(X))})
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    batch = {"x": X, "y": y, "measure": None}
    if spec.prior == "function":
        batch["measure"] = problem.prior.draw_measure(gen)
    states, infos = [transform.init(params, batch, gen)], []
    for _ in range(n_steps):
        state, info = transform.update(states[-1], batch, gen)
        states.append(state)
        infos.append(info)
    return transform, params, batch, problem, states, infos


def test_registry_lines_name_family_prior_and_posterior():
    assert {"sgld", "fsgld", "sghmc", "fsghmc", "bbb", "ensemble"} <= set(METHODS)
    for spec in METHODS.values():
        assert isinstance(spec, MethodSpec)
        assert spec.family in FAMILIES and spec.prior in PRIOR_KINDS
        assert spec.posterior in POSTERIOR_KINDS
        assert spec.posterior == "linearized" or spec.posterior in POSTERIORS


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_declares_its_hyperparameters(name):
    spec = METHODS[name]
    signature = inspect.signature(spec.build)
    policy = {p.name for p in FAMILIES[spec.family].params}
    for p in spec.module.HYPER:  # a run-policy entry (BBB's n_iter) is the run's, not build's
        assert (p.name in signature.parameters) != (p.name in policy), p.name
        assert (p.name in spec.hyper) == (p.name not in policy)
        assert p.doc.startswith(f"{p.name} : ")
    assert "problem" in signature.parameters


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_steps_purely_with_finite_info(name):
    transform, params, batch, problem, states, infos = _steps(name, seed=1)
    assert isinstance(transform, Transform)
    assert [s.step for s in states] == [0, 1, 2, 3]
    for info in infos:
        for field, value in zip(info._fields, info, strict=True):
            assert value.shape == (3,), field
            assert torch.isfinite(value).all(), field
    for k, v in params.items():  # update is pure: the starting params are untouched
        assert torch.equal(states[0].params[k], v)
        assert states[-1].params[k].shape == v.shape
        assert not torch.equal(states[-1].params[k], v)
    if METHODS[name].family == "sgmcmc":  # the info is the log posterior at the pre-step point
        torch.testing.assert_close(infos[0].log_post,
                                   make_log_posterior(problem)(states[0].params, batch))


@pytest.mark.parametrize("name", sorted(METHODS))
def test_identical_seeds_give_identical_output(name):
    *_, states_a, infos_a = _steps(name, seed=5)
    *_, states_b, infos_b = _steps(name, seed=5)
    *_, states_c, _ = _steps(name, seed=6)
    for k in states_a[-1].params:
        assert torch.equal(states_a[-1].params[k], states_b[-1].params[k])
    for a, b in zip(infos_a, infos_b, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert any(not torch.equal(states_a[-1].params[k], states_c[-1].params[k])
               for k in states_a[-1].params)


@pytest.mark.parametrize("name", [n for n, s in METHODS.items()
                                  if s.prior == "function" and s.family == "sgmcmc"])
def test_functional_variant_shares_build_with_weight_space_twin(name):
    twin = name[1:]
    assert twin in METHODS
    spec, twin_spec = METHODS[name], METHODS[twin]
    assert twin_spec.prior == "weight"
    assert spec.build is twin_spec.build
    assert spec.hyper == twin_spec.hyper
