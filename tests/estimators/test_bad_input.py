"""Bad input that used to pass in silence now ends in a warning or error naming its cause.

Inputs (and targets with ``normalize_y=False``) far from unit scale, an outlying row, fits
worse than predicting the mean of y, classifiers at chance on their own training rows,
steps far above their default, and the messages of errors. The table of every family
against every case is ``docs/bad_inputs.md`` (``benchmarks/bad_inputs.py``).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import skfbnn
from skfbnn.diagnostics.advice import FitAdvice
from skfbnn.diagnostics.fit import optimisation_diagnostics
from skfbnn.diagnostics.health import classification_checks
from skfbnn.diagnostics.scale import scale_warnings
from skfbnn.exceptions import DataScaleWarning, PoorFitWarning, SamplerDivergenceWarning

from ..conftest import FAST
from ._cases import ALL, MH_CLASSIFIERS, MH_REGRESSORS, ids, make

MH_FAST = dict(n_chains=2, n_burnin=50, n_samples=5, thinning=2)


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] - 0.5 * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y, (y > np.median(y)).astype(int)


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, {w.category: str(w.message) for w in record}


# ------------------------------------------------------------------ the data's scale
def test_targets_far_from_unit_scale_without_normalize_y_are_named():
    """normalize_y=False with targets of scale 1e8: every regressor predicted the training
    mean with a std of order 1 (coverage 0), in silence."""
    X, y, _ = _data()
    est, found = _fit(make(skfbnn.SGLDRegressor, normalize_y=False), X, 1e8 * y)
    assert re.search(r"y column\(s\) \[0\] have a root mean square of 1\.\d+e\+08",
                     found[DataScaleWarning])
    assert "normalize_y=True" in found[DataScaleWarning]
    assert est.diagnostics_["training_r2"][0] < 0.01  # the mean of y at best
    # the same targets standardised (the default): nothing to report
    _, found = _fit(make(skfbnn.SGLDRegressor), X, 1e8 * y)
    assert DataScaleWarning not in found and PoorFitWarning not in found


@pytest.mark.parametrize("cls", [skfbnn.PCNRegressor, skfbnn.MALAClassifier, skfbnn.SGLDRegressor],
                         ids=["PCN", "MALA", "SGLD"])
@pytest.mark.parametrize("scale", [1e6, 1e-6])
def test_inputs_far_from_unit_scale_are_named(cls, scale):
    """Inputs of scale 1e6: pCN fitted its training rows (R^2 0.98) and missed new ones by
    763 standard deviations of y, in silence (``benchmarks/bad_inputs.py --sweep``)."""
    X, y, labels = _data()
    target = labels if "Classifier" in cls.__name__ else y
    kwargs = MH_FAST if cls in (*MH_REGRESSORS, *MH_CLASSIFIERS) else FAST
    _, found = _fit(cls(random_state=0, **kwargs), scale * X, target)
    message = found[DataScaleWarning]
    assert "X column(s) [0, 1, 2]" in message and "StandardScaler" in message
    assert ("root mean square of" if scale > 1 else "standard deviation of only") in message


def test_an_outlying_row_is_named_and_the_fit_worse_than_the_mean_is_reported():
    """A constant column plus one row at 1e6: the ensemble's error blamed the learning rate."""
    X, y, _ = _data()
    X = np.c_[X, np.zeros(len(X))]
    X[5, -1] = 1e6
    est, found = _fit(make(skfbnn.DeepEnsembleRegressor, n_iter=200), X, y)
    assert "column(s) [3]" in found[DataScaleWarning]
    assert "outlying rows" in found[DataScaleWarning]
    assert est.diagnostics_["training_r2"][0] < 0
    poor = found[PoorFitWarning]
    assert "worse than predicting the mean of y" in poor
    # the data's scale is named first among the likely causes, before the step
    assert poor.index("inputs far from unit scale") < poor.index("reduce learning_rate")


