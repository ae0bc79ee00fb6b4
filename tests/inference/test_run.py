"""Tests for skfbnn.inference.run: minibatch stream and the sampling driver."""

from __future__ import annotations

import math
from typing import NamedTuple

import pytest
import torch

from skfbnn.exceptions import SamplerDivergenceError
from skfbnn.inference import run as run_module
from skfbnn.inference.run import MinibatchStream, run, run_sampler
from skfbnn.inference.types import Transform

F64 = torch.float64


@pytest.mark.parametrize("n_data, batch_size", [(12, 4), (12, 3), (10, 5), (12, 1)])
def test_minibatch_stream_covers_every_index_once_per_epoch(n_data, batch_size):
    C = 3
    stream = MinibatchStream(n_data, C, batch_size, torch.Generator().manual_seed(0))
    per_epoch = n_data // batch_size
    epochs = []
    for _ in range(3):
        batches = [stream.next() for _ in range(per_epoch)]
        assert all(b.shape == (C, batch_size) and b.dtype == torch.long for b in batches)
        epoch = torch.cat(batches, dim=1)  # (C, n_data)
        for c in range(C):
            assert sorted(epoch[c].tolist()) == list(range(n_data))
        epochs.append(epoch)
    # chains get different permutations, epochs are reshuffled
    if batch_size < n_data:
        for e in epochs:
            assert not torch.equal(e[0], e[1]) and not torch.equal(e[1], e[2])
        assert not torch.equal(epochs[0], epochs[1])


def test_minibatch_stream_drops_the_remainder_without_repeats():
    stream = MinibatchStream(10, 2, 3, torch.Generator().manual_seed(1))
    epoch = torch.cat([stream.next() for _ in range(3)], dim=1)  # 9 of 10
    for c in range(2):
        assert len(set(epoch[c].tolist())) == 9


def test_minibatch_stream_is_deterministic():
    a = MinibatchStream(20, 2, 4, torch.Generator().manual_seed(3))
    b = MinibatchStream(20, 2, 4, torch.Generator().manual_seed(3))
    for _ in range(12):
        assert torch.equal(a.next(), b.next())


@pytest.mark.parametrize("batch_size", [10, 11, 1000])
def test_minibatch_stream_full_batch_returns_none(batch_size):
    gen = torch.Generator().manual_seed(0)
    state = gen.get_state()
    stream = MinibatchStream(10, 2, batch_size, gen)
    assert all(stream.next() is None for _ in range(3))
    assert torch.equal(gen.get_state(), state)  # no randomness consumed


class _State(NamedTuple):
    params: dict
    log_post: torch.Tensor
    step: int


class _Info(NamedTuple):
    log_post: torch.Tensor


def _counting_transform(batches: list, nan_at: int | None = None, nan_param_at=None):
    """Adds 1 to every parameter per step; log_post = step index (per chain)."""

    def init(params, batch=None, gen=None):
        return _State(params, torch.full((2,), float("nan")), 0)

    def update(state, batch, gen):
        batches.append(batch)
        lp = torch.full((2,), float(state.step), dtype=F64)
        if state.step == nan_at:
            lp[1] = float("nan")
        params = {k: v + 1 for k, v in state.params.items()}
        if state.step == nan_param_at:
            params["w"] = params["w"].clone()
            params["w"][0, 0] = float("inf")
        return _State(params, lp, state.step + 1), _Info(lp)

    return Transform(init, update)


def _params():
    return {"w": torch.zeros(2, 3, dtype=F64), "b": torch.zeros(2, dtype=F64)}


