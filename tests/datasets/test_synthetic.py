"""Tests for skfbnn.datasets.synthetic."""

from __future__ import annotations

import numpy as np
import pytest

from skfbnn.datasets import make_oscillation, oscillation_function


def test_oscillation_function_values():
    # by hand: f(0) = 0.3; f(0.5) = sin(1.5 pi) + 0.3 cos(4.5 pi) + 0.5 sin(3.5 pi)
    values = oscillation_function([0.0, 0.5])
    np.testing.assert_allclose(values, [0.3, -1.5], atol=1e-12)
    x = np.linspace(-1, 1, 11).reshape(11, 1)
    pi_x = np.pi * x
    expected = np.sin(3 * pi_x) + 0.3 * np.cos(9 * pi_x) + 0.5 * np.sin(7 * pi_x)
    out = oscillation_function(x)
    assert out.shape == (11, 1)
    np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize("n_samples", [1, 2, 20, 101])
def test_make_oscillation_shapes_and_input_intervals(n_samples):
    X, y = make_oscillation(n_samples, random_state=0)
    assert X.shape == (n_samples, 1) and y.shape == (n_samples,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    x = X[:, 0]
    n_left = n_samples // 2
    assert np.all((-0.75 <= x[:n_left]) & (x[:n_left] <= -0.25))
    assert np.all((0.25 <= x[n_left:]) & (x[n_left:] <= 0.75))


def test_make_oscillation_noise_level_and_halves():
    X, y = make_oscillation(20_000, noise_std=0.5, random_state=1)
    residual = y - oscillation_function(X[:, 0])
    assert np.mean(X[:, 0] < 0) == 0.5
    assert abs(np.std(residual) - 0.5) < 0.02
    assert abs(np.mean(residual)) < 0.02
    # both intervals are covered roughly uniformly
    left = X[X[:, 0] < 0, 0]
    assert abs(left.mean() + 0.5) < 0.01 and left.min() < -0.74 and left.max() > -0.26


def test_make_oscillation_noise_free_and_reproducible():
    X, y = make_oscillation(15, noise_std=0.0, random_state=3)
    np.testing.assert_allclose(y, oscillation_function(X[:, 0]))
    X2, y2 = make_oscillation(15, noise_std=0.0, random_state=np.random.RandomState(3))
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = make_oscillation(15, random_state=4)
    assert not np.allclose(X, X3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, r"n_samples .* Got 0\."),
        ({"n_samples": 2.5}, r"n_samples .* Got 2\.5\."),
        ({"n_samples": True}, "n_samples"),
        ({"noise_std": -0.1}, r"noise_std .* Got -0\.1\."),
        ({"noise_std": float("inf")}, "noise_std"),
    ],
)
def test_make_oscillation_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_oscillation(**kwargs)
