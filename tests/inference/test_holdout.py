"""Held-out rows per member and best-state checkpointing (skfbnn.inference.holdout)."""

from __future__ import annotations

from typing import NamedTuple

import torch

from skfbnn.inference.holdout import BestOnHeldOut, split_rows
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
