"""Tests for skfbnn.inference.run: minibatch stream and the sampling driver."""

from __future__ import annotations

from typing import NamedTuple

import pytest
import torch

from skfbnn.exceptions import SamplerDivergenceError
from skfbnn.inference.run import MinibatchStream, run_sampler
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
                batch_size=64, progress=lambda step, lp: seen.append((step, lp[0].item())))
    assert seen == [(t, float(t)) for t in range(6)]


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
