"""Run policies: step counts, kept states, the burn-in adaptation hook, traced info."""

from __future__ import annotations

from typing import NamedTuple

import pytest
import torch

from skfbnn.inference.families import FAMILIES, lr_schedule
from skfbnn.inference.optim import adam_init, adam_step
from skfbnn.inference.run import run
from skfbnn.inference.types import Transform

F64 = torch.float64


class _State(NamedTuple):
    params: dict
    log_post: torch.Tensor
    step: int
    scale: float = 1.0


class _Info(NamedTuple):
    log_post: torch.Tensor
    accepted: torch.Tensor
    grad_norm: torch.Tensor


def _transform(seen: list):
    def init(params, batch=None, gen=None):
        seen.append(("init", batch is not None, gen is not None))
        return _State(params, torch.zeros(2, dtype=F64), 0)

    def update(state, batch, gen):
        lp = torch.full((2,), float(state.step), dtype=F64)
        info = _Info(lp, torch.tensor([state.scale, -state.scale], dtype=F64), lp * 2)
        params = {k: v + 1 for k, v in state.params.items()}
        return state._replace(params=params, log_post=lp, step=state.step + 1), info

    return Transform(init, update)


def test_run_traces_every_info_field_and_adapts_only_during_burn_in():
    seen, adapted = [], []

    def adapt(state, info, step):
        adapted.append(step)
        return state._replace(scale=state.scale * 2)

    result = run(_transform(seen), {"w": torch.zeros(2, 3, dtype=F64)}, torch.zeros(6, 2),
                 torch.zeros(6), torch.Generator(), n_steps=10, batch_size=4, n_burnin=4,
                 thinning=3, adapt=adapt)
    assert seen == [("init", True, True)]  # init sees the first batch and the generator
    assert adapted == [0, 1, 2, 3]
    assert set(result.trace) == {"log_post", "accepted", "grad_norm"}
    assert all(v.shape == (10, 2) for v in result.trace.values())
    torch.testing.assert_close(result.trace["grad_norm"], 2 * result.trace["log_post"])
    # the adapted scale is frozen after burn-in: 2**4 from step 4 on
    assert result.trace["accepted"][:, 0].tolist() == [1, 2, 4, 8] + [16] * 6
    assert result.draws["w"].shape == (2, 2, 3)  # steps 6 and 9 kept
    assert result.state.step == 10


def test_optimisation_run_keeps_only_the_final_state():
    result = run(_transform([]), {"w": torch.zeros(2, 3, dtype=F64)}, torch.zeros(6, 2),
                 torch.zeros(6), torch.Generator(), n_steps=7, batch_size=4)
    assert result.draws == {} and result.state.step == 7
    assert torch.equal(result.state.params["w"], torch.full((2, 3), 7.0, dtype=F64))


def test_families_declare_their_parameters():
    names = {f: {p.name for p in fam.params} for f, fam in FAMILIES.items()}
    assert {"n_chains", "n_burnin", "n_samples", "thinning", "batch_size"} <= names["sgmcmc"]
    assert {"n_iter", "learning_rate", "batch_size", "n_samples"} <= names["vi"]
    assert {"n_estimators", "n_iter", "learning_rate", "batch_size"} <= names["ensemble"]
    assert FAMILIES["ensemble"].n_batch({"n_estimators": 7}) == 7
    assert FAMILIES["vi"].n_batch({}) == 1


def test_lr_schedule():
    s = lr_schedule("cosine", 2.0, 10)
    assert [s(t) for t in (0, 5)] == [2.0, 2.0] and s(10) == 0.0
    assert s(6) > s(8) > s(9) > 0
    assert lr_schedule("constant", 2.0, 10)(9) == 2.0
    with pytest.raises(ValueError, match="lr_schedule"):
        lr_schedule("bogus", 1.0, 10)


def test_adam_matches_torch_optim():
    p = {"x": torch.tensor([1.0, -2.0], dtype=F64)}
    leaf = torch.nn.Parameter(p["x"].clone())
    opt = torch.optim.Adam([leaf], lr=0.05)
    state = adam_init(p)
    for t in range(20):
        grad = torch.tensor([3.0, -1.0], dtype=F64) * (t + 1) - p["x"]
        p, state = adam_step(p, {"x": grad}, state, 0.05)
        opt.zero_grad()
        leaf.grad = -(torch.tensor([3.0, -1.0], dtype=F64) * (t + 1) - leaf.detach())
        opt.step()
    torch.testing.assert_close(p["x"], leaf.detach(), rtol=1e-12, atol=1e-12)


def test_min_epochs_lengthens_runs_on_large_data():
    from skfbnn.inference.families import optimisation_steps

    hyper = {"n_iter": 100, "min_epochs": 3, "batch_size": 10}
    assert optimisation_steps(hyper, 200) == 100  # 3 epochs are 60 steps: n_iter wins
    assert optimisation_steps(hyper, 1001) == 301  # ceil(3 * 1001 / 10)
    assert optimisation_steps({**hyper, "batch_size": 5000}, 50) == 100  # full batch
    assert FAMILIES["ensemble"].n_steps(hyper, 1001) == 301
    assert FAMILIES["sgmcmc"].n_steps({"n_burnin": 5, "n_samples": 2, "thinning": 3}, 9) == 11


