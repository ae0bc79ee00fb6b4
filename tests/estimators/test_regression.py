"""Regression contract: GaussianProcessRegressor-style outputs, units, uncertainty.

Every regressor runs the 1-D cases; the variants that exercise only the shared
regression part (:mod:`skfbnn.estimators._regression`) run on a weight-space
and a function-space estimator to keep the suite fast.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.gaussian_process import GaussianProcessRegressor

import skfbnn

from ._cases import REGRESSORS, family_of, fitted, ids, n_draws

N_TEST = 7  # != n_train and != n_samples below, so swapped axes are caught
TWO = [skfbnn.SGLDRegressor, skfbnn.FunctionalSGHMCRegressor]

regressors = pytest.mark.parametrize("cls", REGRESSORS, ids=ids(REGRESSORS))
two_regressors = pytest.mark.parametrize("cls", TWO, ids=ids(TWO))
shapes = pytest.mark.parametrize("n_outputs", [None, 2], ids=["1d", "n-by-2"])


def _targets(y, n_outputs):
    """``None``: (n,); 1: (n, 1); 2: (n, 2) with distinguishable columns."""
    if n_outputs is None:
        return y
    if n_outputs == 1:
        return y[:, None]
    return np.c_[y, 50.0 - y]


def _as_3d(a):
    return a if a.ndim == 3 else a[..., None]


def _as_2d(a):
    return a if a.ndim == 2 else a[:, None]


# ------------------------------------------------------------------ shapes
def _check_gpr_shapes(est, X, Y, expected_mean_shape):
    Xt = X[:N_TEST]
    gpr = GaussianProcessRegressor(optimizer=None).fit(X, Y)
    mean = est.predict(Xt)
    mean_s, std = est.predict(Xt, return_std=True)
    mean_c, cov = est.predict(Xt, return_cov=True)
    assert mean.shape == expected_mean_shape
    assert mean.shape == gpr.predict(Xt).shape
    assert std.shape == gpr.predict(Xt, return_std=True)[1].shape
    assert cov.shape == gpr.predict(Xt, return_cov=True)[1].shape
    assert est.sample_y(Xt, 5).shape == gpr.sample_y(Xt, 5).shape
    for a in (mean, mean_s, mean_c, std, cov):
        assert a.dtype == np.float64
        assert np.isfinite(a).all()
    assert (std > 0).all()
    assert_array_equal(mean_s, mean)
    assert_array_equal(mean_c, mean)
    # The covariance is symmetric and its diagonal is the squared std.
    cov3 = _as_3d(cov)
    assert_allclose(cov3, cov3.transpose(1, 0, 2), rtol=1e-12, atol=1e-12)
    assert_allclose(np.einsum("iik->ik", cov3), _as_2d(std) ** 2, rtol=1e-10)
    with pytest.raises(RuntimeError, match="return_std or return_cov"):
        est.predict(Xt, return_std=True, return_cov=True)


@regressors
@shapes
def test_output_shapes_match_gaussian_process_regressor(
    cls, n_outputs, regression_data
):
    X, y = regression_data
    Y = _targets(y, n_outputs)
    expected = (N_TEST,) if n_outputs is None else (N_TEST, 2)
    _check_gpr_shapes(fitted(cls, X, Y), X, Y, expected)


def test_n_by_1_target_predicts_1d_like_gaussian_process_regressor(regression_data):
    X, y = regression_data
    Y = _targets(y, 1)
    est = fitted(skfbnn.SGLDRegressor, X, Y)
    _check_gpr_shapes(est, X, Y, (N_TEST,))
    assert est.sample_y(X[:N_TEST], 3).shape == (N_TEST, 3)


@regressors
def test_multi_output_columns_follow_y(cls, regression_data):
    X, y = regression_data
    mean = fitted(cls, X, _targets(y, 2)).predict(X)
    # Column 0 tracks y and column 1 tracks 50 - y (swapped columns fail both).
    assert np.corrcoef(mean[:, 0], y)[0, 1] > 0.9
    assert np.corrcoef(mean[:, 1], 50.0 - y)[0, 1] > 0.9
    assert np.abs(mean[:, 1] - (50.0 - y)).mean() < 2.0


@regressors
@shapes
def test_predict_draws_shapes_with_learned_noise(cls, n_outputs, regression_data):
    X, y = regression_data
    est = fitted(cls, X, _targets(y, n_outputs))
    assert est.noise_std == "learn"
    f, noise = est.predict_draws(X[:N_TEST])
    D = n_draws(cls)
    heads = family_of(cls) == "ensemble"  # one noise std per point from the variance heads
    if n_outputs is None:
        assert f.shape == (D, N_TEST)
        assert noise.shape == ((D, N_TEST) if heads else (D,))
    else:
        assert f.shape == (D, N_TEST, 2)
        assert noise.shape == ((D, N_TEST, 2) if heads else (D, 2))
    assert np.isfinite(f).all() and (noise > 0).all() and np.isfinite(noise).all()
    # The draws are what predict summarises.
    assert_allclose(f.mean(0), est.predict(X[:N_TEST]), rtol=1e-10, atol=1e-10)
    if family_of(cls) == "optimization":  # BBB: the noise is a point estimate
        assert np.ptp(noise, axis=0).max() == 0
    else:  # sampled with the weights, or predicted by each member's head
        assert np.ptp(noise, axis=0).min() > 0


@regressors
@shapes
def test_sample_y_shape_and_seeding(cls, n_outputs, regression_data):
    X, y = regression_data
    est = fitted(cls, X, _targets(y, n_outputs))
    Xt = X[:N_TEST]
    a = est.sample_y(Xt, n_samples=5, random_state=3)
    expected = (N_TEST, 5) if n_outputs is None else (N_TEST, 2, 5)
    assert a.shape == expected
    assert a.dtype == np.float64 and np.isfinite(a).all()
    assert_array_equal(est.sample_y(Xt, n_samples=5, random_state=3), a)
    assert not np.array_equal(est.sample_y(Xt, n_samples=5, random_state=4), a)
    assert_array_equal(
        est.sample_y(Xt, 5, random_state=np.random.RandomState(3)),
        est.sample_y(Xt, 5, random_state=np.random.RandomState(3)),
    )
    # The samples differ from each other (noise is added to every one).
    assert not np.allclose(a[..., 0], a[..., 1])
    with pytest.raises(ValueError, match="n_samples"):
        est.sample_y(Xt, n_samples=0)


# ---------------------------------------------------------- uncertainty
@regressors
@shapes
def test_predict_std_decomposition(cls, n_outputs, regression_data):
    X, y = regression_data
    est = fitted(cls, X, _targets(y, n_outputs))
    total = est.predict_std(X, kind="total")
    epistemic = est.predict_std(X, kind="epistemic")
    aleatoric = est.predict_std(X, kind="aleatoric")
    shape = (len(X),) if n_outputs is None else (len(X), 2)
    for s in (total, epistemic, aleatoric):
        assert s.shape == shape and s.dtype == np.float64
    assert (epistemic > 0).all() and (aleatoric > 0).all()
    assert_allclose(total**2, epistemic**2 + aleatoric**2, rtol=1e-12)
    assert_allclose(est.predict(X, return_std=True)[1], total, rtol=1e-14)
    assert_allclose(est.predict_std(X), total, rtol=1e-14)
    with pytest.raises(ValueError, match="kind"):
        est.predict_std(X, kind="bogus")


@pytest.mark.parametrize(
    "cls, normalize_y, n_outputs",
    [(cls, True, None) for cls in REGRESSORS]
    + [(cls, norm, n) for cls in TWO for norm in (True, False) for n in (None, 2)
       if (norm, n) != (True, None)],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v),
)
def test_fixed_noise_is_the_aleatoric_std_in_original_units(
    cls, normalize_y, n_outputs, regression_data
):
    X, y = regression_data
    s = 1.0
    Y = _targets(y, n_outputs)
    assert np.all(Y.std(0) > 2)  # y_std_ far from 1, so the units matter
    est = fitted(cls, X, Y, noise_std=s, normalize_y=normalize_y)
    aleatoric = est.predict_std(X[:N_TEST], kind="aleatoric")
    assert_allclose(aleatoric, np.full_like(aleatoric, s), rtol=1e-12)
    _, noise = est.predict_draws(X[:N_TEST])
    assert_allclose(noise, np.full_like(noise, s), rtol=1e-12)


# -------------------------------------------------------------- units
@pytest.mark.parametrize(
    "cls, noise, n_outputs",
    [(cls, "learn", None) for cls in REGRESSORS]
    + [(cls, 1.0, 2) for cls in TWO],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v),
)
def test_scaling_y_scales_predictions(cls, noise, n_outputs, regression_data):
    """Metamorphic: fitting on c*y gives c times the predictions on y.

    With ``normalize_y=True`` the sampler sees ``(c*y - c*m) / (c*s)``, which
    equals ``(y - m) / s`` up to a few float64 ulps; after the cast to the
    network's float32 these targets are identical, so the two chains are the
    same and only the final float64 rescaling by ``c`` differs. The outputs
    therefore agree to float64 rounding (measured <= 1e-15 relative).
    ``rtol=1e-10`` leaves a wide margin yet is many orders of magnitude below
    the O(1) relative differences of any scale-dependent path.
    """
    X, y = regression_data
    c = 1000.0
    Y = _targets(y, n_outputs)
    noise_c = noise if noise == "learn" else c * noise
    a = fitted(cls, X, Y, noise_std=noise, normalize_y=True)
    b = fitted(cls, X, c * Y, noise_std=noise_c, normalize_y=True)
    Xt = X[:N_TEST]
    scale = np.abs(a.predict(Xt)).max()
    assert_allclose(b.predict(Xt), c * a.predict(Xt), rtol=1e-10,
                    atol=1e-10 * c * scale)
    assert_allclose(b.predict(Xt, return_std=True)[1],
                    c * a.predict(Xt, return_std=True)[1], rtol=1e-10)
    for kind in ("epistemic", "aleatoric"):
        assert_allclose(b.predict_std(Xt, kind=kind), c * a.predict_std(Xt, kind=kind),
                        rtol=1e-10)
    assert_allclose(b.predict(Xt, return_cov=True)[1],
                    c**2 * a.predict(Xt, return_cov=True)[1],
                    rtol=1e-10, atol=1e-10 * c**2 * scale**2)
    assert_allclose(b.sample_y(Xt, 4, random_state=1),
                    c * a.sample_y(Xt, 4, random_state=1),
                    rtol=1e-10, atol=1e-10 * c * scale)


CONSTANT_CASES = pytest.mark.parametrize(
    "cls, value, n_outputs",
    [(cls, 1e4, None) for cls in REGRESSORS] + [(cls, 7.0, 2) for cls in TWO],
    ids=lambda v: v.__name__ if isinstance(v, type) else repr(v),
)


@CONSTANT_CASES
@pytest.mark.parametrize("noise", ["learn", 1.0])
def test_constant_target_is_finite_and_inside_the_predictive_band(
    cls, value, n_outputs, noise, regression_data
):
    """Constant y: no division by zero anywhere, and the constant is predicted.

    With zero spread the internal scale falls back to 1 (as in
    GaussianProcessRegressor); a 1/0 would give NaN or inf.
    """
    X, _ = regression_data
    Y = np.full(len(X) if n_outputs is None else (len(X), n_outputs), value)
    est = fitted(cls, X, Y, noise_std=noise)
    assert_array_equal(est.y_std_, 1.0)
    mean, std = est.predict(X[:N_TEST], return_std=True)
    assert np.isfinite(mean).all() and np.isfinite(std).all() and (std > 0).all()
    f, noise_draws = est.predict_draws(X[:N_TEST])
    assert np.isfinite(f).all() and np.isfinite(noise_draws).all()
    assert np.isfinite(est.sample_y(X[:N_TEST], 3)).all()
    assert (np.abs(mean - value) <= 3 * std).all()


@CONSTANT_CASES
def test_constant_target_prediction_with_fixed_noise(
    cls, value, n_outputs, regression_data
):
    """With noise_std=1 (a proper posterior) the mean is the constant.

    The posterior mean of f has std about 1/sqrt(40) = 0.16 here, plus the
    Monte Carlo error of 8 draws; measured deviations are <= 0.64 over seeds
    0-2. A wrong scale or shift would be off by O(value).
    """
    X, _ = regression_data
    Y = np.full(len(X) if n_outputs is None else (len(X), n_outputs), value)
    est = fitted(cls, X, Y, noise_std=1.0)
    mean = est.predict(X[:N_TEST])
    assert np.abs(mean - value).max() < 1.0
    assert_allclose(est.predict_std(X[:N_TEST], kind="aleatoric"), 1.0, rtol=1e-12)


# ----------------------------------------------------------- dtypes
@regressors
def test_float32_and_float64_inputs(cls, regression_data):
    X, y = regression_data
    a = fitted(cls, X, y)
    b = fitted(cls, X.astype(np.float32), y.astype(np.float32))
    pa = a.predict(X)
    pb = b.predict(X.astype(np.float32))
    assert pa.dtype == np.float64 and pb.dtype == np.float64
    assert b.predict(X, return_std=True)[1].dtype == np.float64
    assert b.sample_y(X.astype(np.float32), 2).dtype == np.float64
    # The float32 network sees the same float32 inputs either way; only the
    # float64 prediction pass sees the float32-rounded X.
    assert_allclose(pb, pa, rtol=1e-4, atol=1e-4)


@regressors
def test_dtype_float64_runs(cls, regression_data):
    X, y = regression_data
    est = fitted(cls, X, y, dtype="float64")
    assert all(v.dtype == torch.float64 for v in est.posterior_.draws.values())
    mean, std = est.predict(X, return_std=True)
    assert mean.dtype == np.float64
    assert np.isfinite(mean).all() and np.isfinite(std).all()
    default = fitted(cls, X, y)
    assert all(v.dtype == torch.float32 for v in default.posterior_.draws.values())
