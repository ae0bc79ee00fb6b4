"""``sample_weight``: a weighted likelihood, checked against duplicated rows.

A row of weight ``w`` counts as ``w`` copies of the row. Exact comparisons:

* the log posterior (objective) of weighted rows equals that of the duplicated rows, for
  every likelihood, and the Metropolis-Hastings target's closed forms (marginal potential,
  empirical-Bayes noise) equal those of the duplicated rows;
* the driver hands every minibatch its rows' weights, and over an epoch the minibatch
  estimates ``(N / n) sum_batch w_i log p_i`` average to the weighted full-data sum;
* end to end: with weights summing to the number of rows (so the data size, the run length
  and the random stream are those of the duplicated rows) and a full batch, a weighted fit
  predicts what the fit of the duplicated rows predicts, to round-off.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.utils.validation import has_fit_parameter

import skfbnn
from skfbnn.inference.mh.noise import empirical_bayes_log_noise
from skfbnn.inference.mh.ntk import NTKLayout
from skfbnn.inference.mh.onehot import ShiftedOneHotGaussian
from skfbnn.inference.mh.target import WideNetTarget
from skfbnn.inference.objective import make_log_posterior
from skfbnn.inference.run import run
from skfbnn.inference.types import BayesProblem, Transform
from skfbnn.likelihoods import (
    CategoricalLikelihood,
    GaussianLikelihood,
    HeteroscedasticGaussianLikelihood,
)
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.weight import WeightPrior

from ._cases import ALL, MH_CLASSIFIERS, MH_REGRESSORS, ids, make

F64 = torch.float64
MH = [*MH_REGRESSORS, *MH_CLASSIFIERS]
MH_FAST = dict(n_chains=2, n_burnin=30, n_samples=4, thinning=2, hidden_layer_sizes=(16,))


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=n)
    return X, y, (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)


def _weights_and_repeats(n, seed=0):
    """Integer weights summing to ``n`` (row 0 three times, rows 1 and 2 dropped) and the
    row indices of the duplicated data set, shuffled."""
    w = np.ones(n)
    w[0], w[1], w[2] = 3.0, 0.0, 0.0
    rows = np.random.default_rng(seed).permutation(np.repeat(np.arange(n), w.astype(int)))
    return w, rows


def _make_mh(cls, **kwargs):
    return cls(random_state=0, device="cpu", **{**MH_FAST, **kwargs})


# ------------------------------------------------------------------ the estimators' API
@pytest.mark.parametrize("cls", [*ALL, *MH], ids=ids([*ALL, *MH]))
def test_weights_of_one_give_the_unweighted_fit(cls):
    X, y, labels = _data()
    target = labels if skfbnn.BayesianNetClassifier in cls.__mro__ or "Classifier" in \
        cls.__name__ else y
    assert has_fit_parameter(cls, "sample_weight")
    build = _make_mh if cls in MH else make
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = build(cls).fit(X, target)
        ones = build(cls).fit(X, target, sample_weight=np.ones(len(X)))
    if hasattr(plain, "predict_proba"):
        np.testing.assert_array_equal(ones.predict_proba(X), plain.predict_proba(X))
    else:
        np.testing.assert_array_equal(ones.predict(X), plain.predict(X))


FULL_BATCH = [
    (skfbnn.SGLDRegressor, dict(batch_size=1000)),
    (skfbnn.SGHMCRegressor, dict(batch_size=1000)),
    (skfbnn.BBBRegressor, dict(batch_size=1000)),
    (skfbnn.DeepEnsembleRegressor, dict(batch_size=1000, validation_fraction=0.0)),
    (skfbnn.SGLDClassifier, dict(batch_size=1000)),
    (skfbnn.BBBClassifier, dict(batch_size=1000)),
    (skfbnn.DeepEnsembleClassifier, dict(batch_size=1000, validation_fraction=0.0)),
    (skfbnn.PCNRegressor, {}),
    (skfbnn.PCNLRegressor, dict(noise_std="learn")),
    (skfbnn.MALARegressor, {}),
    (skfbnn.PCNClassifier, {}),
]


@pytest.mark.parametrize("cls, kwargs", FULL_BATCH, ids=[c.__name__ for c, _ in FULL_BATCH])
def test_weighted_fit_equals_the_fit_of_duplicated_rows(cls, kwargs):
    """Weights summing to ``n``: the same data size, run length and random stream as the
    duplicated rows, and a full batch, so only the weights can make a difference."""
    X, y, labels = _data()
    target = labels if "Classifier" in cls.__name__ else y
    w, rows = _weights_and_repeats(len(X))
    build = _make_mh if cls in MH else make
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        weighted = build(cls, dtype="float64", **kwargs).fit(X, target, sample_weight=w)
        repeated = build(cls, dtype="float64", **kwargs).fit(X[rows], target[rows])
        plain = build(cls, dtype="float64", **kwargs).fit(X, target)
    predict = "predict_proba" if hasattr(weighted, "predict_proba") else "predict"
    a, b, c = (getattr(e, predict)(X) for e in (weighted, repeated, plain))
    np.testing.assert_allclose(a, b, rtol=0, atol=_round_off(cls))
    assert np.abs(a - c).max() > 1e-6  # the weights did change the fit


def _round_off(cls) -> float:
    """Float64 round-off, or float32's where the Metropolis-Hastings samplers compute the
    network's features in float32 (``target.FEATURES_DTYPE``): the weighted rows' features
    are scaled by ``sqrt(w_i)`` in that dtype, the repeated rows' are not."""
    from skfbnn.inference.mh import target

    narrow = getattr(target, "FEATURES_DTYPE", torch.float64) != torch.float64
    return 1e-6 if cls in MH and narrow else 1e-9