def test_a_divergence_error_says_what_was_measured_of_the_inputs():
    X, y, _ = _data()
    with pytest.raises(skfbnn.OptimisationDivergenceError) as info:
        make(skfbnn.DeepEnsembleRegressor, n_iter=200).fit(1e6 * X, y)
    message = str(info.value)
    assert message.index("Likely causes, in order: inputs far from unit scale") < \
        message.index("Measured: inputs far from unit scale: X column(s) [0, 1, 2]")


def test_scale_thresholds_and_constant_columns():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    X[:, 1] *= 15  # root mean square about 15: large
    X[:, 2] *= 0.05  # standard deviation 0.05: small
    X[:, 3] = 7.0  # constant: not reported (nothing to learn from it)
    (found,), notes = scale_warnings(X)
    assert found.extra["large"] == [1] and found.extra["small"] == [2]
    assert found.category is DataScaleWarning and len(notes) == 1
    assert scale_warnings(rng.normal(size=(100, 3)))[0] == []
    assert scale_warnings(rng.normal(size=(100, 3)), 0.05 * rng.normal(size=100))[1][0] \
        .startswith("targets far from unit scale with normalize_y=False")


@pytest.mark.parametrize("cls", [*ALL, *MH_REGRESSORS, *MH_CLASSIFIERS],
                         ids=ids([*ALL, *MH_REGRESSORS, *MH_CLASSIFIERS]))
def test_standardised_data_gives_no_scale_or_poor_fit_warning(cls):
    X, y, labels = _data()
    target = labels if "Classifier" in cls.__name__ else y
    est = (cls(random_state=0, **MH_FAST) if cls in (*MH_REGRESSORS, *MH_CLASSIFIERS)
           else make(cls))
    est, found = _fit(est, X, target)
    assert DataScaleWarning not in found and PoorFitWarning not in found, found
    key = "training_accuracy" if "Classifier" in cls.__name__ else "training_r2"
    assert np.all(np.asarray(est.diagnostics_[key]) > 0.5)


# ------------------------------------------------------------------ steps and poor fits
def test_a_step_far_above_its_default_is_named_with_its_multiple():
    """SGLD at 100 times its default step: the NoiseOnlyFitWarning did not mention the step."""
    X, y, _ = _data()
    _, found = _fit(make(skfbnn.SGLDRegressor, step_size=300.0), X, y)
    named = [m for m in found.values() if "reduce step_size (now 300, 100 times its default 3)"
             in m]
    assert named, found


def test_a_classifier_at_chance_on_its_training_rows_is_reported():
    """fSGLD, fBNN and ifBNN classifiers at large steps ended at chance with no warning
    (``benchmarks/bad_inputs.py --sweep``: fBNN at 1000 times its learning rate 0.57, ifBNN
    at 100 times 0.50, on 200 balanced rows). Here the fitted draws' readout is zeroed:
    every row gets the same probabilities."""
    X, _, labels = _data()
    est = make(skfbnn.SGLDClassifier).fit(X, labels)
    assert est.diagnostics_["training_accuracy"] > 0.8
    assert not [w for w in est.diagnostics_["warnings"] if w.kind == "chance"]
    draws = {k: v.clone() for k, v in est.posterior_.draws.items()}
    last = max(int(k.split(".")[0]) for k in draws)
    draws[f"{last}.weight"].zero_()
    posterior = type(est.posterior_)(draws)
    from skfbnn.posterior import outputs_at

    advice = FitAdvice("learning_rate", 0.3, 0.003, "n_iter")
    checks = est._check_fit(posterior, lambda rows: outputs_at(posterior, est._forward(), rows),
                            est.likelihood_, X, torch.as_tensor(np.unique(labels,
                            return_inverse=True)[1]), "learning_rate", advice=advice)
    (found,) = [w for w in checks["warnings"] if w.kind == "chance"]
    assert found.category is PoorFitWarning
    assert checks["training_accuracy"] <= checks["majority_rate"] + found.extra["margin"]
    assert "reduce learning_rate (now 0.3, 100 times its default 0.003)" in found.message


