"""Shared fixtures: tiny, seeded data and fast sampler settings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# Budgets small enough for the API tests; statistical tests set their own.
FAST = dict(n_chains=2, n_burnin=60, n_samples=4, thinning=2, min_epochs=0)
FAST_FUNCTIONAL = dict(FAST, prior_fit_iter=5, n_measurement_points=10)
FAST_MH = {k: v for k, v in FAST.items() if k != "min_epochs"}
FAST_OPTIMISATION = dict(n_iter=60, n_samples=8)
FAST_ENSEMBLE = dict(n_estimators=3, n_iter=60, min_epochs=0)


@pytest.fixture
def regression_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=40)
    return X, y


@pytest.fixture
def classification_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    return X, y