def test_normalize_y_uses_the_weighted_moments():
    X, y, _ = _data()
    w, rows = _weights_and_repeats(len(X))
    w = w * 0.5  # scaling all weights leaves the moments unchanged
    est = make(skfbnn.SGLDRegressor).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.y_mean_, [y[rows].mean()], rtol=1e-12)
    np.testing.assert_allclose(est.y_std_, [y[rows].std()], rtol=1e-12)


def test_constant_over_the_weighted_rows_is_a_constant_target():
    X, y, _ = _data()
    y = np.full(len(X), 2.0)
    y[0] = 5.0
    w = np.ones(len(X))
    w[0] = 0.0
    with pytest.warns(skfbnn.ConstantTargetWarning):
        est = make(skfbnn.SGLDRegressor).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.predict(X[:3]), 2.0)


@pytest.mark.parametrize("weights, match", [
    (-np.ones(30), "Negative values"),
    (np.ones(29), "sample_weight"),
    (np.ones((30, 2)), "1D array"),
    (np.zeros(30), "non-zero"),
    (np.full(30, np.nan), "NaN"),
])
def test_bad_weights_raise_a_value_error(weights, match):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=match):
        make(skfbnn.SGLDRegressor).fit(X, y, sample_weight=weights)


# ------------------------------------------------------------------ the log posterior
LIKELIHOODS = {
    "gaussian": (lambda: GaussianLikelihood(None), 1, "real"),
    "gaussian_fixed": (lambda: GaussianLikelihood([0.4, 0.7]), 2, "real"),
    "heads_beta": (lambda: HeteroscedasticGaussianLikelihood(beta=0.5), 1, "real"),
    "categorical": (CategoricalLikelihood, 3, "labels"),
    "shifted_onehot": (lambda: ShiftedOneHotGaussian(0.1), 3, "labels"),
}


@pytest.mark.parametrize("name", list(LIKELIHOODS))
def test_log_posterior_of_weighted_rows_equals_that_of_duplicated_rows(name):
    make_lik, k, kind = LIKELIHOODS[name]
    likelihood = make_lik()
    gen = torch.Generator().manual_seed(0)
    n = 12
    X = torch.randn(n, 2, generator=gen, dtype=F64)
    y = (torch.randint(0, k, (n,), generator=gen) if kind == "labels"
         else torch.randn(n, k, generator=gen, dtype=F64))
    w = torch.tensor([2.0, 0.0, 1.0, 3.0, 1.0, 1.0, 1.0, 0.0, 4.0, 1.0, 1.0, 2.0], dtype=F64)
    net = build_mlp(2, likelihood.n_outputs(k), (5,), "tanh")
    params = init_params(net, 3, gen, device=torch.device("cpu"), dtype=F64)
    params.update(likelihood.init_params(3, k, torch.device("cpu"), F64))
    params = {key: v + 0.3 * torch.randn(v.shape, generator=gen, dtype=F64)
              for key, v in params.items()}
    rows = torch.repeat_interleave(torch.arange(n), w.long())  # N = n: full batch each

    def log_posterior(n_data, batch):
        problem = BayesProblem(make_forward(net), likelihood, WeightPrior(1.0), n_data)
        return make_log_posterior(problem)(params, batch)

    weighted = log_posterior(n, {"x": X, "y": y, "w": w})
    dup = log_posterior(len(rows), {"x": X[rows], "y": y[rows]})
    assert not torch.allclose(weighted, log_posterior(n, {"x": X, "y": y}))
    torch.testing.assert_close(weighted, dup, rtol=1e-12, atol=1e-10)


class _Recorder:
    """A transform whose update records its batches."""

    def __init__(self):
        self.batches = []

    def transform(self):
        class State(tuple):
            params = property(lambda s: s[0])
            log_post = property(lambda s: s[1])

        def init(params, batch, gen):
            return State((params, torch.zeros(2)))

        def update(state, batch, gen):
            self.batches.append(batch)
            from collections import namedtuple
            return state, namedtuple("Info", "objective")(torch.zeros(2))

        return Transform(init, update)


