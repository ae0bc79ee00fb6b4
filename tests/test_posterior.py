"""Tests for skfbnn.posterior.Particles."""

from __future__ import annotations

import pytest
import torch

from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.posterior import Particles

F64 = torch.float64
C, S = 2, 3


@pytest.fixture
def particles_and_forward():
    net = build_mlp(4, 2, (5,), "tanh")
    gen = torch.Generator().manual_seed(0)
    flat = init_params(net, C * S, gen, device=torch.device("cpu"), dtype=F64)
    draws = {k: v.reshape(C, S, *v.shape[1:]) for k, v in flat.items()}
    return Particles(draws), make_forward(net), flat


def test_shape_and_flat(particles_and_forward):
    particles, _, flat = particles_and_forward
    assert particles.shape == (C, S)
    out = particles.flat()
    assert out.keys() == flat.keys()
    for k, v in out.items():
        assert v.shape == flat[k].shape
        # chain-major: row c * S + s is chain c, draw s
        for c in range(C):
            for s in range(S):
                assert torch.equal(v[c * S + s], particles.draws[k][c, s])


@pytest.mark.parametrize("chunk", [1, 3, 7, 10, 4096])
def test_predict_f_chunking_equals_unchunked(particles_and_forward, chunk):
    particles, forward, flat = particles_and_forward
    X = torch.randn(10, 4, generator=torch.Generator().manual_seed(1), dtype=F64)
    got = particles.predict_f(forward, X, chunk=chunk)
    assert got.shape == (C, S, 10, 2)
    expected = forward(flat, X).reshape(C, S, 10, 2)
    torch.testing.assert_close(got, expected, rtol=1e-13, atol=1e-13)
    # a draw's output is its own network's output
    W0, b0 = particles.draws["0.weight"][1, 2], particles.draws["0.bias"][1, 2]
    W2, b2 = particles.draws["2.weight"][1, 2], particles.draws["2.bias"][1, 2]
    torch.testing.assert_close(got[1, 2], torch.tanh(X @ W0.T + b0) @ W2.T + b2)
    assert not got.requires_grad


def test_to_converts_dtype_and_copies(particles_and_forward):
    particles, _, _ = particles_and_forward
    p32 = particles.to(torch.device("cpu"), torch.float32)
    assert p32 is not particles and p32.shape == particles.shape
    for k, v in p32.draws.items():
        assert v.dtype == torch.float32
        torch.testing.assert_close(v, particles.draws[k].float())


def test_outputs_at_reduces_block_by_block(particles_and_forward, monkeypatch):
    import skfbnn.posterior as posterior_module
    from skfbnn.posterior import outputs_at

    particles, forward, _ = particles_and_forward
    X = torch.randn(23, 4, generator=torch.Generator().manual_seed(2), dtype=F64)
    monkeypatch.setattr(posterior_module, "block_rows", lambda posterior, **kwargs: 5)
    full = outputs_at(particles, forward, X)  # (D, n, k), the network on blocks of 5 rows
    assert full.shape == (C * S, 23, 2)
    blocks = []

    def reduce(out, rows):
        blocks.append(rows)
        assert out.shape == (C * S, rows.stop - rows.start, 2)
        assert torch.equal(out, full[:, rows])  # the same numbers as all rows at once
        return out[0], out[-1] * 2

    first, last = outputs_at(particles, forward, X, reduce)
    assert [(r.start, r.stop) for r in blocks] == [(0, 5), (5, 10), (10, 15), (15, 20), (20, 23)]
    assert torch.equal(first, full[0]) and torch.equal(last, full[-1] * 2)
    single = outputs_at(particles, forward, X, lambda out, rows: out[1])  # a tensor
    assert torch.equal(single, full[1])


def test_block_rows_bounds_the_memory_of_a_block():
    from skfbnn.posterior import PREDICT_BLOCK_BYTES, block_rows

    net = build_mlp(13, 1, (50, 50), "gelu")
    flat = init_params(net, 400, torch.Generator().manual_seed(0), device=torch.device("cpu"),
                       dtype=F64)
    particles = Particles({k: v.reshape(4, 100, *v.shape[1:]) for k, v in flat.items()})
    rows = block_rows(particles)
    per_row = 8 * 400 * 2 * (50 + 50 + 1)  # float64, every draw, twice every layer's output
    assert rows == PREDICT_BLOCK_BYTES // per_row
    assert rows * per_row <= PREDICT_BLOCK_BYTES < (rows + 1) * per_row
    assert block_rows(particles, n_bytes=1) == 1  # at least one row
    conv = 16 * 40 * 3  # e.g. channels x positions x (conv, norm, activation)
    assert block_rows(particles, row_values=conv) == PREDICT_BLOCK_BYTES // (8 * 400 * conv)


def test_prediction_draws_are_kept_between_calls_and_never_pickled(monkeypatch):
    import pickle

    import skfbnn.posterior as posterior_module
    from skfbnn.posterior import MeanFieldGaussian

    gen = torch.Generator().manual_seed(0)
    mean = {"w": torch.randn(2, 3, 4, generator=gen), "log_noise": torch.zeros(2, 1)}
    std = {"w": torch.rand(2, 3, 4, generator=gen)}
    eps = {"w": torch.randn(2, 5, 3, 4, generator=gen)}
    cpu = torch.device("cpu")
    for posterior in (Particles({"w": torch.randn(2, 5, 3, generator=gen)}),
                      MeanFieldGaussian(mean, std, eps)):
        kept = posterior.for_prediction(cpu, F64)
        assert posterior.for_prediction(cpu, F64) is kept
        expected = posterior.to(cpu, F64).draws  # made from float64 parameters
        assert all(torch.equal(kept.draws[k], v) for k, v in expected.items())
        assert posterior.for_prediction(cpu, torch.float32) is not kept  # another dtype
        assert "_for_prediction" not in pickle.loads(pickle.dumps(posterior)).__dict__
        monkeypatch.setattr(posterior_module, "PREDICT_BLOCK_BYTES", 1)  # too large to keep
        fresh = type(posterior).__new__(type(posterior))
        fresh.__dict__.update(pickle.loads(pickle.dumps(posterior)).__dict__)
        assert fresh.for_prediction(cpu, F64) is not fresh.for_prediction(cpu, F64)
        monkeypatch.undo()
