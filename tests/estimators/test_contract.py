"""Estimator contract shared by regressors and classifiers.

Determinism and RNG isolation, persistence, diagnostics, input validation,
divergence handling, logging, scikit-learn integration and devices.
"""

from __future__ import annotations

import copy
import logging
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from joblib import Parallel, delayed
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skfbnn
from skfbnn.device import resolve_device
from skfbnn.diagnostics import DISAGREEMENT_LIMIT, MC_ERROR_LIMIT, SamplerWarning
from skfbnn.estimators._params import method_params
from skfbnn.metrics import (
    make_coverage_scorer,
    neg_crps_scorer,
    neg_gaussian_nll_scorer,
)

from ._cases import (
    ALL,
    CLASSIFIERS,
    MH_CLASSIFIERS,
    MH_REGRESSORS,
    OPTIMISERS,
    REGRESSORS,
    SAMPLERS,
    family_of,
    fitted,
    ids,
    is_functional,
    make,
    method_of,
    step_name,
)

all_estimators = pytest.mark.parametrize("cls", ALL, ids=ids(ALL))
samplers = pytest.mark.parametrize("cls", SAMPLERS, ids=ids(SAMPLERS))
optimisers = pytest.mark.parametrize("cls", OPTIMISERS, ids=ids(OPTIMISERS))
DIVERGING = [c for c in ALL if family_of(c) != "ensemble"]  # Adam's bounded steps keep
# an ensemble finite at any learning rate; its failures show as warnings instead.
diverging = pytest.mark.parametrize("cls", DIVERGING, ids=ids(DIVERGING))
regressors = pytest.mark.parametrize("cls", REGRESSORS, ids=ids(REGRESSORS))
classifiers = pytest.mark.parametrize("cls", CLASSIFIERS, ids=ids(CLASSIFIERS))
TWO_KINDS = [skfbnn.SGLDRegressor, skfbnn.FunctionalSGHMCClassifier]
two_kinds = pytest.mark.parametrize("cls", TWO_KINDS, ids=ids(TWO_KINDS))


@pytest.fixture
def data(request, regression_data, classification_data):
    """The data set that suits the test's ``cls``."""
    cls = request.getfixturevalue("cls")
    return regression_data if is_regressor(cls()) else classification_data


def _outputs(est, X):
    """Everything an estimator predicts, as a list of arrays."""
    if is_regressor(est):
        mean, std = est.predict(X, return_std=True)
        return [mean, std, est.predict(X, return_cov=True)[1], est.sample_y(X, 3),
                *est.predict_draws(X)]
    return [est.predict_proba(X), est.predict_log_proba(X), est.predict(X)]


def _assert_outputs_equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=False):
        assert_array_equal(x, y)


def _with_method_params(est, **params):
    """``set_params`` for named estimators, ``method_params`` for the generic ones."""
    if est._generic:
        return est.set_params(method_params={**est.method_params, **params})
    return est.set_params(**params)


# ------------------------------------------------------------- determinism
@all_estimators
def test_same_seed_is_bitwise_reproducible(cls, data):
    X, y = data
    a = make(cls).fit(X, y)
    b = fitted(cls, X, y)  # an independent fit (cached, shared with other tests)
    out = _outputs(a, X)
    _assert_outputs_equal(_outputs(b, X), out)
    _assert_outputs_equal(_outputs(a, X), out)  # predicting twice changes nothing
    for k, v in a.posterior_.draws.items():
        assert torch.equal(v, b.posterior_.draws[k])
    a.fit(X, y)  # refitting the same object
    _assert_outputs_equal(_outputs(a, X), out)


@all_estimators
def test_different_seeds_differ(cls, data):
    X, y = data
    a = fitted(cls, X, y)
    b = fitted(cls, X, y, random_state=1)
    assert not np.array_equal(_outputs(a, X)[0], _outputs(b, X)[0])


@all_estimators
def test_global_rngs_untouched(cls, data):
    X, y = data
    torch.manual_seed(1234)
    np.random.seed(1234)
    torch_state = torch.get_rng_state()
    np_state = np.random.get_state()
    est = make(cls).fit(X, y)
    _outputs(est, X)
    if is_regressor(est):
        est.sample_y(X, 2, random_state=5)
    assert torch.equal(torch.get_rng_state(), torch_state)
    after = np.random.get_state()
    assert after[0] == np_state[0] and after[2:] == np_state[2:]
    assert_array_equal(after[1], np_state[1])