def test_every_minibatch_carries_its_rows_weights():
    n = 12
    X = torch.arange(n, dtype=F64).unsqueeze(-1)  # a row's value is its index
    y = torch.zeros(n, 1, dtype=F64)
    w = torch.linspace(0.0, 3.0, n, dtype=F64)
    rec = _Recorder()
    run(rec.transform(), {"a": torch.zeros(2, 1)}, X, y, torch.Generator().manual_seed(0),
        n_steps=6, batch_size=4, weights=w)
    for batch in rec.batches:
        torch.testing.assert_close(batch["w"], w[batch["x"][..., 0].long()], rtol=0, atol=0)
    rec = _Recorder()  # held-out pools (ensembles): each member's rows and their weights
    pool = torch.tensor([[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 11]])
    run(rec.transform(), {"a": torch.zeros(2, 1)}, X, y, torch.Generator().manual_seed(0),
        n_steps=3, batch_size=3, weights=w, pool=pool)
    for batch in rec.batches:
        rows = batch["x"][..., 0].long()
        assert bool((rows % 2 == torch.tensor([[0], [1]])).all())
        torch.testing.assert_close(batch["w"], w[rows], rtol=0, atol=0)
    rec = _Recorder()  # no weights: no "w"
    run(rec.transform(), {"a": torch.zeros(2, 1)}, X, y, torch.Generator().manual_seed(0),
        n_steps=2, batch_size=4)
    assert all("w" not in b for b in rec.batches)


def test_minibatch_estimates_average_to_the_weighted_full_data_sum_over_an_epoch():
    """``(N / n) sum_batch w_i log p_i`` over the ``N / n`` batches of an epoch (each row
    once) averages to ``sum_i w_i log p_i``: the minibatch weighting is unbiased."""
    n, b = 12, 4
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(n, 2, generator=gen, dtype=F64)
    y = torch.randn(n, 1, generator=gen, dtype=F64)
    w = torch.rand(n, generator=gen, dtype=F64) * 3
    net = build_mlp(2, 1, (4,), "tanh")
    params = init_params(net, 2, gen, device=torch.device("cpu"), dtype=F64)
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.5]), None, n)
    lp = make_log_posterior(problem)
    rec = _Recorder()
    run(rec.transform(), params, X, y, torch.Generator().manual_seed(1), n_steps=n // b,
        batch_size=b, weights=w)
    estimates = torch.stack([lp(params, batch) for batch in rec.batches])
    torch.testing.assert_close(estimates.mean(0), lp(params, {"x": X, "y": y, "w": w}))


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("reparametrize, marginalize, n", [(True, False, 10), (False, False, 10),
                                                            (True, True, 40)])
def test_wide_network_target_of_weighted_rows_equals_that_of_duplicated_rows(
        reparametrize, marginalize, n):
    """Learned noise (its coordinate is part of the state): the potential, the network
    parameters of a state and the empirical-Bayes noise, dual (``n < p``) and primal."""
    gen = torch.Generator().manual_seed(0)
    net = build_mlp(2, 1, (16,), "tanh")
    layout = NTKLayout.from_network(net, math.sqrt(2.0), 0.1, 1.0, 0.1)
    X = torch.randn(n, 2, generator=gen, dtype=F64)
    Y = torch.randn(n, 1, generator=gen, dtype=F64)
    w = torch.randint(0, 4, (n,), generator=gen).to(F64)
    rows = torch.repeat_interleave(torch.arange(n), w.long())
    kw = dict(reparametrize=reparametrize, marginalize_readout=marginalize)
    weighted = WideNetTarget(layout, X, Y, None, weights=w, **kw)
    repeated = WideNetTarget(layout, X[rows], Y[rows], None, **kw)
    assert weighted.n_dim == repeated.n_dim
    torch.testing.assert_close(weighted.step_scale, repeated.step_scale)
    phi = torch.randn(3, weighted.n_dim, generator=gen, dtype=F64)
    phi_out = (torch.randn(3, *weighted.readout_shape, generator=gen, dtype=F64)
               if marginalize else None)
    torch.testing.assert_close(weighted.potential(phi), repeated.potential(phi))
    for key, value in weighted.params(phi, phi_out, F64).items():
        torch.testing.assert_close(value, repeated.params(phi, phi_out, F64)[key])
    hidden, _ = weighted.split(phi, phi_out)
    torch.testing.assert_close(
        empirical_bayes_log_noise(weighted.features(hidden), weighted.Y, weighted.extra_rows),
        empirical_bayes_log_noise(repeated.features(hidden), repeated.Y))