def test_variational_run_holds_rows_out_and_sets_the_noise_on_them():
    """With ``validation_fraction`` (learned Gaussian noise) no minibatch holds a held-out
    row, and the final noise is raised to the RMS residual of exactly the rows never trained
    on."""
    from skfbnn.inference.types import BayesProblem
    from skfbnn.inference.vi.meanfield import init
    from skfbnn.likelihoods import GaussianLikelihood

    seen = set()

    def update(state, batch, gen):
        seen.update(batch["x"][0, :, 1].long().tolist())  # column 1 holds the row index
        return state._replace(step=state.step + 1), _Info(*(torch.zeros(1, dtype=F64),) * 3)

    n = 40
    X = torch.stack([torch.linspace(-1, 1, n, dtype=F64), torch.arange(n, dtype=F64)], 1)
    y = (torch.arange(n, dtype=F64) % 7 - 3).unsqueeze(1)  # residuals of f = 0
    problem = BayesProblem(lambda p, x: x[..., :1] * p["w"].view(-1, 1, 1),
                           GaussianLikelihood(None), None, n)
    params = {"w": torch.zeros(1, dtype=F64), "log_noise": torch.zeros(1, 1, dtype=F64)}
    hyper = {"validation_fraction": 0.25, "n_iter": 200, "min_epochs": 0, "batch_size": 5,
             "n_samples": 3}
    transform = Transform(lambda p, batch=None, gen=None: init(p, init_std=1e-12), update)
    result = FAMILIES["vi"].run(transform, params, X, y, torch.Generator(), hyper,
                                          problem=problem)
    held_out = sorted(set(range(n)) - seen)
    assert len(held_out) == 10  # every one of the 30 training rows was drawn
    rms = y[held_out].pow(2).mean().sqrt()
    torch.testing.assert_close(result.state.mean["log_noise"].exp(), rms.view(1, 1))
    plain = FAMILIES["vi"].run(transform, params, X, y, torch.Generator(),
                                         {**hyper, "validation_fraction": 0.0}, problem=problem)
    assert torch.equal(plain.state.mean["log_noise"], params["log_noise"])  # left as learned


def test_variational_early_stopping_keeps_the_q_whose_mean_fits_the_held_out_rows_best():
    """``w`` climbs by 1/40 per step past the held-out rows' slope 3: the checkpoint kept is
    the one at ``w = 3`` (step 120, a multiple of the every-4-steps schedule), means and
    scales both, and the noise is then raised on the held-out rows (residuals 0: not)."""
    from skfbnn.inference.types import BayesProblem
    from skfbnn.inference.vi.meanfield import init
    from skfbnn.likelihoods import GaussianLikelihood

    def update(state, batch, gen):
        w = torch.full((1,), (state.step + 1) / 40, dtype=F64)
        rho = {"w": torch.full((1,), -30.0 - state.step, dtype=F64)}  # tiny, tracks the step
        new = state._replace(mean={**state.mean, "w": w}, rho=rho, step=state.step + 1)
        return new, _Info(*(torch.zeros(1, dtype=F64),) * 3)

    n = 40
    X = torch.linspace(-1, 1, n, dtype=F64).unsqueeze(1)
    y = 3 * X
    problem = BayesProblem(lambda p, x: x * p["w"].view(-1, 1, 1), GaussianLikelihood(None),
                           None, n)
    params = {"w": torch.zeros(1, dtype=F64), "log_noise": torch.full((1, 1), -5.0, dtype=F64)}
    hyper = {"validation_fraction": 0.25, "early_stopping": True, "n_iter": 200,
             "min_epochs": 0, "batch_size": 5, "n_samples": 3}
    transform = Transform(lambda p, batch=None, gen=None: init(p, init_std=1e-12), update)
    result = FAMILIES["vi"].run(transform, params, X, y, torch.Generator(), hyper,
                                          problem=problem)
    assert result.state.mean["w"].item() == 3.0 and result.state.rho["w"].item() == -149.0
    assert result.state.mean["log_noise"].item() == -5.0  # an exact fit: nothing to raise
    assert result.state.step == 200  # the run went on; only q is the checkpoint's
    final = FAMILIES["vi"].run(transform, params, X, y, torch.Generator(),
                                         {**hyper, "early_stopping": False}, problem=problem)
    assert final.state.mean["w"].item() == 5.0


def test_rows_per_step_is_the_batch_each_family_evaluates():
    """What a step evaluates per parameter set (the threads of a fit weigh it): the
    samplers' minibatch (``"auto"`` resolved), every row for Metropolis-Hastings, the
    optimisers' minibatch; never more than the data."""
    sampler = {"batch_size": "auto", "min_epochs": 200, "max_steps": 20000}
    assert FAMILIES["sgmcmc"].rows_per_step(sampler, 1000) == 256
    assert FAMILIES["sgmcmc"].rows_per_step(sampler, 100) == 100
    assert FAMILIES["sgmcmc"].rows_per_step({**sampler, "batch_size": 32}, 10**6) == 32
    assert FAMILIES["mh"].rows_per_step({}, 41157) == 41157
    for name in ("vi", "ensemble"):
        assert FAMILIES[name].rows_per_step({"batch_size": 64}, 1000) == 64
        assert FAMILIES[name].rows_per_step({"batch_size": 64}, 10) == 10
