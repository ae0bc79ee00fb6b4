"""The model container that every update rule receives."""

from __future__ import annotations

import pytest
import torch

from skfbnn.inference.objective import row_weights
from skfbnn.inference.types import BayesProblem


def _forward(params, X):
    return (X @ params["w"]).unsqueeze(0)


def _log_likelihood(f, y, params):
    return -0.5 * ((f.squeeze(-1) - y) ** 2).sum(-1)


def test_sample_weight_is_declared_and_checked():
    assert row_weights(None) is None  # a run policy called without a problem
    assert row_weights(BayesProblem(_forward, log_likelihood=_log_likelihood, n_data=3)) is None
    w = torch.tensor([1.0, 0.0, 2.5])
    problem = BayesProblem(_forward, log_likelihood=_log_likelihood, n_data=3, sample_weight=w)
    assert row_weights(problem) is w
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(3,\).*Got \(2,\)"):
        BayesProblem(_forward, log_likelihood=_log_likelihood, n_data=3, sample_weight=w[:2])


def test_exactly_one_likelihood_and_at_most_one_prior():
    with pytest.raises(ValueError, match="exactly one of likelihood or log_likelihood"):
        BayesProblem(_forward, n_data=3)
    with pytest.raises(ValueError, match="at most one of prior or log_prior"):
        BayesProblem(_forward, log_likelihood=_log_likelihood, prior=object(),
                     log_prior=lambda *a: 0.0)
