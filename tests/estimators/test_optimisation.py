"""Optimisation-based estimators (BBB, deep ensembles): diagnostics, heads, determinism."""

from __future__ import annotations

import logging
import pickle

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal

import skfbnn
from skfbnn.diagnostics import SamplerWarning
from skfbnn.inference.families import optimisation_steps
from skfbnn.posterior import Ensemble, MeanFieldGaussian

from ._cases import OPTIMISERS, family_of, fitted, ids, make

optimisers = pytest.mark.parametrize("cls", OPTIMISERS, ids=ids(OPTIMISERS))


@pytest.fixture
def data(request, regression_data, classification_data):
    cls = request.getfixturevalue("cls")
    return regression_data if "Regressor" in cls.__name__ else classification_data


@optimisers
def test_diagnostics_trace_the_objective(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    d = est.diagnostics_
    n_batch = est.posterior_.shape[0]
    steps = optimisation_steps(est.get_params(), len(X))
    assert steps == 60  # the tiny budget: n_iter wins over min_epochs
    assert d["objective"].shape == (steps, n_batch) and np.isfinite(d["objective"]).all()
    assert "grad_norm" in d["trace"] and d["trace"]["grad_norm"].shape == (steps, n_batch)
    assert isinstance(d["warnings"], list)
    assert all(isinstance(w, SamplerWarning) for w in d["warnings"])


@pytest.mark.parametrize("cls", [
    pytest.param(c, marks=pytest.mark.xfail(
        strict=True, reason="the SSGE KL surrogate on a fresh measurement set every step "
        "makes the objective too noisy for the block test to see the slow climb")) if c in (
        skfbnn.FBNNClassifier,) else c for c in OPTIMISERS], ids=ids(OPTIMISERS))
def test_a_short_run_warns_that_it_has_not_converged(cls, data):
    """800 steps at a small constant rate have not converged. The fBNN and ifBNN regressors
    (two GELU layers) do converge in 800 steps at 1e-4 (their objectives level off from the
    fifth of eight blocks; ifBNN's block means -1.773, -1.734, -1.715, -1.713), so they get
    3e-5, where they are still climbing at the end (ifBNN: -3.96 to -3.41 in the last two).
    The ifBNN classifier at 1e-4 still climbs, but by 0.02 per 100 steps, under three
    standard errors of its noisy objective; at 3e-5 it climbs 0.03-0.04 per 100 steps."""
    X, y = data
    rate = 3e-5 if cls in (skfbnn.FBNNRegressor, skfbnn.IFBNNRegressor,
                           skfbnn.IFBNNClassifier) else 1e-4
    est = make(cls, n_iter=800, lr_schedule="constant", learning_rate=rate).fit(X, y)
    assert "convergence" in {w.kind for w in est.diagnostics_["warnings"]}


@optimisers
def test_posterior_kind_and_fixed_prediction_draws(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    kind = MeanFieldGaussian if family_of(cls) == "vi" else Ensemble
    assert isinstance(est.posterior_, kind)
    out = est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)
    assert_array_equal(out, est.predict_proba(X) if hasattr(est, "predict_proba")
                       else est.predict(X))
    loaded = pickle.loads(pickle.dumps(est))
    assert isinstance(loaded.posterior_, kind)


def test_ensemble_std_splits_member_spread_and_heads(regression_data):
    X, y = regression_data
    est = fitted(skfbnn.DeepEnsembleRegressor, X, y)
    f, noise = est.predict_draws(X)  # (M, n) member means and head stds
    assert f.shape == noise.shape == (3, len(X))
    assert_allclose(est.predict_std(X, kind="epistemic"), f.std(0), rtol=1e-10)
    assert_allclose(est.predict_std(X, kind="aleatoric"), np.sqrt((noise**2).mean(0)),
                    rtol=1e-10)
    assert np.ptp(noise, axis=1).min() > 0  # heteroscedastic: varies across points


def test_min_epochs_sets_the_run_length(regression_data):
    X, y = regression_data  # 40 rows: batch_size 8 gives 5 steps per epoch
    est = make(skfbnn.DeepEnsembleRegressor, n_iter=10, min_epochs=7, batch_size=8).fit(X, y)
    assert est.diagnostics_["objective"].shape == (35, 3)


def test_a_method_default_of_the_run_length_reaches_the_run(regression_data):
    """BBB's and the ifBNN regressor's own n_iter default (20 000) replaces the optimisation
    family's (10 000, which fBNN and the ifBNN classifier keep); set or not, it sets the run
    length, and build never sees it. Likewise the fBNN and ifBNN regressors' validation_fraction
    (0.2) and early stopping replace the family's 0 and False."""
    assert skfbnn.BBBRegressor().n_iter == skfbnn.BBBClassifier().n_iter == 20000
    assert skfbnn.IFBNNRegressor().n_iter == 20000 and skfbnn.IFBNNRegressor().early_stopping
    assert skfbnn.IFBNNClassifier().n_iter == skfbnn.FBNNRegressor().n_iter == 10000
    assert skfbnn.IFBNNClassifier().validation_fraction == 0.0
    assert not skfbnn.IFBNNClassifier().early_stopping
    assert skfbnn.BBBRegressor().validation_fraction == 0.0
    assert skfbnn.FBNNRegressor().validation_fraction == 0.2
    assert skfbnn.FBNNRegressor().early_stopping and not skfbnn.FBNNClassifier().early_stopping
    assert skfbnn.IFBNNRegressor().validation_fraction == 0.2
    X, y = regression_data  # 40 rows, full batch: one step per epoch
    est = make(skfbnn.BBBRegressor, n_iter=12, batch_size=64).fit(X, y)
    assert est.diagnostics_["objective"].shape[0] == 12
    generic = skfbnn.BayesianNetRegressor(method="bbb", random_state=0, method_params={
        "n_iter": 9, "batch_size": 64, "n_samples": 4}).fit(X, y)
    assert generic.diagnostics_["objective"].shape[0] == 9


def test_fbnn_has_its_own_network(regression_data):
    """fBNN's two GELU layers of 32 and ifBNN's two of 50 replace the library's one tanh
    layer of 50, for both tasks and through the generic estimator; a given network still
    wins."""
    for cls, sizes in ((skfbnn.FBNNRegressor, (32, 32)), (skfbnn.FBNNClassifier, (32, 32)),
                       (skfbnn.IFBNNRegressor, (50, 50)), (skfbnn.IFBNNClassifier, (50, 50))):
        assert (cls().hidden_layer_sizes, cls().activation) == (sizes, "gelu")
    assert skfbnn.BBBRegressor().hidden_layer_sizes == (50,)
    X, y = regression_data
    budget = {"n_iter": 3, "n_particles": 4, "n_measurement_points": 8, "prior_fit_iter": 5,
              "n_samples": 2}
    generic = skfbnn.BayesianNetRegressor(method="fbnn", random_state=0, device="cpu",
                                          method_params=budget).fit(X, y)
    mean = generic.posterior_.mean
    assert tuple(mean["0.weight"].shape[-2:]) == (32, X.shape[1])
    assert tuple(mean["2.weight"].shape[-2:]) == (32, 32)
    assert isinstance(generic.network_[1], torch.nn.GELU)
    small = make(skfbnn.FBNNRegressor, hidden_layer_sizes=(8,), activation="tanh",
                 **budget).fit(X, y)
    assert tuple(small.posterior_.mean["0.weight"].shape[-2:]) == (8, X.shape[1])


def test_fbnn_kl_scale_defaults_per_task():
    """The fBNN classifier counts the KL once per data set (the full-data ELBO); the regressor
    keeps the reference's once per minibatch; either can be set."""
    assert skfbnn.FBNNClassifier().kl_scale == "full"
    assert skfbnn.FBNNRegressor().kl_scale == "batch"
    assert skfbnn.FBNNClassifier(kl_scale="batch").kl_scale == "batch"


def test_ensemble_with_fixed_noise_has_no_heads(regression_data):
    X, y = regression_data
    est = fitted(skfbnn.DeepEnsembleRegressor, X, y, noise_std=0.5)
    assert est.network_[-1].out_features == 1
    assert_allclose(est.predict_std(X, kind="aleatoric"), 0.5, rtol=1e-12)


def test_bbb_w2_divergence_runs(regression_data):
    X, y = regression_data
    kl = fitted(skfbnn.BBBRegressor, X, y)
    w2 = fitted(skfbnn.BBBRegressor, X, y, divergence="w2")
    assert not np.allclose(kl.predict(X), w2.predict(X))
    assert np.isfinite(w2.predict_std(X)).all()


@pytest.mark.parametrize("cls", [skfbnn.BBBRegressor, skfbnn.DeepEnsembleClassifier],
                         ids=["BBBRegressor", "DeepEnsembleClassifier"])
def test_verbose_progress_shows_the_objective(cls, data, capsys, caplog):
    X, y = data
    caplog.set_level(logging.DEBUG, logger="skfbnn")
    make(cls, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "optimising" in err and "objective" in err
    caplog.clear()
    make(cls, verbose=2).fit(X, y)
    info = [r for r in caplog.records if r.name == "skfbnn" and r.levelno == logging.INFO]
    assert info and all("objective" in r.getMessage() for r in info)
    capsys.readouterr()
    make(cls, verbose=0).fit(X, y)
    assert capsys.readouterr().err == ""


def test_generic_estimator_runs_the_new_methods(regression_data):
    X, y = regression_data
    for method, params in [("bbb", dict(n_iter=60, n_samples=8)),
                           ("ensemble", dict(n_iter=60, n_estimators=2))]:
        est = skfbnn.BayesianNetRegressor(method=method, method_params=params, random_state=0,
                                          device="cpu").fit(X, y)
        named = (skfbnn.BBBRegressor if method == "bbb" else skfbnn.DeepEnsembleRegressor)(
            random_state=0, device="cpu", **params).fit(X, y)
        assert_array_equal(est.predict(X), named.predict(X))


@pytest.mark.parametrize("cls", [skfbnn.DeepEnsembleRegressor, skfbnn.DeepEnsembleClassifier],
                         ids=["DeepEnsembleRegressor", "DeepEnsembleClassifier"])
def test_ensemble_with_held_out_rows(cls, data):
    X, y = data
    a = make(cls, validation_fraction=0.25).fit(X, y)
    b = make(cls, validation_fraction=0.25).fit(X, y)
    plain = fitted(cls, X, y)
    out = (lambda e: e.predict_proba(X)) if hasattr(a, "predict_proba") else (
        lambda e: e.predict(X, return_std=True)[1])
    assert np.isfinite(out(a)).all()
    assert_array_equal(out(a), out(b))  # deterministic
    assert not np.array_equal(out(a), out(plain))


MEAN_FIELD = [c for c in OPTIMISERS if family_of(c) == "vi"]


@pytest.mark.parametrize("cls", MEAN_FIELD, ids=ids(MEAN_FIELD))
def test_variational_held_out_rows_set_only_a_learned_regression_noise(cls, data):
    """``validation_fraction`` (and ``early_stopping``) change a regressor with a learned
    noise (deterministically) and nothing else: a classifier and a fixed ``noise_std`` train
    on all rows as before."""
    X, y = data
    held = make(cls, validation_fraction=0.25).fit(X, y)
    stopped = make(cls, validation_fraction=0.25, early_stopping=True).fit(X, y)
    plain = fitted(cls, X, y)
    if hasattr(held, "predict_proba"):
        assert_array_equal(held.predict_proba(X), plain.predict_proba(X))
        assert_array_equal(stopped.predict_proba(X), plain.predict_proba(X))
        return
    noise = lambda e: e.predict_draws(X)[1]  # noqa: E731
    assert not np.array_equal(noise(held), noise(plain))
    assert np.isfinite(stopped.predict(X, return_std=True)).all()  # the checkpoint: families
    assert_array_equal(noise(held), noise(make(cls, validation_fraction=0.25).fit(X, y)))
    fixed = [make(cls, noise_std=0.3, validation_fraction=f).fit(X, y) for f in (0.0, 0.25)]
    assert_array_equal(*(e.predict(X, return_std=True)[1] for e in fixed))


def _near_noiseless_line(n=40):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 2))
    return X, X[:, 0] + 0.5 * X[:, 1] + 0.01 * rng.normal(size=n)