@pytest.mark.parametrize("n_burnin, n_samples, thinning", [(0, 1, 1), (5, 4, 3), (7, 3, 1)])
def test_run_sampler_keeps_draws_at_the_right_steps(n_burnin, n_samples, thinning):
    batches = []
    X = torch.arange(20, dtype=F64).reshape(10, 2)
    y = torch.arange(10, dtype=F64).reshape(10, 1)
    measures = []

    def measure(gen):
        measures.append(gen)
        return len(measures)

    result = run_sampler(
        _counting_transform(batches), _params(), X, y, torch.Generator().manual_seed(0),
        n_burnin=n_burnin, n_samples=n_samples, thinning=thinning, batch_size=4,
        measure=measure,
    )
    n_steps = n_burnin + n_samples * thinning
    assert result.draws["w"].shape == (2, n_samples, 3)
    assert result.draws["b"].shape == (2, n_samples)
    # after step t (0-based) the parameters equal t + 1; draw k is kept after step
    # n_burnin + (k + 1) * thinning - 1
    expected = torch.tensor([n_burnin + (k + 1) * thinning for k in range(n_samples)], dtype=F64)
    torch.testing.assert_close(result.draws["b"], expected.expand(2, n_samples))
    torch.testing.assert_close(result.draws["w"], expected[None, :, None].expand(2, n_samples, 3))
    assert result.log_post.shape == (n_steps, 2) and result.log_post.dtype == F64
    torch.testing.assert_close(
        result.log_post, torch.arange(n_steps, dtype=F64)[:, None].expand(n_steps, 2)
    )
    # every step got a per-chain minibatch and a fresh measurement set
    assert len(batches) == n_steps == len(measures)
    assert [b["measure"] for b in batches] == list(range(1, n_steps + 1))
    for b in batches:
        assert b["x"].shape == (2, 4, 2) and b["y"].shape == (2, 4, 1)
        torch.testing.assert_close(b["x"][..., 0] / 2, b["y"][..., 0])  # rows stay paired


def test_run_sampler_full_batch_and_no_measure():
    batches = []
    X, y = torch.zeros(5, 2, dtype=F64), torch.zeros(5, dtype=F64)
    run_sampler(_counting_transform(batches), _params(), X, y, torch.Generator().manual_seed(0),
                n_burnin=1, n_samples=2, thinning=1, batch_size=64)
    assert all(b["x"] is X and b["y"] is y and b["measure"] is None for b in batches)


def test_run_sampler_reports_progress():
    seen = []
    run_sampler(_counting_transform([]), _params(), torch.zeros(5, 2), torch.zeros(5),
                torch.Generator().manual_seed(0), n_burnin=2, n_samples=2, thinning=2,
                batch_size=64, progress=lambda step, lp: seen.append((step, lp[:, 0].tolist())))
    assert seen == [(5, [float(t) for t in range(6)])]  # one read-back, at the end


@pytest.mark.parametrize("sync_every, calls", [(1, list(range(10))), (4, [3, 7, 9]),
                                               (10, [9]), (100, [9])])
def test_progress_gets_every_step_once_at_each_read_back(monkeypatch, sync_every, calls):
    monkeypatch.setattr(run_module, "SYNC_SECONDS", math.inf)
    seen = []
    run(_counting_transform([]), _params(), torch.zeros(5, 2), torch.zeros(5),
        torch.Generator().manual_seed(0), n_steps=10, batch_size=64, sync_every=sync_every,
        progress=lambda step, lp: seen.append((step, lp.clone())))
    assert [step for step, _ in seen] == calls
    values = torch.cat([lp for _, lp in seen])
    torch.testing.assert_close(values, torch.arange(10, dtype=F64)[:, None].expand(10, 2))


def test_slow_steps_are_read_back_after_sync_seconds(monkeypatch):
    monkeypatch.setattr(run_module, "SYNC_SECONDS", 0.0)
    seen = []
    run(_counting_transform([]), _params(), torch.zeros(5, 2), torch.zeros(5),
        torch.Generator().manual_seed(0), n_steps=5, batch_size=64, sync_every=100,
        progress=lambda step, lp: seen.append(step))
    assert seen == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("sync_every", [1, 2, 4, 100])
@pytest.mark.parametrize("nan_at", [0, 3, 7])
def test_divergence_is_reported_at_its_step_whatever_the_read_back(sync_every, nan_at):
    seen = []
    with pytest.raises(SamplerDivergenceError) as info:
        run(_counting_transform([], nan_at=nan_at), _params(), torch.zeros(5, 2),
            torch.zeros(5), torch.Generator().manual_seed(0), n_steps=12, batch_size=64,
            sync_every=sync_every, progress=lambda step, lp: seen.append(step))
    assert f"became non-finite at step {nan_at}" in str(info.value)
    assert "chain(s)/member(s) [1]" in str(info.value)
    assert all(step < nan_at for step in seen)  # progress never saw the divergence


