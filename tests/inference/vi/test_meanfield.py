"""The mean-field machinery shared by BBB, fBNN and ifBNN: draws and the noise floor."""

from __future__ import annotations

import math

import torch

from skfbnn.inference.types import BayesProblem
from skfbnn.inference.vi.meanfield import draw, floor_noise, init, noise_floor
from skfbnn.likelihoods import CategoricalLikelihood, GaussianLikelihood
from skfbnn.priors.functional import FunctionalPrior, FunctionPrior

F64 = torch.float64


class _GP:
    noise_std = torch.tensor([0.2, 0.5], dtype=F64)


def _problem(likelihood):
    return BayesProblem(lambda p, x: x, likelihood,
                        FunctionPrior(FunctionalPrior(_GP(), None, 0.0)), 10)


def test_the_noise_floor_is_the_gp_noise_for_learned_regression_noise_only():
    floor = noise_floor(_problem(GaussianLikelihood(None)), "gp")
    torch.testing.assert_close(floor, torch.log(_GP.noise_std))
    assert noise_floor(_problem(GaussianLikelihood([0.3, 0.3])), "gp") is None  # fixed noise
    assert noise_floor(_problem(CategoricalLikelihood()), "gp") is None
    assert noise_floor(_problem(GaussianLikelihood(None)), None) is None


def test_floor_noise_raises_only_what_is_below():
    params = {"w": torch.zeros(3, 2, dtype=F64),
              "log_noise": torch.log(torch.tensor([[0.1, 0.9]] * 3, dtype=F64))}
    state = floor_noise(init(params), torch.log(_GP.noise_std))
    got = state.mean["log_noise"].exp()
    torch.testing.assert_close(got, torch.tensor([[0.2, 0.9]] * 3, dtype=F64))
    torch.testing.assert_close(state.mean["w"], params["w"])


def test_draws_are_mean_plus_scale_times_noise_and_point_estimates_repeat():
    mean = {"w": torch.ones(2, 3, dtype=F64), "log_noise": torch.zeros(2, 1, dtype=F64)}
    std = {"w": torch.full((2, 3), 0.5, dtype=F64)}
    d = draw(mean, std, torch.Generator().manual_seed(0), 4000)
    assert d["w"].shape == (8000, 3) and d["log_noise"].shape == (8000, 1)
    assert bool((d["log_noise"] == 0).all())
    assert abs(float(d["w"].std()) - 0.5) < 5 * 0.5 / math.sqrt(2 * 24000)
