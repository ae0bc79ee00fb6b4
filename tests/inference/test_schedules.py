"""Tests for skfbnn.inference.schedules."""

from __future__ import annotations

import itertools
import math

import pytest

from skfbnn.inference.schedules import SCHEDULES, make_schedule


@pytest.mark.parametrize("n_steps", [1, 10, 1234])
def test_constant(n_steps):
    s = make_schedule("constant", 0.03, n_steps)
    assert all(s(t) == 0.03 for t in range(n_steps))


@pytest.mark.parametrize("n_steps", [10, 100, 1000, 12345])
@pytest.mark.parametrize("step_size", [1.0, 3e-2])
def test_decay(n_steps, step_size):
    s = make_schedule("decay", step_size, n_steps)
    values = [s(t) for t in range(n_steps)]
    assert values[0] == step_size
    assert values[-1] == pytest.approx(step_size * 0.9**9, rel=1e-12)
    assert all(a >= b for a, b in itertools.pairwise(values))
    # ten plateaus, each a factor 0.9 below the previous one
    levels = sorted(set(values), reverse=True)
    assert len(levels) == 10
    for a, b in itertools.pairwise(levels):
        assert b / a == pytest.approx(0.9, rel=1e-12)
    # the first decay happens at t = n_steps / 10
    first = next(t for t, v in enumerate(values) if v < step_size)
    assert first == math.ceil(n_steps / 10)


@pytest.mark.parametrize("n_steps, n_cycles", [(500, 1), (2000, 2), (5000, 5), (2500, 2)])
def test_cyclical(n_steps, n_cycles):
    step_size = 0.2
    s = make_schedule("cyclical", step_size, n_steps)
    values = [s(t) for t in range(n_steps)]
    period = math.ceil(n_steps / n_cycles)
    starts = list(range(0, n_steps, period))
    assert len(starts) == n_cycles
    for t0 in starts:
        assert s(t0) == pytest.approx(step_size)
        assert s(t0 + period // 2) == pytest.approx(step_size / 2, rel=1e-2)
        if t0 + period <= n_steps:  # a complete cycle ends near zero
            assert s(t0 + period - 1) < 0.01 * step_size
    assert max(values) == pytest.approx(step_size)
    assert min(values) >= 0.0
    # decreasing within a cycle
    cycle = values[:period]
    assert all(a > b for a, b in itertools.pairwise(cycle))


def test_cyclical_short_run_is_a_single_cosine():
    s = make_schedule("cyclical", 1.0, 100)
    for t in (0, 25, 50, 99):
        assert s(t) == pytest.approx(0.5 * (math.cos(math.pi * t / 100) + 1))


@pytest.mark.parametrize("bad", ["linear", "Constant", ""])
def test_unknown_schedule_raises(bad):
    with pytest.raises(ValueError, match="schedule must be one of"):
        make_schedule(bad, 0.1, 10)
    assert bad not in SCHEDULES