def _divergence_warnings(est, X, y):
    import warnings

    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [w for w in found if issubclass(w.category, skfbnn.SamplerDivergenceWarning)]


def test_a_deep_ensemble_whose_heads_shrink_does_not_warn_of_divergence():
    """The beta-NLL heads' weights v_i = var_i^beta shrink as the variances do, so the
    weighted sum fell towards 0 while the fit improved, and a warm refit (which starts near
    its best, so any fall counts) warned ``fell well below its best``; the trace is the
    log-likelihood itself, which rises. A step 30 times the default's still warns."""
    X, y = _near_noiseless_line()
    tiny = dict(n_estimators=2, hidden_layer_sizes=(16,), min_epochs=0, n_iter=300,
                random_state=0, device="cpu")
    est = skfbnn.DeepEnsembleRegressor(warm_start=True, learning_rate=0.01, **tiny)
    assert not _divergence_warnings(est, X, y)
    assert not _divergence_warnings(est, X, y)  # the warm refit
    objective = est.diagnostics_["objective"]
    assert (objective[-15:].mean(0) > objective[:15].mean(0)).all()
    too_large = skfbnn.DeepEnsembleRegressor(learning_rate=0.1, lr_schedule="constant", **tiny)
    found = _divergence_warnings(too_large, X, y)
    assert found and "fell well below its best" in str(found[0].message)
    assert "learning_rate" in str(found[0].message)
