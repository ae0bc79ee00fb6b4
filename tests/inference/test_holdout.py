"""Held-out rows per member, best-state checkpointing and the held-out noise
(skfbnn.inference.holdout)."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from skfbnn.inference.holdout import (
    BestOnHeldOut,
    calibrated_log_noise,
    gaussian_fit_score,
    split_rows,
)
from skfbnn.inference.run import MinibatchStream
from skfbnn.inference.types import BayesProblem

F64 = torch.float64


def test_pool_restricts_each_chains_minibatches():
    gen = torch.Generator().manual_seed(0)
    held_out, pool = split_rows(30, 3, 0.2, gen, torch.device("cpu"))
    assert held_out.shape == (3, 6) and pool.shape == (3, 24)
    assert not torch.equal(held_out[0], held_out[1])  # each member its own rows
    stream = MinibatchStream(30, 3, 5, gen, pool)
    seen = [set() for _ in range(3)]
    for _ in range(20):
        idx = stream.next()
        assert idx.shape == (3, 5)
        for c in range(3):
            seen[c] |= set(idx[c].tolist())
    for c in range(3):
        assert seen[c] == set(pool[c].tolist())  # all training rows, no held-out row
    assert torch.equal(MinibatchStream(30, 3, 64, gen, pool).next(), pool)  # full batch


class _State(NamedTuple):
    params: dict


def test_best_on_held_out_keeps_each_members_best_parameters():
    # f = w for every point; held-out targets 3 for member 0 and 7 for member 1
    problem = BayesProblem(
        lambda p, x: p["w"].view(-1, 1, 1).expand(-1, x.shape[1], 1),
        log_likelihood=lambda f, y, p: -((f - y) ** 2).sum((1, 2)),
    )
    X = torch.zeros(10, 1, dtype=F64)
    y = torch.tensor([3.0] * 5 + [7.0] * 5, dtype=F64).unsqueeze(1)
    held_out = torch.tensor([[0, 1], [5, 6]])
    monitor = BestOnHeldOut(problem, X, y, held_out, n_steps=10)
    for step in range(10):  # w climbs 0, 1, ..., 9 for both members
        monitor(step, _State({"w": torch.full((2,), float(step), dtype=F64)}))
    assert monitor.best["w"].tolist() == [3.0, 7.0]
    assert monitor.best_step.tolist() == [4, 8]


def test_calibrated_noise_of_one_draw_is_the_root_mean_squared_residual():
    """The Gaussian maximum-likelihood noise, per set and per output. The tolerance is the
    golden-section search's floor: at the flat optimum comparisons of float64 scores tell
    arguments apart only to about sqrt(machine epsilon), 1.5e-8, times a few."""
    gen = torch.Generator().manual_seed(0)
    f = torch.randn(2, 1, 50, 3, generator=gen, dtype=F64)
    y = f[:, 0] + torch.tensor([0.1, 1.0, 7.0], dtype=F64) * torch.randn(2, 50, 3, generator=gen,
                                                                        dtype=F64)
    rms = (y - f[:, 0]).pow(2).mean(1).sqrt()
    torch.testing.assert_close(calibrated_log_noise(f, y).exp(), rms, rtol=1e-6, atol=0)


def _brute_force_score(f, y, log_std):
    """Mean held-out log-likelihood of the draw mixture, by torch.distributions."""
    lp = torch.distributions.Normal(f, math.exp(log_std)).log_prob(y.unsqueeze(1))
    return float((torch.logsumexp(lp, dim=1) - math.log(f.shape[1])).mean())


def test_calibrated_noise_of_a_mixture_maximises_the_held_out_log_likelihood():
    gen = torch.Generator().manual_seed(1)
    f = 0.4 * torch.randn(1, 20, 30, 1, generator=gen, dtype=F64)  # spread draws
    y = 0.3 * torch.randn(1, 30, 1, generator=gen, dtype=F64)
    got = float(calibrated_log_noise(f, y))
    grid = torch.linspace(-6, 2, 8001, dtype=F64).tolist()  # step 1e-3
    scores = [_brute_force_score(f, y, g) for g in grid]
    best = grid[max(range(len(grid)), key=scores.__getitem__)]
    assert abs(got - best) <= 1e-3
    assert _brute_force_score(f, y, got) >= max(scores) - 1e-12
    # with draws this spread the mixture needs less noise than the residual around the mean
    assert math.exp(got) < float((y - f.mean(1)).pow(2).mean().sqrt())


def test_calibrated_noise_is_equivariant_to_the_units_of_y():
    gen = torch.Generator().manual_seed(2)
    f = torch.randn(1, 8, 25, 1, generator=gen, dtype=F64)
    y = torch.randn(1, 25, 1, generator=gen, dtype=F64)
    torch.testing.assert_close(calibrated_log_noise(3 * f, 3 * y),
                               calibrated_log_noise(f, y) + math.log(3), rtol=0, atol=1e-6)


def test_a_checkpoint_by_the_fit_score_ignores_the_noise_learned_at_the_time():
    """The log density would prefer the state with the wider noise (step 0); the fit score,
    which lets the noise be fitted afterwards, keeps the state that fits better (step 1),
    and ``keep`` decides what is stored."""
    problem = BayesProblem(
        lambda p, x: p["w"].view(-1, 1, 1).expand(-1, x.shape[1], 1),
        log_likelihood=lambda f, y, p: torch.distributions.Normal(
            f, p["log_noise"].exp().view(-1, 1, 1)).log_prob(y).sum((1, 2)),
    )
    X, y = torch.zeros(4, 1, dtype=F64), torch.tensor([[1.0], [-1.0], [1.0], [-1.0]], dtype=F64)
    states = [_State({"w": torch.tensor([0.5], dtype=F64), "log_noise": torch.tensor([1.0])}),
              _State({"w": torch.tensor([0.0], dtype=F64), "log_noise": torch.tensor([-3.0])})]
    by_density = BestOnHeldOut(problem, X, y, torch.tensor([[0, 1, 2, 3]]), n_steps=2)
    by_fit = BestOnHeldOut(problem, X, y, torch.tensor([[0, 1, 2, 3]]), n_steps=2,
                           keep=lambda s: {"w": s.params["w"]}, score=gaussian_fit_score)
    for step, state in enumerate(states):
        by_density(step, state)
        by_fit(step, state)
    assert by_density.best_step.tolist() == [1] and by_fit.best_step.tolist() == [2]
    assert set(by_fit.best) == {"w"} and by_fit.best["w"].item() == 0.0
    torch.testing.assert_close(by_fit.best_score, torch.zeros(1, dtype=F64))  # -log MSE, MSE 1


def test_calibrate_heads_scores_each_member_with_the_members_spread():
    """Each member's floor is fitted on its own held-out rows with the variance of all the
    members' means at those rows as the spread (a loop over members, by hand)."""
    from skfbnn.inference.holdout import calibrate_heads
    from skfbnn.likelihoods import (
        VARIANCE_FLOOR_KEY,
        HeteroscedasticGaussianLikelihood,
        calibrated_variance_floor,
    )
    from skfbnn.nn.functional import init_params, make_forward
    from skfbnn.nn.mlp import build_mlp

    gen = torch.Generator().manual_seed(0)
    C, n = 4, 30
    net = build_mlp(2, 2, (8,), "tanh")
    likelihood = HeteroscedasticGaussianLikelihood()
    problem = BayesProblem(make_forward(net), likelihood, None, 100)
    params = {k: 3.0 * v for k, v in  # members far apart: a spread of the heads' size
              init_params(net, C, gen, device=torch.device("cpu"), dtype=F64).items()}
    x = torch.randn(C, n, 2, generator=gen, dtype=F64)
    y = 3.0 * torch.randn(C, n, 1, generator=gen, dtype=F64)  # far noisier than the heads
    floor = calibrate_heads(params, problem, x, y)[VARIANCE_FLOOR_KEY]
    mean, var = likelihood.split(problem.forward(params, x))
    spread = torch.stack([
        likelihood.split(problem.forward(params, x[c].expand(C, n, 2)))[0].var(0, unbiased=False)
        for c in range(C)])
    expected = calibrated_variance_floor(mean, var, y, spread=spread)
    torch.testing.assert_close(floor, expected)
    assert bool((floor > 0).all())
    without = calibrated_variance_floor(mean, var, y)  # on the grid: equal or lower
    assert bool((floor <= without).all()) and bool((floor < without).sum() >= 2)