def test_random_state_none_leaves_torch_rng_alone_and_follows_numpy(regression_data):
    X, y = regression_data
    torch_state = torch.get_rng_state()
    np.random.seed(7)
    a = make(skfbnn.SGLDRegressor, random_state=None).fit(X, y).predict(X)
    b = make(skfbnn.SGLDRegressor, random_state=None).fit(X, y).predict(X)
    np.random.seed(7)
    c = make(skfbnn.SGLDRegressor, random_state=None).fit(X, y).predict(X)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert not np.array_equal(a, b)  # None: a fresh seed per fit, from numpy
    assert_array_equal(a, c)


@all_estimators
def test_predictions_do_not_depend_on_row_order(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    perm = np.random.default_rng(0).permutation(len(X))
    first = _outputs(est, X)[0]
    # Float64 predictions: equal up to BLAS summation order (measured 4e-16).
    assert_allclose(_outputs(est, X[perm])[0], first[perm], rtol=1e-12, atol=1e-12)
    assert_allclose(_outputs(est, X[:5])[0], first[:5], rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------- persistence
@all_estimators
def test_pickle_round_trip_reproduces_predictions(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    out = _outputs(est, X)
    loaded = pickle.loads(pickle.dumps(est))
    assert type(loaded) is cls
    assert loaded.get_params() == est.get_params()
    assert loaded.device_ == est.device_
    assert sorted(loaded.diagnostics_) == sorted(est.diagnostics_)
    _assert_outputs_equal(_outputs(loaded, X), out)
    _assert_outputs_equal(_outputs(est, X), out)  # pickling left est unchanged
    unfitted = pickle.loads(pickle.dumps(make(cls)))
    assert unfitted.get_params() == make(cls).get_params()


@all_estimators
def test_clone_and_deepcopy(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    out = _outputs(est, X)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        _outputs(cloned, X)
    _assert_outputs_equal(_outputs(cloned.fit(X, y), X), out)
    copied = copy.deepcopy(est)
    _assert_outputs_equal(_outputs(copied, X), out)
    for k, v in copied.posterior_.draws.items():
        assert v.data_ptr() != est.posterior_.draws[k].data_ptr()


# --------------------------------------------------------------- diagnostics
@samplers
def test_diagnostics_with_several_chains(cls, data):
    X, y = data
    budget = dict(n_chains=3, n_burnin=10, n_samples=4, thinning=3)
    est = fitted(cls, X, y, **budget)
    d = est.diagnostics_
    n_steps = budget["n_burnin"] + budget["n_samples"] * budget["thinning"]
    assert d["log_posterior"].shape == (n_steps, budget["n_chains"])
    assert np.isfinite(d["log_posterior"]).all()
    for key in ("r_hat", "ess_bulk", "ess_tail", "max_r_hat", "warnings"):
        assert key in d
    assert np.shape(d["r_hat"]) == np.shape(d["ess_bulk"]) == np.shape(d["ess_tail"])
    assert np.size(d["r_hat"]) >= 1
    assert d["max_r_hat"] == np.nanmax(d["r_hat"])
    assert isinstance(d["warnings"], list)
    assert all(isinstance(w, SamplerWarning) for w in d["warnings"])
    # The mixing warnings are raised exactly when the predictive-scale measures exceed
    # their limits (4 draws per chain would always fail the strict R-hat/ESS targets).
    for key in ("chain_disagreement", "mc_error"):
        assert np.shape(d[key]) == np.shape(d["r_hat"])
    kinds = {w.kind for w in d["warnings"]}
    assert ("rhat" in kinds) == (d["max_chain_disagreement"] > DISAGREEMENT_LIMIT)
    assert ("ess" in kinds) == (d["max_mc_error"] > MC_ERROR_LIMIT)


@samplers
def test_diagnostics_with_one_chain(cls, data):
    X, y = data
    est = fitted(cls, X, y, n_chains=1, n_burnin=10, n_samples=4, thinning=3)
    d = est.diagnostics_
    assert d["log_posterior"].shape == (22, 1)
    assert "r_hat" not in d
    assert isinstance(d["warnings"], list)


# ---------------------------------------------------------- input validation
def _bad_inputs(X, y):
    Xnan, Xinf = X.copy(), X.copy()
    Xnan[3, 1], Xinf[5, 0] = np.nan, np.inf
    return {
        "nan-X": (Xnan, y, ValueError, "NaN"),
        "inf-X": (Xinf, y, ValueError, "infinity"),
        "empty-X": (X[:0], y[:0], ValueError, "0 sample"),
        "no-features": (X[:, :0], y, ValueError, "0 feature"),
        "1d-X": (X[:, 0], y, ValueError, "2D array"),
        "sparse-X": (sp.csr_matrix(X), y, TypeError, "[Ss]parse"),
        "string-X": (np.full(X.shape, "abc"), y, ValueError, "convert string to float"),
        "length-mismatch": (X, y[:-3], ValueError, "inconsistent numbers of samples"),
    }


BAD_INPUTS = list(_bad_inputs(np.zeros((8, 2)), np.zeros(8)))


def _assert_not_torch(excinfo):
    assert not type(excinfo.value).__module__.startswith("torch")
    assert not isinstance(excinfo.value, RuntimeError)


@all_estimators
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_fit_input_raises_clear_error(cls, case, data):
    X, y = data
    Xb, yb, exc, match = _bad_inputs(X, y)[case]
    with pytest.raises(exc, match=match) as excinfo:
        make(cls).fit(Xb, yb)
    _assert_not_torch(excinfo)


@all_estimators
@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_non_finite_target_raises(cls, bad, data):
    X, y = data
    y = np.where(y == y[0], 1.0, 0.0) if y.dtype.kind == "U" else y.copy()
    y[2] = float(bad)
    match = "NaN" if bad == "nan" else "infinity"
    with pytest.raises(ValueError, match=match) as excinfo:
        make(cls).fit(X, y)
    _assert_not_torch(excinfo)


@all_estimators
def test_bad_predict_input_raises_clear_error(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    n = X.shape[1]
    methods = ["predict", "predict_std", "sample_y"] if is_regressor(est) else [
        "predict", "predict_proba", "predict_log_proba"]
    wrong = np.zeros((4, n + 1))
    for name in methods:
        method = getattr(est, name)
        match = f"X has {n + 1} features.*expecting {n} features"
        with pytest.raises(ValueError, match=match):
            method(wrong)
        for case in ("nan-X", "inf-X", "1d-X", "sparse-X", "string-X", "empty-X"):
            Xb, _, exc, match = _bad_inputs(X, y)[case]
            with pytest.raises(exc, match=match) as excinfo:
                method(Xb)
            _assert_not_torch(excinfo)


@all_estimators
def test_unfitted_predict_raises_not_fitted(cls, data):
    X, _ = data
    est = make(cls)
    names = ("predict", "predict_proba", "predict_std", "sample_y", "predict_draws",
             "predict_proba_draws")
    for name in names:
        if hasattr(est, name):
            with pytest.raises(NotFittedError):
                getattr(est, name)(X)


COMMON_BAD = [
    ("hidden_layer_sizes", (0,)),
    ("hidden_layer_sizes", (4, -1)),
    ("hidden_layer_sizes", (2.5,)),
    ("activation", "bogus"),
    ("device", "tpu"),
    ("device", "bogus-device"),
    ("dtype", "float16"),
    ("batch_size", 0),
    ("network", "bogus"),
    ("network_params", [1]),
    ("input_shape", (0, 3)),
]
FAMILY_BAD = {
    "sgmcmc": [("step_size", -1.0), ("step_size", 0.0), ("n_chains", 0), ("n_samples", 0),
                ("thinning", 0), ("temperature", -1.0), ("schedule", "bogus")],
    "vi": [("learning_rate", -1.0), ("learning_rate", 0.0), ("n_iter", 0),
                     ("n_samples", 0), ("lr_schedule", "bogus")],
    "ensemble": [("learning_rate", 0.0), ("n_iter", 0), ("n_estimators", 0),
                 ("lr_schedule", "bogus")],
}
METHOD_BAD = [("n_mc", 0), ("divergence", "bogus"), ("init_std", 0.0), ("beta", -1.0),
              ("w2_reduction", "bogus"), ("aggregate", "bogus"), ("n_particles", 1),
              ("kl_scale", "bogus"), ("w2_interval", 0),
              ("w2_interval", 1.5)]
"""Bad values of method-specific parameters, tried on the estimators that have them."""
REGRESSION_BAD = [("noise_std", -1.0), ("noise_std", "bogus"), ("normalize_y", "yes")]
FUNCTIONAL_BAD = [
    ("kernel", "bogus"),
    ("prior_fit_iter", -1),
    ("n_measurement_points", 0),
    ("measurement_train_fraction", 1.5),
]


def _bad_param_cases():
    for cls in ALL:
        cases = COMMON_BAD + FAMILY_BAD[family_of(cls)]
        cases += REGRESSION_BAD if is_regressor(cls()) else []
        cases += FUNCTIONAL_BAD if is_functional(cls) else [("prior_std", 0.0)]
        own = {p.name for p in method_params(method_of(cls), "regression")}
        cases += [(name, value) for name, value in METHOD_BAD if name in own]
        for name, value in cases:
            yield pytest.param(cls, name, value, id=f"{cls.__name__}-{name}={value!r}")


@pytest.mark.parametrize("cls, name, value", list(_bad_param_cases()))
def test_bad_hyperparameter_raises_value_error_naming_it(cls, name, value, data):
    X, y = data
    with pytest.raises(ValueError, match=name) as excinfo:
        make(cls, **{name: value}).fit(X, y)
    _assert_not_torch(excinfo)


@pytest.mark.parametrize(
    "cls",
    [skfbnn.BayesianNetRegressor, skfbnn.BayesianNetClassifier],
    ids=["BayesianNetRegressor", "BayesianNetClassifier"],
)
@pytest.mark.parametrize(
    "params, match",
    [
        (dict(method_params={"bogus": 1}), "bogus"),
        (dict(method="sgld", method_params={"kernel": "rbf"}), "kernel"),
        (dict(method="fsgld", method_params={"friction": 0.1}), "friction"),
        (dict(method_params={"step_size": -1}), "step_size"),
        (dict(method="bogus"), "method"),
        (dict(method_params="n_chains=2"), "method_params"),
    ],
    ids=["unknown-key", "kernel-for-sgld", "friction-for-fsgld", "bad-value",
         "bad-method", "not-a-dict"],
)
def test_generic_estimator_validates_method_params(cls, params, match, data):
    X, y = data
    with pytest.raises(ValueError, match=match) as excinfo:
        cls(random_state=0, device="cpu", **params).fit(X, y)
    _assert_not_torch(excinfo)


# ---------------------------------------------------------------- divergence
@diverging
def test_huge_step_size_raises_divergence_error(cls, data):
    X, y = data
    est = make(cls, **{step_name(cls): 1e6})
    with pytest.raises(skfbnn.SamplerDivergenceError, match="step size") as excinfo:
        est.fit(X, y)
    assert isinstance(excinfo.value, RuntimeError)
    with pytest.raises(NotFittedError):  # no half-fitted estimator is left behind
        _outputs(est, X)


@diverging
def test_failed_refit_does_not_keep_stale_draws(cls, data):
    X, y = data
    est = make(cls).fit(X, y)
    _with_method_params(est, **{step_name(cls): 1e6})
    with pytest.raises(skfbnn.SamplerDivergenceError):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        _outputs(est, X)


@pytest.mark.parametrize(
    "cls, step_size",
    [(cls, s) for cls in REGRESSORS for s in (1.0, 10.0, 100.0)]
    + [(cls, 10.0) for cls in CLASSIFIERS],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v),
)
def test_large_step_sizes_never_give_non_finite_predictions(cls, step_size, data):
    X, y = data
    try:
        est = make(cls, **{step_name(cls): step_size}).fit(X, y)
    except skfbnn.SamplerDivergenceError as exc:
        assert "step size" in str(exc)
        return
    out = _outputs(est, X)
    if is_regressor(est):
        assert all(np.isfinite(o).all() for o in out)
    else:
        proba, log_proba, _ = out
        assert np.isfinite(proba).all()
        assert not np.isnan(log_proba).any() and (log_proba <= 0).all()


# ------------------------------------------------------------------ logging
@two_kinds
def test_verbose_zero_is_silent(cls, data, capsys, caplog):
    X, y = data
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="skfbnn")
    est = make(cls, verbose=0).fit(X, y)
    _outputs(est, X)
    assert est.diagnostics_["warnings"]  # there was something to log
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert caplog.records == []


@two_kinds
def test_verbose_levels_log_and_show_progress(cls, data, capsys, caplog):
    X, y = data
    caplog.set_level(logging.DEBUG, logger="skfbnn")
    make(cls, verbose=1).fit(X, y)
    assert "sampling" in capsys.readouterr().err  # the progress bar
    assert not [r for r in caplog.records if r.levelno == logging.INFO]
    assert [r for r in caplog.records if r.levelno == logging.WARNING]  # diagnostics
    caplog.clear()
    make(cls, verbose=2).fit(X, y)
    info = [r for r in caplog.records
            if r.name == "skfbnn" and r.levelno == logging.INFO]
    assert info and all("log posterior" in r.getMessage() for r in info)


# -------------------------------------------------------------- sklearn API
@regressors
def test_pipeline_forwards_return_std(cls, regression_data):
    X, y = regression_data
    pipe = make_pipeline(StandardScaler(), make(cls)).fit(X, y)
    mean, std = pipe.predict(X[:6], return_std=True)
    assert mean.shape == std.shape == (6,)
    assert np.isfinite(mean).all() and (std > 0).all()
    est = make(cls).fit(StandardScaler().fit_transform(X), y)
    assert_array_equal(mean, est.predict(StandardScaler().fit(X).transform(X[:6])))


@classifiers
def test_classifier_pipeline_and_cross_val_score(cls, classification_data):
    X, y = classification_data
    pipe = make_pipeline(StandardScaler(), make(cls))
    res = cross_validate(pipe, X, y, cv=2, scoring=["accuracy", "neg_log_loss"])
    acc, log_loss = res["test_accuracy"], res["test_neg_log_loss"]
    assert np.isfinite(acc).all() and acc.min() > 0.7
    assert np.isfinite(log_loss).all() and (log_loss < 0).all()


@pytest.mark.parametrize("cls", [skfbnn.SGLDRegressor, skfbnn.FunctionalSGHMCRegressor,
                                 skfbnn.BayesianNetRegressor],
                         ids=["SGLDRegressor", "FunctionalSGHMCRegressor",
                              "BayesianNetRegressor"])
def test_cross_validation_with_probabilistic_scorers(cls, regression_data):
    X, y = regression_data
    est = make(cls)
    nll = cross_val_score(est, X, y, cv=2, scoring=neg_gaussian_nll_scorer)
    assert nll.shape == (2,) and np.isfinite(nll).all()
    res = cross_validate(est, X, y, cv=2, scoring={
        "nll": neg_gaussian_nll_scorer, "crps": neg_crps_scorer,
        "coverage": make_coverage_scorer(0.9)})
    assert_array_equal(res["test_nll"], nll)  # same seed, same folds
    assert np.isfinite(res["test_crps"]).all() and (res["test_crps"] < 0).all()
    assert ((res["test_coverage"] >= 0) & (res["test_coverage"] <= 1)).all()


def _worker_threads():
    return torch.get_num_threads()


def _threads_scorer(est, X, y):
    return float(torch.get_num_threads())


def test_parallel_workers_are_not_oversubscribed():
    """joblib's loky backend caps OMP threads per worker at cpu_count // n_jobs.

    torch reads ``OMP_NUM_THREADS`` when it starts in the worker, so each
    worker's intra-op pool is already limited; skfbnn does nothing for this.
    """
    limit = max(1, (os.cpu_count() or 1) // 2)
    threads = Parallel(n_jobs=2)(delayed(_worker_threads)() for _ in range(4))
    assert len(threads) == 4 and max(threads) <= limit


def test_grid_search_in_parallel(regression_data):
    X, y = regression_data
    grid = [1e-3, 1e-2]
    search = GridSearchCV(
        make(skfbnn.SGLDRegressor), {"step_size": grid}, cv=2, n_jobs=2,
        scoring={"nll": neg_gaussian_nll_scorer, "threads": _threads_scorer},
        refit="nll",
    ).fit(X, y)
    assert search.best_params_["step_size"] in grid
    assert np.isfinite(search.cv_results_["mean_test_nll"]).all()
    limit = max(1, (os.cpu_count() or 1) // 2)
    assert search.cv_results_["mean_test_threads"].max() <= limit
    direct = make(skfbnn.SGLDRegressor, **search.best_params_).fit(X, y)
    assert_array_equal(search.predict(X), direct.predict(X))


@pytest.mark.parametrize("limit, inside", [(16 * 2 * 101, 2), (16 * 2 * 101 + 1, 1)],
                         ids=["large", "small"])
def test_a_fit_uses_every_thread_for_large_steps_only(monkeypatch, regression_data, limit,
                                                      inside):
    """The work of a step is its rows x parameter sets x values per row (here 16 rows, 2
    chains, 50 + 50 + 1 values of the default network): from ``PARALLEL_WORK`` on the run
    uses every thread torch had before the fit, else one; the user's count is restored."""
    import skfbnn.device as dev
    import skfbnn.estimators._base as base

    X, y = regression_data
    seen = []
    real = base.infer

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "infer", spy)
    monkeypatch.setattr(dev, "PARALLEL_WORK", limit)
    monkeypatch.setattr(dev, "FIT_THREADS", None)  # the default, whatever ran before
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        make(skfbnn.SGLDRegressor, n_chains=2, batch_size=16).fit(X, y)
        after = torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    assert seen == [inside] and after == 2


# ------------------------------------------------------------------ devices
@all_estimators
def test_cpu_device(cls, data):
    X, y = data
    est = fitted(cls, X, y)
    assert est.device_ == torch.device("cpu")
    assert all(v.device.type == "cpu" for v in est.posterior_.draws.values())


def test_device_object_and_auto(regression_data):
    X, y = regression_data
    est = make(skfbnn.SGLDRegressor, device=torch.device("cpu")).fit(X, y)
    assert est.device_ == torch.device("cpu")
    auto = make(skfbnn.SGLDRegressor, device="auto").fit(X, y)
    assert auto.device_ == resolve_device("auto")


_PREDICT_ON_CPU = """
import pickle, sys
import numpy as np, torch
assert not torch.cuda.is_available()
est = pickle.load(open(sys.argv[1], "rb"))
X = np.load(sys.argv[2])
out = est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)
np.save(sys.argv[3], out)
"""


_MH = [*MH_REGRESSORS, *MH_CLASSIFIERS]
_MH_TINY = dict(n_chains=2, n_burnin=20, n_samples=4, thinning=2, hidden_layer_sizes=(16,))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", [*ALL, *_MH], ids=ids([*ALL, *_MH]))
def test_cuda_fit_predict_and_pickle(cls, tmp_path):
    """Every estimator fits and predicts on CUDA, and a pickled fit predicts the same on a
    machine without one."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=40)
    if not is_regressor(cls()):
        y = np.where(y > 0, "yes", "no")
    mh = cls in _MH
    est = (cls(random_state=0, device="cuda", **_MH_TINY) if mh else make(cls, device="cuda"))
    est.fit(X, y)
    assert est.device_.type == "cuda"
    assert all(v.device.type == "cuda" for v in est.posterior_.draws.values())
    out = _outputs(est, X)
    assert all(np.isfinite(o).all() for o in out if o.dtype.kind == "f")
    loaded = pickle.loads(pickle.dumps(est))
    assert all(v.device.type == "cpu" for v in loaded.posterior_.draws.values())
    first = out[0]
    assert_allclose(_outputs(loaded, X)[0], first, rtol=1e-9, atol=1e-12)
    # Unpickle and predict in a process that cannot see any GPU.
    (tmp_path / "est.pkl").write_bytes(pickle.dumps(est))
    np.save(tmp_path / "X.npy", X)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    subprocess.run(
        [sys.executable, "-c", _PREDICT_ON_CPU, str(tmp_path / "est.pkl"),
         str(tmp_path / "X.npy"), str(tmp_path / "out.npy")],
        check=True, env=env, timeout=300,
    )
    assert_allclose(np.load(tmp_path / "out.npy"), first, rtol=1e-9, atol=1e-12)
