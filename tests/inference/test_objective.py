"""``skfbnn.inference.objective``: a problem's log posterior takes the weight prior's gradient
in closed form, and gives autograd's numbers."""

from __future__ import annotations

import pytest
import torch

from skfbnn.inference.objective import (
    ProblemLogPosterior,
    _autograd_grad_and_value,
    grad_and_value,
    make_log_posterior,
)
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import CategoricalLikelihood, GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.weight import HierarchicalWeightPrior, WeightPrior

CPU = torch.device("cpu")


def _problem(prior, likelihood, activation: str, dtype):
    gen = torch.Generator().manual_seed(0)
    n_out = 3 if isinstance(likelihood, CategoricalLikelihood) else 2
    net = build_mlp(4, n_out, (16, 8), activation)
    params = init_params(net, 3, gen, device=CPU, dtype=dtype)
    if isinstance(likelihood, GaussianLikelihood):
        params.update(likelihood.init_params(3, 2, CPU, dtype))
    x = torch.randn(40, 4, generator=gen, dtype=dtype)
    y = (torch.randint(0, 3, (40,), generator=gen) if n_out == 3
         else torch.randn(40, 2, generator=gen, dtype=dtype))
    return BayesProblem(make_forward(net), likelihood, prior, 200), params, {"x": x, "y": y}


def _priors(params):
    ard = HierarchicalWeightPrior(ard=True)
    ard.resample(params, torch.Generator().manual_seed(2))  # precisions of their own
    return {"isotropic": WeightPrior(0.7), "learn": HierarchicalWeightPrior(),
            "ard": ard}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["isotropic", "learn", "ard"])
@pytest.mark.parametrize("likelihood, activation", [
    (GaussianLikelihood(), "tanh"),  # the fused tanh path, the learned noise
    (GaussianLikelihood(noise_std=[0.3, 0.5]), "gelu"),
    (CategoricalLikelihood(), "relu"),
])
def test_the_closed_form_prior_gives_autograds_gradient_and_value(dtype, kind, likelihood,
                                                                   activation):
    """Bit for bit: the gradient of every parameter and the value per chain, against
    autograd of the whole log posterior (the prior's ``-lambda w`` is the same product
    autograd forms as ``(-lambda / 2) (2 w)``)."""
    problem, params, batch = _problem(None, likelihood, activation, dtype)
    problem.prior = _priors(params)[kind]
    log_posterior = make_log_posterior(problem)
    assert isinstance(log_posterior, ProblemLogPosterior) and log_posterior.prior_grad
    grads, value = grad_and_value(log_posterior, params, batch)
    plain_grads, plain_value = _autograd_grad_and_value(log_posterior, params, batch)
    assert grads.keys() == plain_grads.keys()
    for key in grads:
        torch.testing.assert_close(grads[key], plain_grads[key], rtol=0, atol=0, msg=key)
    torch.testing.assert_close(value, plain_value, rtol=0, atol=0)
    torch.testing.assert_close(value, log_posterior(params, batch), rtol=0, atol=0)
    assert not any(v.requires_grad for v in grads.values()) and not value.requires_grad


def test_a_prior_without_a_closed_form_goes_through_autograd():
    problem, params, batch = _problem(None, GaussianLikelihood(), "tanh", torch.float64)
    problem.prior = type("Plain", (), {"log_prob": lambda self, p, f=None, m=None:
                                       sum(-v.pow(2).sum((1, 2)) for k, v in p.items()
                                           if k.endswith("weight"))})()
    log_posterior = make_log_posterior(problem)
    assert log_posterior.prior_grad is None
    grads, value = grad_and_value(log_posterior, params, batch)
    for key in ("0.weight", "2.weight"):
        plain = _autograd_grad_and_value(log_posterior, params, batch)[0][key]
        torch.testing.assert_close(grads[key], plain, rtol=0, atol=0)
