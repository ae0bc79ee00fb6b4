"""Classification likelihood: shifted one-hot targets and the two probability maps."""

from __future__ import annotations

import math

import pytest
import torch
from scipy.stats import norm

from skfbnn.inference.mh.onehot import FLOOR, ShiftedOneHotGaussian

F64 = torch.float64


def test_targets_and_clip_probabilities():
    lik = ShiftedOneHotGaussian(0.1, proba="clip")
    t = lik.targets(torch.tensor([1, 0]), 2)
    torch.testing.assert_close(t, torch.tensor([[-0.5, 0.5], [0.5, -0.5]]))
    p = lik.probabilities(torch.tensor([[[0.9, -2.0], [0.0, 0.0]]], dtype=F64))
    torch.testing.assert_close(p.sum(-1), torch.ones(1, 2, dtype=F64))
    assert float(p[0, 0, 1]) == pytest.approx(FLOOR / (1.4 + FLOOR))
    torch.testing.assert_close(p[0, 1], torch.tensor([0.5, 0.5], dtype=F64))


def test_argmax_probabilities_binary_closed_form():
    lik = ShiftedOneHotGaussian(0.3, proba="argmax")
    out = torch.tensor([[[0.2, -0.1]], [[0.0, 0.5]]], dtype=F64)
    want = [norm.cdf(0.3 / (0.3 * math.sqrt(2))), norm.cdf(-0.5 / (0.3 * math.sqrt(2)))]
    got = lik.probabilities(out)[:, 0, 0]
    torch.testing.assert_close(got, torch.tensor(want, dtype=F64), rtol=1e-6, atol=1e-6)


def test_argmax_probabilities_match_monte_carlo():
    lik = ShiftedOneHotGaussian(0.3, proba="argmax")
    out = torch.randn(3, 4, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    eps = torch.randn(50000, *out.shape, generator=torch.Generator().manual_seed(1), dtype=F64)
    mc = torch.nn.functional.one_hot((out + 0.3 * eps).argmax(-1), 3).to(F64).mean(0)
    torch.testing.assert_close(lik.probabilities(out), mc, rtol=0, atol=0.01)


def test_unknown_map_is_rejected():
    with pytest.raises(ValueError, match="proba"):
        ShiftedOneHotGaussian(0.1, proba="softmax")
