"""The epistemic predictive std against a direct computation from the stored draws.

``predict_std(X, kind="epistemic")`` is the spread, over the posterior's stored
parameter sets, of the network's mean output in units of ``y``. Here it is
recomputed without the library's prediction path: every stored set
(``posterior_.draws``, chains or members by draws) is put into ``network_`` by
``torch.func.functional_call``, one set at a time, its mean output is mapped back to
the units of ``y`` with the training targets' own mean and std (``normalize_y``), and
the population std (``ddof=0``) over all sets is taken: the variance of the draw
means in the mixture over the draws.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn import (
    BBBRegressor,
    DeepEnsembleRegressor,
    PCNRegressor,
    SGHMCRegressor,
    SGLDRegressor,
)

from ..conftest import FAST, FAST_ENSEMBLE, FAST_MH, FAST_OPTIMISATION

# float64: the library predicts in float64, so a float32 draw would differ by its rounding
NETWORK = dict(hidden_layer_sizes=(8,), activation="tanh", random_state=0, device="cpu",
               dtype="float64")

CASES = [
    (SGLDRegressor, FAST),
    (SGHMCRegressor, FAST),
    (PCNRegressor, FAST_MH),
    (BBBRegressor, FAST_OPTIMISATION),
    (DeepEnsembleRegressor, FAST_ENSEMBLE),
]


def _direct_epistemic(est, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Std over the stored parameter sets of each set's mean output, in units of ``y``."""
    Y = y.reshape(len(y), -1)
    k = Y.shape[1]
    names = [name for name, _ in est.network_.named_parameters()]
    stored = {name: v.reshape(-1, *v.shape[2:]).to("cpu", torch.float64)
              for name, v in est.posterior_.draws.items() if name in names}
    assert sorted(stored) == sorted(names)
    n_sets = next(iter(stored.values())).shape[0]
    assert n_sets == np.prod(est.posterior_.shape) > 1
    x = torch.as_tensor(X, dtype=torch.float64)
    means = np.stack([
        torch.func.functional_call(est.network_, {n: v[d] for n, v in stored.items()},
                                   (x,))[:, :k].numpy()  # a variance head follows the means
        for d in range(n_sets)
    ])
    means = means * Y.std(0) + Y.mean(0)
    spread = means.std(0)
    return spread[:, 0] if y.ndim == 1 else spread


@pytest.mark.parametrize("estimator_cls,budget", CASES,
                         ids=[cls.__name__ for cls, _ in CASES])
def test_epistemic_std_is_the_spread_of_the_stored_draw_means(estimator_cls, budget,
                                                               regression_data):
    X, y = regression_data
    est = estimator_cls(**NETWORK, **budget).fit(X, y)
    X_new = np.random.default_rng(5).normal(size=(7, X.shape[1])) * 2
    want = _direct_epistemic(est, X_new, y)
    assert (want > 0).all()
    np.testing.assert_allclose(est.predict_std(X_new, kind="epistemic"), want,
                               rtol=1e-9, atol=0)


def test_epistemic_std_of_each_output_is_in_its_own_units(regression_data):
    """Two targets on scales 100 apart: each output's spread is scaled by its own std."""
    X, y = regression_data
    Y = np.column_stack([y, 100 * np.sin(y) + 3])
    est = SGLDRegressor(**NETWORK, **FAST).fit(X, Y)
    X_new = np.random.default_rng(6).normal(size=(7, X.shape[1]))
    got = est.predict_std(X_new, kind="epistemic")
    assert got.shape == (7, 2)
    np.testing.assert_allclose(got, _direct_epistemic(est, X_new, Y), rtol=1e-9, atol=0)
