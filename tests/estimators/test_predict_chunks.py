"""Predictions summarised over the draws are computed a block of rows at a time
(:func:`skfbnn.posterior.outputs_at` with ``reduce``): the same numbers as all rows at once,
in the rows' order, with memory that does not grow with rows times draws."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import skfbnn
import skfbnn.posterior as posterior_module
from skfbnn.estimators._regression import draw_moments
from skfbnn.predictive import sample_regression

from ..conftest import FAST, FAST_ENSEMBLE, FAST_OPTIMISATION

BLOCK = 7
"""Rows per block in the chunked runs (the data have 40 rows: six blocks, the last short)."""


def _blocks(monkeypatch, rows):
    monkeypatch.setattr(posterior_module, "block_rows", lambda posterior, **kwargs: rows)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.column_stack([np.sin(X[:, 0]) + 0.1 * rng.normal(size=40), np.full(40, 2.5),
                         X[:, 1] ** 2])
    return X, y


REGRESSORS = {
    "particles, a constant column": (skfbnn.SGHMCRegressor, FAST, slice(None)),
    "ensemble, variance heads": (skfbnn.DeepEnsembleRegressor, FAST_ENSEMBLE, 0),
    "mean field": (skfbnn.BBBRegressor, dict(FAST_OPTIMISATION, min_epochs=0), 0),
}


@pytest.fixture(scope="module", params=list(REGRESSORS))
def regressor(request, data):
    cls, budget, columns = REGRESSORS[request.param]
    X, y = data
    return _fit(cls(random_state=0, device="cpu", **budget), X, y[:, columns])


def _summaries(est, X):
    mean, std = est.predict(X, return_std=True)
    return {"mean": mean, "std": std, "predict": est.predict(X),
            **{kind: est.predict_std(X, kind=kind)
               for kind in ("total", "epistemic", "aleatoric")},
            "sample_y": est.sample_y(X, n_samples=5, random_state=3)}


def test_regression_blocks_equal_all_rows_at_once(regressor, data, monkeypatch):
    X, _ = data
    _blocks(monkeypatch, BLOCK)
    blocked = _summaries(regressor, X)
    # the path without blocks: every draw's outputs (D, n, k) for all rows, then summarised
    f, noise = regressor._scaled_draws(X)
    mean, epistemic, aleatoric = draw_moments(f, noise.pow(2))
    expected = {"mean": mean, "predict": mean, "std": (epistemic + aleatoric).sqrt(),
                "total": (epistemic + aleatoric).sqrt(), "epistemic": epistemic.sqrt(),
                "aleatoric": aleatoric.sqrt()}
    for name, value in expected.items():
        np.testing.assert_array_equal(blocked[name], regressor._shape(value.numpy(), 1),
                                      err_msg=name)
    gen = skfbnn.device.make_generator(skfbnn.device.spawn_seed(3), torch.device("cpu"))
    samples = sample_regression(f, noise, 5, gen).numpy()
    np.testing.assert_array_equal(
        blocked["sample_y"], samples[:, 0, :] if regressor._single_output() else samples)
    # predict(return_cov=True) keeps all rows at once, with the same mean
    np.testing.assert_array_equal(regressor.predict(X, return_cov=True)[0], blocked["mean"])


def test_regression_blocks_and_row_order(regressor, data, monkeypatch):
    """One block against blocks of 7 rows and against the rows reversed: the network's
    float64 products round differently on blocks of other sizes (a few units in the last
    place), the summaries over draws do not."""
    X, _ = data
    _blocks(monkeypatch, len(X))
    whole = _summaries(regressor, X)
    _blocks(monkeypatch, BLOCK)
    blocked = _summaries(regressor, X)
    reverse = _summaries(regressor, X[::-1])
    for name, value in whole.items():
        np.testing.assert_allclose(blocked[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
        if name != "sample_y":  # the noise draws follow the rows' order, the rows do not
            np.testing.assert_allclose(reverse[name][::-1], value, rtol=1e-12, atol=1e-12,
                                       err_msg=name)
    assert not np.allclose(whole["sample_y"][:-1], whole["sample_y"][1:])  # rows differ


CLASSIFIERS = {
    "softmax": (skfbnn.SGHMCClassifier, FAST),
    "Metropolis-Hastings, argmax probabilities": (
        skfbnn.PCNClassifier, dict(n_chains=2, n_burnin=20, n_samples=4, thinning=2)),
    "ensemble": (skfbnn.DeepEnsembleClassifier, FAST_ENSEMBLE),
}


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_classification_blocks_equal_all_rows_at_once(name, data, monkeypatch):
    cls, budget = CLASSIFIERS[name]
    X, _ = data
    labels = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    est = _fit(cls(random_state=0, device="cpu", **budget), X, labels)
    _blocks(monkeypatch, BLOCK)
    proba = est.predict_proba(X)
    p = est._draw_probabilities(est._draws_at(X).to(torch.float64))  # (D, n, K), all rows
    np.testing.assert_array_equal(proba, p.movedim(0, -1).contiguous().mean(-1).numpy())
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(est.predict_log_proba(X), np.log(proba))
    np.testing.assert_array_equal(est.predict(X), est.classes_[proba.argmax(1)])
    _blocks(monkeypatch, len(X))
    np.testing.assert_allclose(est.predict_proba(X), proba, rtol=1e-12, atol=1e-15)
    _blocks(monkeypatch, BLOCK)
    np.testing.assert_allclose(est.predict_proba(X[::-1])[::-1], proba, rtol=1e-12, atol=1e-15)


def test_draws_and_covariance_keep_every_row(regressor, data, monkeypatch):
    """``predict_draws`` and ``return_cov`` are (D, n) and (n, n) by nature."""
    X, _ = data
    _blocks(monkeypatch, BLOCK)
    f, _ = regressor.predict_draws(X)
    assert f.shape[:2] == (np.prod(regressor.posterior_.shape), len(X))
    _, cov = regressor.predict(X, return_cov=True)
    assert cov.shape[:2] == (len(X), len(X))


def test_a_convolutional_network_sizes_its_blocks_by_its_activations(monkeypatch):
    """A CNN's rows make channels x positions values per layer, which its weight matrices
    do not show: the blocks are sized by the values counted in a forward pass."""
    from skfbnn.nn import CNN1d
    from skfbnn.nn.functional import values_per_row

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 12)), np.arange(30) % 3
    est = _fit(skfbnn.SGLDClassifier(network=CNN1d, network_params={"channels": 4},
                                     input_shape=(1, 12), random_state=0, device="cpu", **FAST),
               X, y)
    seen: list = []
    real = posterior_module.block_rows

    def spy(posterior, **kwargs):
        seen.append(kwargs)
        return real(posterior, **kwargs)

    monkeypatch.setattr(posterior_module, "block_rows", spy)

    def recount(*args):  # counted once at fit: a predict never copies the module again
        raise AssertionError("the values were counted again at predict")

    monkeypatch.setattr("skfbnn.estimators._base.forward_values", recount)
    est.predict_proba(X)
    counted = values_per_row(est.network_, (1, 12), 12)
    assert seen and all(kw["row_values"] == counted for kw in seen)
    weights_only = real(est.posterior_)  # the MLP rule: output widths of weight matrices
    assert real(est.posterior_, row_values=counted) < weights_only