def test_chance_is_judged_within_three_standard_errors():
    labels = torch.tensor([0, 1] * 100)
    right = torch.zeros(200, dtype=torch.bool)
    right[:115] = True  # 0.575: within 3 binomial standard errors (0.106) of 0.5

    def proba(rows):
        p = torch.full((1, len(rows), 2), 0.25, dtype=torch.float64)
        idx = torch.as_tensor(rows)
        hit = torch.where(right[idx], labels[idx], 1 - labels[idx])
        p[0, torch.arange(len(rows)), hit] = 0.75
        return p

    X = np.arange(200)[:, None]
    checks = classification_checks(lambda r: proba(r[:, 0]), X, labels, "step_size")
    assert checks["training_accuracy"] == pytest.approx(0.575)
    assert [w.kind for w in checks["warnings"]] == ["chance"]
    right[:140] = True  # 0.7: above chance
    assert classification_checks(lambda r: proba(r[:, 0]), X, labels, "step_size")[
        "warnings"] == []


def test_an_objective_that_fell_below_its_best_warns_and_names_the_step():
    """fBNN recorded such a run in diagnostics_ but issued no warning."""
    t = np.linspace(0, 1, 400)
    trace = {"objective": torch.as_tensor(np.where(t < 0.5, t, 1.0 - t)[:, None])}
    advice = FitAdvice("learning_rate", 0.3, 0.003, "n_iter")
    found = optimisation_diagnostics(trace, bounded_likelihood=False, advice=advice)["warnings"]
    (divergence,) = [w for w in found if w.kind == "divergence"]
    assert divergence.category is SamplerDivergenceWarning
    assert "reduce learning_rate (now 0.3, 100 times its default 0.003)" in divergence.message


# ------------------------------------------------------------------ messages
def test_the_single_class_error_prints_the_plain_label():
    X, _, _ = _data()
    for label, shown in ((0, "class: 0."), (np.int64(3), "class: 3."), ("a", "class: 'a'.")):
        with pytest.raises(ValueError, match=re.escape(shown)) as info:
            make(skfbnn.SGLDClassifier).fit(X, np.full(len(X), label))
        assert "np." not in str(info.value) and "SGLDClassifier" in str(info.value)


def test_sample_weight_is_accepted_by_fit():
    """``fit(X, y, sample_weight=w)`` raised ``TypeError: BayesianNetBase.fit() got an
    unexpected keyword argument`` (test_sample_weight.py checks what the weights do)."""
    X, y, _ = _data()
    est = make(skfbnn.BayesianNetRegressor).fit(X, y, sample_weight=np.ones(len(X)))
    assert np.isfinite(est.predict(X)).all()


@pytest.mark.parametrize("cls", [skfbnn.SGLDRegressor, skfbnn.PCNClassifier],
                         ids=["SGLDRegressor", "PCNClassifier"])
def test_arrays_with_negative_strides_fit_as_their_copies(cls):
    """``fit(X[::-1], y[::-1])`` ended in torch's 'At least one stride in the given numpy
    array is negative'."""
    X, y, labels = _data()
    target = y if cls is skfbnn.SGLDRegressor else labels
    w = np.linspace(0.5, 1.5, len(X))
    views = make(cls).fit(X[::-1, ::-1], target[::-1], sample_weight=w[::-1])
    copies = make(cls).fit(X[::-1, ::-1].copy(), target[::-1].copy(),
                           sample_weight=w[::-1].copy())
    predict = "predict" if cls is skfbnn.SGLDRegressor else "predict_proba"
    np.testing.assert_array_equal(getattr(views, predict)(X[::-1]),
                                  getattr(copies, predict)(X[::-1].copy()))
