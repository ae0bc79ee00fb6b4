"""ifBDE-specific estimator checks of ``random_function``: the fitted random function
survives pickling, reaches every prediction, and a bad value is refused by name."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from skfbnn import BayesianNetRegressor, IFBDEClassifier, IFBDERegressor
from skfbnn.inference.ensemble.random_function import PREFIX, offset, randomized
from skfbnn.nn.functional import make_forward

from ._cases import sine_data

FAST = dict(n_iter=60, min_epochs=1, n_estimators=3, hidden_layer_sizes=(8,), device="cpu",
            random_state=0)


def test_pickled_regressor_with_random_function_predicts_the_same():
    X, y = sine_data()
    est = IFBDERegressor(**FAST, random_function=True).fit(X, y)
    assert any(k.startswith(PREFIX) for k in est.posterior_.members)
    loaded = pickle.loads(pickle.dumps(est))
    mean, std = est.predict(X, return_std=True)
    mean2, std2 = loaded.predict(X, return_std=True)
    np.testing.assert_array_equal(mean, mean2)
    np.testing.assert_array_equal(std, std2)
    np.testing.assert_array_equal(est.sample_y(X, 4, random_state=1),
                                  loaded.sample_y(X, 4, random_state=1))


def test_predictions_are_the_members_plus_their_random_function():
    X, y = sine_data()
    est = IFBDERegressor(**FAST, random_function=True).fit(X, y)
    members = {k: v.double() for k, v in est.posterior_.members.items()}
    Xt = torch.as_tensor(X)
    forward = make_forward(est.network_)
    out = forward(members, Xt) + offset(forward, members, Xt)
    f = est.posterior_.to(torch.device("cpu"), torch.float64).predict_f(randomized(forward),
                                                                    Xt)[:, 0]
    torch.testing.assert_close(f, out)
    g = offset(forward, members, Xt)[..., 0]
    assert float(g.std(0).mean()) > 0.01  # the term is really there
    mean = out[..., 0].mean(0).numpy() * est.y_std_[0] + est.y_mean_[0]  # the mean heads
    np.testing.assert_allclose(est.predict(X), mean, rtol=1e-6, atol=1e-8)


def test_classifier_with_random_function_round_trips():
    X, y = sine_data()
    labels = np.where(y > 0, "up", "down")
    clf = IFBDEClassifier(**FAST, random_function=True).fit(X, labels)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)


@pytest.mark.parametrize("value", ["yes", 1.5, None])
def test_bad_random_function_is_refused_by_name(value):
    X, y = sine_data(12)
    with pytest.raises(ValueError, match="random_function"):
        IFBDERegressor(**FAST, random_function=value).fit(X, y)
    with pytest.raises(ValueError, match="random_function"):
        BayesianNetRegressor(method="ifbde", method_params={"random_function": value,
                                                            "n_iter": 5},
                             device="cpu").fit(X, y)


@pytest.mark.parametrize("value", [0.0, -1.0, "prior"])
def test_bad_ntk_scale_is_refused_by_name(value):
    X, y = sine_data(12)
    with pytest.raises(ValueError, match="ntk_scale"):
        IFBDERegressor(**FAST, ntk_scale=value).fit(X, y)


def test_ntk_scale_none_and_a_float_both_fit():
    X, y = sine_data()
    for value in (None, 0.25):
        reg = IFBDERegressor(**FAST, ntk_scale=value).fit(X, y)
        assert np.isfinite(reg.predict(X)).all()


def test_the_regulariser_options_of_the_studies_are_the_methods_own():
    """The W2's reduction, scale and barycenter iterations, options of the tuning studies,
    are fixed by the method (``ifbde.build``'s defaults, the values the estimator had);
    their effects are tested at the kernel (tests/inference/ensemble/test_ifbde.py)."""
    import inspect

    from skfbnn.inference.ensemble import ifbde

    folded = {"w2_reduction": "sum", "w2_scale": "full", "barycenter_iter": 0}
    assert not set(folded) & set(IFBDERegressor().get_params())
    assert not set(folded) & set(IFBDEClassifier().get_params())
    defaults = inspect.signature(ifbde.build).parameters
    assert {name: defaults[name].default for name in folded} == folded

