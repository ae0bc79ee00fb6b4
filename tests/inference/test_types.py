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


def test_optional_contract_members_are_declared_once():
    """The members the inference layer reads when present, and their defaults."""
    from skfbnn.inference.types import OPTIONAL_MEMBERS, Transform, member
    from skfbnn.likelihoods import CategoricalLikelihood, GaussianLikelihood
    from skfbnn.priors.weight import HierarchicalWeightPrior, WeightPrior

    assert set(OPTIONAL_MEMBERS) == {"learned", "log_density", "resample", "gp",
                                     "stability_limit", "n_outputs", "targets", "base",
                                     "preconditioner", "scale", "log_prob_grad"}
    assert member(object(), "learned") is False and member(None, "resample") is None
    assert member(GaussianLikelihood(None), "learned") is True
    assert member(CategoricalLikelihood(), "learned") is False
    assert member(WeightPrior(1.0), "resample") is None
    assert callable(member(WeightPrior(1.0), "log_prob_grad"))
    assert callable(member(HierarchicalWeightPrior(), "resample"))
    assert member(Transform(None, None), "stability_limit") is None
    assert member(GaussianLikelihood(None), "n_outputs")(3) == 3
    assert member(CategoricalLikelihood(), "targets") is None  # labels are the targets
    assert member(lambda p, x: x, "base") is None  # a forward that wraps none
    problem = BayesProblem(lambda p, x: x, log_likelihood=lambda f, y, p: f.sum(),
                           log_prior=lambda p, f=None, m=None: 0.0)
    assert member(problem.likelihood, "learned") is False
    assert member(problem.prior, "gp") is None
    assert member(problem.prior, "log_prob_grad") is None  # autograd takes its gradient
    with pytest.raises(KeyError, match="not an optional contract member"):
        member(problem.prior, "anything")
