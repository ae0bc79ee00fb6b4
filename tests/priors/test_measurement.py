"""Tests for skfbnn.priors.measurement.MeasurementSampler."""

from __future__ import annotations

import pytest
import torch

from skfbnn.priors.measurement import MeasurementSampler

F64 = torch.float64


def _X(n: int = 15, d: int = 3, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    scales = torch.tensor([1.0, 10.0, 0.1], dtype=F64)[:d]
    return torch.randn(n, d, generator=gen, dtype=F64) * scales + 3.0


def _is_training_row(rows: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    return (rows.unsqueeze(-2) == X).all(-1).any(-1)


@pytest.mark.parametrize("n_points, fraction", [(10, 0.5), (9, 0.5), (7, 0.3), (8, 0.0), (6, 1.0)])
@pytest.mark.parametrize("margin", [0.0, 0.1, 0.5])
def test_shapes_training_rows_and_box(n_points, fraction, margin):
    X = _X()
    sampler = MeasurementSampler(X, n_points, fraction, margin)
    n_train = round(fraction * n_points)
    assert sampler.n_train == n_train
    out = sampler.sample(4, torch.Generator().manual_seed(1))
    assert out.shape == (4, n_points, 3) and out.dtype == X.dtype
    assert _is_training_row(out[:, :n_train], X).all()
    box = out[:, n_train:]
    assert not _is_training_row(box, X).any()
    lo, hi = X.min(0).values, X.max(0).values
    width = hi - lo
    assert (box >= lo - margin * width).all() and (box <= hi + margin * width).all()


def test_box_points_cover_the_widened_box():
    X, margin = _X(), 0.2
    sampler = MeasurementSampler(X, 20, 0.5, margin)
    out = sampler.sample(100, torch.Generator().manual_seed(2))  # 1000 box points
    box = out[:, 10:].reshape(-1, 3)
    lo, hi = X.min(0).values, X.max(0).values
    width = hi - lo
    low, high = lo - margin * width, hi + margin * width
    # P(no point within 1% of the box width of a given edge) = 0.99^1000 = 4e-5
    tol = 0.01 * (high - low)
    assert ((box.min(0).values - low).abs() < tol).all()
    assert ((box.max(0).values - high).abs() < tol).all()
    # the widening is used: about margin / (1 + 2 margin) = 1/7 lie beyond each edge
    below = (box < lo).double().mean(0)
    assert ((below > 0.1) & (below < 0.19)).all()
    # roughly uniform: the mean sits in the middle of the box
    # (s.e. of the mean is 0.009 box widths; 0.05 is 5.5 s.e.)
    assert ((box.mean(0) - (low + high) / 2).abs() < 0.05 * (high - low)).all()


def test_training_rows_are_drawn_uniformly_with_replacement():
    X = _X(n=5)
    sampler = MeasurementSampler(X, 4, 1.0, 0.1)
    out = sampler.sample(500, torch.Generator().manual_seed(3))  # 2000 rows
    which = (out.reshape(-1, 1, 3) == X).all(-1).double()  # (2000, 5) one-hot
    assert torch.equal(which.sum(1), torch.ones(2000, dtype=F64))
    freq = which.mean(0)
    assert ((freq - 0.2).abs() < 0.04).all()  # sd 0.009
    # with replacement: some set repeats a training row
    idx = which.argmax(1).reshape(500, 4)
    assert any(len(set(row.tolist())) < 4 for row in idx)


def test_generator_determinism():
    sampler = MeasurementSampler(_X(), 10, 0.5, 0.1)
    a = sampler.sample(3, torch.Generator().manual_seed(7))
    b = sampler.sample(3, torch.Generator().manual_seed(7))
    c = sampler.sample(3, torch.Generator().manual_seed(8))
    assert torch.equal(a, b)
    assert not torch.equal(a[:, 5:], c[:, 5:])
    gen = torch.Generator().manual_seed(7)
    first, second = sampler.sample(3, gen), sampler.sample(3, gen)
    assert torch.equal(first, a) and not torch.equal(first, second)


def test_constant_feature_gets_a_tiny_box():
    X = _X()
    X[:, 1] = 2.5
    out = MeasurementSampler(X, 6, 0.5, 0.1).sample(2, torch.Generator().manual_seed(0))
    torch.testing.assert_close(out[..., 1], torch.full((2, 6), 2.5, dtype=F64))
