"""The mean-field machinery shared by BBB, fBNN and ifBNN: draws, the noise floor and the
held-out noise."""

from __future__ import annotations

import math

import pytest
import torch

from skfbnn.inference.types import BayesProblem
from skfbnn.inference.vi.meanfield import calibrate_noise, draw, floor_noise, init, noise_floor
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


@pytest.mark.parametrize("n_mc", [1, 3])
def test_draws_are_set_major_in_the_generators_order(n_mc):
    """Draw ``j`` of set ``c`` is row ``c * n_mc + j``: ``mean[c] + std[c] * eps`` with ``eps``
    the generator's next normals in that order."""
    gen = torch.Generator().manual_seed(1)
    mean = {"w": torch.randn(2, 3, 4, generator=gen, dtype=F64)}
    std = {"w": torch.rand(2, 3, 4, generator=gen, dtype=F64)}
    d = draw(mean, std, torch.Generator().manual_seed(0), n_mc)["w"]
    eps = torch.randn(2 * n_mc, 3, 4, generator=torch.Generator().manual_seed(0), dtype=F64)
    for c in range(2):
        for j in range(n_mc):
            assert torch.equal(d[c * n_mc + j], mean["w"][c] + std["w"][c] * eps[c * n_mc + j])


def test_calibrate_noise_raises_the_noise_to_the_held_out_rows_and_keeps_the_weights():
    """A q with (almost) no spread: a smaller noise is raised to the RMS residual of the
    rows given; a larger one stays."""
    problem = BayesProblem(lambda p, x: x * p["w"].view(-1, 1, 1), GaussianLikelihood(None),
                           None, 10)
    params = {"w": torch.tensor([2.0], dtype=F64),
              "log_noise": torch.full((1, 1), math.log(0.1), dtype=F64)}
    state = init(params, init_std=1e-12)
    gen = torch.Generator().manual_seed(0)
    x = torch.linspace(-1, 1, 12, dtype=F64).view(1, 12, 1)
    y = 2 * x + torch.tensor([0.5, -0.5] * 6, dtype=F64).view(1, 12, 1)
    new = calibrate_noise(state, problem, x, y, gen, n_draws=4)
    torch.testing.assert_close(new.mean["log_noise"], torch.full((1, 1), math.log(0.5), dtype=F64))
    assert torch.equal(new.mean["w"], state.mean["w"]) and new.rho is state.rho
    wide = init({**params, "log_noise": torch.zeros(1, 1, dtype=F64)}, init_std=1e-12)
    assert torch.equal(calibrate_noise(wide, problem, x, y, gen, 4).mean["log_noise"],
                       wide.mean["log_noise"])  # 1 > 0.5: not lowered
    plain = init({"w": params["w"]})  # no learned noise: nothing to set
    assert calibrate_noise(plain, problem, x, y, gen, n_draws=4) is plain
