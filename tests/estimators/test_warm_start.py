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


@pytest.mark.parametrize("cls", CASES, ids=[c.__name__ for c in CASES])
def test_a_warm_refit_draws_fresh_randomness_reproducibly(cls, monkeypatch):
    """Each continuation of an integer random_state gets a seed of its own (a run that
    repeated the first fit's noise and minibatches at every update drifted: the bandit's
    warm-started SGLD), and the same sequence of fits gives the same draws."""
    seeds = []
    real = base.make_generator

    def spy(seed, device):
        seeds.append(seed)
        return real(seed, device)

    monkeypatch.setattr(base, "make_generator", spy)
    X, y = _data(cls)
    runs = []
    for _ in range(2):
        est = _make(cls, warm_start=True)
        runs.append([{k: v.clone() for k, v in est.fit(X, y).posterior_.start().items()}
                     for _ in range(3)])
    assert len(set(seeds[:3])) == 3 and seeds[3:] == seeds[:3]
    for first, again in zip(*runs, strict=True):
        for key in first:
            torch.testing.assert_close(again[key], first[key], rtol=0, atol=0)
    est.set_params(warm_start=False).fit(X, y)  # a cold refit starts the stream afresh
    assert seeds[-1] == seeds[0]


def _fitted_state(est, X):
    """What a refused refit must leave as it was: the draws, the attributes, predictions."""
    predict = getattr(est, "predict_proba", est.predict)
    return est.posterior_, dict(vars(est)), predict(X)


def _assert_kept(est, X, state):
    posterior, attributes, predictions = state
    assert est.posterior_ is posterior
    assert vars(est).keys() == attributes.keys()
    assert all(vars(est)[k] is v for k, v in attributes.items() if k != "warm_start")
    predict = getattr(est, "predict_proba", est.predict)
    np.testing.assert_array_equal(predict(X), predictions)


def test_a_warm_refit_with_other_shapes_names_warm_start():
    X, y = sine_data()
    est = make(skfbnn.SGLDRegressor, warm_start=True).fit(X, y)
    state = _fitted_state(est, X)
    est.set_params(n_chains=3)
    with pytest.raises(ValueError, match="warm_start"):
        est.fit(X, y)
    est.set_params(n_chains=2)
    _assert_kept(est, X, state)  # refused before the run: the previous fit stays


@pytest.mark.parametrize("cls", [skfbnn.SGLDRegressor, skfbnn.SGHMCClassifier],
                         ids=["regressor", "classifier"])
def test_a_refused_refit_keeps_the_previous_fit(cls, monkeypatch):
    """Another number of features (warm), bad data (cold) or a device this machine lacks
    (a fit pickled with device='cuda' refitted without CUDA) is refused before anything
    of the previous fit is discarded: ``n_features_in_``, ``classes_`` and the draws still
    describe it."""
    import pickle

    X, y = _data(cls)
    est = make(cls, warm_start=True).fit(X, y)
    state = _fitted_state(est, X)
    with pytest.raises(ValueError, match="warm_start"):
        est.fit(np.hstack([X, X]), y)
    _assert_kept(est, X, state)
    est.set_params(warm_start=False)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(bad, y)
    _assert_kept(est, X, state)
    loaded = pickle.loads(pickle.dumps(est.set_params(device="cuda", warm_start=True)))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    state = _fitted_state(loaded, X)
    with pytest.raises(ValueError, match="CUDA is not available"):
        loaded.fit(X, y)
    _assert_kept(loaded, X, state)
    fresh = make(cls)  # a first fit refused leaves no fitted attribute behind
    with pytest.raises(ValueError):
        fresh.fit(bad, y)
    assert not hasattr(fresh, "n_features_in_") and not hasattr(fresh, "posterior_")


def test_a_warm_refit_with_other_classes_names_both():
    """Labels of the same number but another set would continue from outputs that belong
    to the old labels: refused, as scikit-learn's ``MLPClassifier`` does."""
    X, y = _data(skfbnn.SGHMCClassifier)
    est = make(skfbnn.SGHMCClassifier, warm_start=True).fit(X, y)
    state = _fitted_state(est, X)
    swapped = np.where(y == "up", "high", "down")
    with pytest.raises(ValueError, match=r"(?s)warm_start.*\['down' 'up'\].*\['down' 'high'\]"):
        est.fit(X, swapped)
    _assert_kept(est, X, state)
    three = y.copy()
    three[:5] = "flat"
    with pytest.raises(ValueError, match="same classes"):
        est.fit(X, three)
    _assert_kept(est, X, state)
    est.set_params(warm_start=False).fit(X, swapped)  # a cold refit learns the new labels
    assert list(est.classes_) == ["down", "high"]


def test_warm_start_is_a_parameter_of_every_estimator():
    for name in skfbnn.__all__:
        cls = getattr(skfbnn, name)
        if isinstance(cls, type) and hasattr(cls, "fit"):
            assert cls().get_params()["warm_start"] is False


@pytest.mark.parametrize("cls", [skfbnn.FunctionalSGLDRegressor, skfbnn.FBNNClassifier],
                         ids=["fsgld", "fbnn-classifier"])
def test_a_warm_refit_starts_the_gp_prior_from_the_last_fit(cls, monkeypatch):
    """The GP prior's marginal-likelihood fit continues from the previous fit's prior
    (no median heuristic over the rows again); a cold refit, or a warm one with another
    kernel, builds it afresh."""
    import skfbnn.priors.gp as gp_module

    starts, medians = [], []
    real_fit, real_median = gp_module.GPPrior.fit, gp_module.median_lengthscale

    def fit(self, *args, start=None, **kwargs):
        starts.append(start)
        return real_fit(self, *args, start=start, **kwargs)

    def median(X):
        medians.append(len(X))
        return real_median(X)

    monkeypatch.setattr(gp_module.GPPrior, "fit", fit)
    monkeypatch.setattr(gp_module, "median_lengthscale", median)
    X, y = _data(cls)
    est = make(cls, warm_start=True, prior_fit_iter=5, n_measurement_points=10).fit(X, y)
    first = est.prior_
    est.fit(X, y)
    assert starts == [None, first] and len(medians) == 1
    assert est.prior_ is not first  # a prior of its own, started from the last one's values
    est.set_params(kernel="matern52").fit(X, y)  # another kernel: afresh
    assert starts[-1] is None and len(medians) == 2
    est.set_params(warm_start=False).fit(X, y)
    assert starts[-1] is None and len(medians) == 3