def test_divergence_before_a_later_failure_is_what_is_reported():
    def adapt(state, info, step):
        if step == 5:  # e.g. a factorisation failing on the non-finite state
            raise RuntimeError("failed on NaNs")
        return state

    with pytest.raises(SamplerDivergenceError, match="at step 3") as info:
        run(_counting_transform([], nan_at=3), _params(), torch.zeros(5, 2), torch.zeros(5),
            torch.Generator().manual_seed(0), n_steps=12, n_burnin=12, batch_size=64,
            adapt=adapt)
    assert "failed on NaNs" in str(info.value.__context__)
    with pytest.raises(RuntimeError, match="failed on NaNs"):  # no divergence: unchanged
        run(_counting_transform([]), _params(), torch.zeros(5, 2), torch.zeros(5),
            torch.Generator().manual_seed(0), n_steps=12, n_burnin=12, batch_size=64,
            adapt=adapt)


def test_run_sampler_raises_on_nan_log_posterior():
    with pytest.raises(SamplerDivergenceError, match="step size") as info:
        run_sampler(_counting_transform([], nan_at=3), _params(), torch.zeros(5, 2),
                    torch.zeros(5), torch.Generator().manual_seed(0),
                    n_burnin=10, n_samples=2, thinning=1, batch_size=64)
    assert "step 3" in str(info.value) and "[1]" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_run_sampler_raises_on_non_finite_kept_draw():
    # log_post stays finite, but a kept draw is infinite
    with pytest.raises(SamplerDivergenceError, match="step size"):
        run_sampler(_counting_transform([], nan_param_at=3), _params(), torch.zeros(5, 2),
                    torch.zeros(5), torch.Generator().manual_seed(0),
                    n_burnin=2, n_samples=3, thinning=1, batch_size=64)


@pytest.mark.parametrize("name, params", [
    ("SGHMCRegressor", dict(n_burnin=120, n_samples=3, thinning=5, n_chains=2,  # Gibbs
                            min_epochs=0, prior_std="learn")),  # steps: the monitor hook
    ("PCNLRegressor", dict(n_burnin=30, n_samples=3, thinning=2, n_chains=2)),  # adapt hook
    ("DeepEnsembleRegressor", dict(n_iter=150, n_estimators=2, min_epochs=0)),  # monitor
    ("BBBRegressor", dict(n_iter=150, n_samples=4, min_epochs=0)),
])
def test_read_back_cadence_changes_no_number(monkeypatch, name, params):
    """The fits are the same, draw for draw and trace for trace, whether the driver reads
    the values back after every step (as a loop with a host synchronisation per step did)
    or every ``SYNC_EVERY`` steps."""
    import warnings

    import numpy as np

    import skfbnn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    fits = []
    for every in (1, 7, 1000):
        monkeypatch.setattr(run_module, "SYNC_EVERY", every)
        monkeypatch.setattr(run_module, "SYNC_SECONDS", math.inf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = getattr(skfbnn, name)(random_state=0, device="cpu", **params).fit(X, y)
        fits.append(est)
    for est in fits[1:]:
        for k, v in fits[0].posterior_.flat().items():
            assert torch.equal(v, est.posterior_.flat()[k])
        np.testing.assert_array_equal(fits[0].predict(X), est.predict(X))
        trace, other = fits[0].diagnostics_.get("trace"), est.diagnostics_.get("trace")
        if trace is not None:
            for field in trace:
                np.testing.assert_array_equal(trace[field], other[field])


@pytest.mark.parametrize("sync_every", [1, 7, 100])
def test_progress_bar_logs_every_tenth_of_the_run_whatever_the_read_back(
        monkeypatch, caplog, sync_every):
    import logging

    from skfbnn.inference.progress import progress_bar

    monkeypatch.setattr(run_module, "SYNC_SECONDS", math.inf)
    caplog.set_level(logging.INFO, logger="skfbnn")
    with progress_bar(2, True, 25) as progress:
        run(_counting_transform([]), _params(), torch.zeros(5, 2), torch.zeros(5),
            torch.Generator().manual_seed(0), n_steps=25, batch_size=64,
            sync_every=sync_every, progress=progress)
    logged = [r.args for r in caplog.records if r.name == "skfbnn"]
    # every = 25 // 10 = 2: after steps 2, 4, ..., 24 (1-based), one line per chain, with
    # the objective of that step (the counting transform's step index, 0-based)
    assert logged == [(s, c, "log posterior", s - 1.0) for s in range(2, 25, 2) for c in (0, 1)]