def test_ntk_limit_of_weighted_rows_equals_that_of_duplicated_rows():
    """ifBNN's ``ntk_limit`` regresses on the batch in closed form: row weights are
    observation counts there too."""
    from skfbnn.inference.vi import ifbnn
    from tests.inference.vi.test_ifbnn import _setup

    _, problem, mean, std, draw, _ = _setup((4,))
    gen = torch.Generator().manual_seed(3)
    xb = torch.randn(5, 2, generator=gen, dtype=F64)
    yb = torch.randn(5, 1, generator=gen, dtype=F64)
    w = torch.tensor([2.0, 1.0, 0.0, 3.0, 1.0], dtype=F64)
    rows = torch.repeat_interleave(torch.arange(5), w.long())
    weighted = ifbnn.linearized_w2(problem, mean, std, draw, batch={"x": xb, "y": yb, "w": w})
    repeated = ifbnn.linearized_w2(problem, mean, std, draw, batch={"x": xb[rows], "y": yb[rows]})
    # a duplicated row makes Theta_BB singular up to the nugget: round-off only
    torch.testing.assert_close(weighted, repeated, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("per_set", [False, True])
def test_variational_expected_log_likelihoods_weigh_rows_as_duplicates(per_set):
    """Bayes by backprop's (and ifBNN's) and fBNN's expected log-likelihoods, with several
    weight draws per set and per-set minibatches (the rows repeated for every draw)."""
    from skfbnn.inference.vi import bbb, fbnn
    from skfbnn.priors.functional import FunctionalPrior, FunctionPrior, MeasurementDraw

    gen = torch.Generator().manual_seed(0)
    net = build_mlp(2, 2, (6,), "tanh")
    problem = BayesProblem(make_forward(net), HeteroscedasticGaussianLikelihood(beta=0.5),
                           FunctionPrior(FunctionalPrior(None, None, 0.1)), 20)
    C, S = 2, 4
    mean = init_params(net, C, gen, device=torch.device("cpu"), dtype=F64)
    std = {k: 0.1 + 0.0 * v for k, v in mean.items()}
    draws = init_params(net, C * S, gen, device=torch.device("cpu"), dtype=F64)
    x = torch.randn(*((C,) if per_set else ()), 7, 2, generator=gen, dtype=F64)
    y = torch.randn(*x.shape[:-1], 1, generator=gen, dtype=F64)
    w = torch.tensor([2.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0], dtype=F64)
    rows = torch.repeat_interleave(torch.arange(7), w.long())
    measure = MeasurementDraw(torch.randn(4, 2, generator=gen, dtype=F64),
                              torch.zeros(1, 4, dtype=F64), torch.eye(4, dtype=F64)[None])
    weighted = {"x": x, "y": y, "w": w.expand(*x.shape[:-1]), "measure": measure}
    repeated = {"x": x[..., rows, :], "y": y[..., rows, :], "measure": measure}
    for n_mc in (S, 2):
        a, _ = fbnn._network_values(draws, weighted, problem, C, S, n_mc, 1)
        b, _ = fbnn._network_values(draws, repeated, problem, C, S, n_mc, 1)
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-10)
        a = bbb.expected_log_likelihood(mean, std, weighted, torch.Generator().manual_seed(1),
                                        problem, n_mc)
        b = bbb.expected_log_likelihood(mean, std, repeated, torch.Generator().manual_seed(1),
                                        problem, n_mc)
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-10)


def test_sklearn_weight_equivalence_check_passes_for_a_full_batch_sampler():
    """scikit-learn's own check (random integer weights against repeated rows) on pCN: a
    full-batch chain whose run length does not depend on the rows. With 64 hidden units the
    weighted and the repeated rows both take the ``n x n`` factorisation."""
    from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_sample_weight_equivalence_on_dense_data(
            "PCNRegressor", skfbnn.PCNRegressor(hidden_layer_sizes=(64,), n_burnin=20,
                                                n_chains=2, n_samples=4, thinning=2,
                                                random_state=0))


def test_weights_of_a_single_class_raise_a_clear_error():
    X, _, labels = _data()
    with pytest.raises(ValueError, match="only one class: 1"):
        make(skfbnn.SGLDClassifier).fit(X, labels, sample_weight=labels.astype(float))


def test_rows_of_weight_zero_do_not_count_in_the_fit_checks():
    """A classifier trained on one half of the rows (the others weight 0) is not judged on
    the other half, whose labels here are flipped."""
    X, _, labels = _data()
    w = np.ones(len(X))
    w[::2] = 0.0
    flipped = np.where(w > 0, labels, 1 - labels)
    est = make(skfbnn.SGLDClassifier).fit(X, flipped, sample_weight=w)
    assert est.diagnostics_["training_accuracy"] > 0.8
