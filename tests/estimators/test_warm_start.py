"""``warm_start=True``: the next fit starts from this fit's final state."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import skfbnn
import skfbnn.estimators._base as base

from ._cases import make, sine_data

CASES = [skfbnn.SGLDRegressor, skfbnn.PCNRegressor, skfbnn.BBBRegressor,
         skfbnn.DeepEnsembleRegressor, skfbnn.SGHMCClassifier]


@pytest.fixture
def starts(monkeypatch):
    """The initial parameters every run starts from."""
    seen = []
    real = base.infer

    def spy(spec, hyper, problem, params, *args, **kwargs):
        seen.append({k: v.clone() for k, v in params.items()})
        return real(spec, hyper, problem, params, *args, **kwargs)

    monkeypatch.setattr(base, "infer", spy)
    return seen


def _data(cls):
    X, y = sine_data()
    return (X, np.where(y > 0, "up", "down")) if "Classifier" in cls.__name__ else (X, y)


def _make(cls, **kwargs):
    if cls is skfbnn.PCNRegressor:  # the wide-network family's own tiny budget
        return cls(hidden_layer_sizes=(8,), n_chains=2, n_burnin=20, n_samples=4, thinning=2,
                   random_state=0, device="cpu", **kwargs)
    return make(cls, **kwargs)


@pytest.mark.parametrize("cls", CASES, ids=[c.__name__ for c in CASES])
def test_a_warm_refit_starts_where_the_last_fit_ended(cls, starts):
    X, y = _data(cls)
    est = _make(cls, warm_start=True).fit(X, y)
    end = {k: v.to(torch.float32) for k, v in est.posterior_.start().items()}
    est.fit(X, y)
    assert len(starts) == 2
    for key, value in end.items():
        if key in starts[1]:
            torch.testing.assert_close(starts[1][key], value.to(starts[1][key].dtype))
    cold = _make(cls).fit(X, y)  # warm_start=False: a fresh start each time
    cold.fit(X, y)
    for key in starts[2]:
        torch.testing.assert_close(starts[3][key], starts[2][key])  # same seed, same start
    assert any(not torch.equal(starts[1][k], starts[2][k]) for k in starts[1])


def test_a_warm_refit_with_other_shapes_names_warm_start():
    X, y = sine_data()
    est = make(skfbnn.SGLDRegressor, warm_start=True).fit(X, y)
    est.set_params(n_chains=3)
    with pytest.raises(ValueError, match="warm_start"):
        est.fit(X, y)
    assert not hasattr(est, "posterior_")  # a failed refit leaves no draws behind


def test_warm_start_is_a_parameter_of_every_estimator():
    for name in skfbnn.__all__:
        cls = getattr(skfbnn, name)
        if isinstance(cls, type) and hasattr(cls, "fit"):
            assert cls().get_params()["warm_start"] is False
