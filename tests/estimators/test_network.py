"""``network=``: the user's module behind every SG-MCMC, variational and ensemble method.

The equivalence oracle carries the existing oracles over to the generic path: the
built-in MLP wrapped as a user module (a subclass, so not the batched fast path) gives
the built-in path's draws, predictions and diagnostics in float64.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from torch import nn

import skfbnn
from skfbnn.estimators import estimator_pair
from skfbnn.nn.mlp import ACTIVATIONS

from ..conftest import FAST, FAST_ENSEMBLE, FAST_FUNCTIONAL, FAST_MH, FAST_OPTIMISATION
from ._cases import common_checks

F64 = dict(dtype="float64", device="cpu", random_state=0)


class WrappedMLP(nn.Module):
    """The built-in MLP's layers as a user module: a body and a head."""

    def __init__(self, n_features_in, n_outputs, width=8, depth=1, activation="tanh"):
        super().__init__()
        layers, n = [], n_features_in
        for _ in range(depth):
            layers += [nn.Linear(n, width), ACTIVATIONS[activation]()]
            n = width
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(n, n_outputs)

    def forward(self, x):
        return self.head(self.body(x))


def _builtin_names(depth: int) -> dict[str, str]:
    """The built-in MLP's parameter names by the wrapped module's."""
    out = {}
    for i in range(depth):
        out[f"body.{2 * i}.weight"], out[f"body.{2 * i}.bias"] = \
            f"{2 * i}.weight", f"{2 * i}.bias"
    out["head.weight"], out["head.bias"] = f"{2 * depth}.weight", f"{2 * depth}.bias"
    return out


RANK_BASED = {"r_hat", "ess_bulk", "ess_tail", "max_r_hat", "min_ess_bulk", "min_ess_tail"}
"""Rank statistics: the folded (tail) R-hat and ESS rank ``|x - median|`` of the split
chains, an even number of draws whose two middle deviations tie exactly, so a unit in the
last place decides their order and moves these numbers by a few per cent. They are not
compared; the continuous summaries of the same probe draws (``chain_disagreement``,
``mc_error``) and the draws themselves are."""


def _assert_same_diagnostics(a, b, path="diagnostics_"):
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for key in a:
            if key in RANK_BASED:
                continue
            _assert_same_diagnostics(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], (int, float))):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same_diagnostics(x, y, f"{path}[{i}]")
    elif isinstance(a, (np.ndarray, torch.Tensor, float, int, list, tuple)) \
            and not isinstance(a, bool):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                   rtol=1e-7, atol=1e-9, err_msg=path)
    elif hasattr(a, "kind"):  # a SamplerWarning
        assert a.kind == b.kind, path
    else:
        assert a == b, path


EQUIVALENCE = [
    ("sgld", FAST, 1, "tanh"),
    ("fsgld", FAST_FUNCTIONAL, 1, "tanh"),
    ("sghmc", FAST, 1, "tanh"),
    ("bbb", FAST_OPTIMISATION, 1, "tanh"),
    ("fbnn", dict(FAST_OPTIMISATION, prior_fit_iter=5, n_measurement_points=10), 2, "gelu"),
    ("ifbnn", dict(FAST_OPTIMISATION, prior_fit_iter=5, n_measurement_points=10), 2, "gelu"),
    ("ensemble", FAST_ENSEMBLE, 2, "gelu"),
    ("ifbde", dict(FAST_ENSEMBLE, prior_fit_iter=5, n_measurement_points=10), 2, "gelu"),
]


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("method, budget, depth, activation", EQUIVALENCE,
                         ids=[m for m, *_ in EQUIVALENCE])
def test_wrapped_mlp_equals_the_builtin_path(method, budget, depth, activation, task,
                                             regression_data, classification_data):
    """Same draws, predictions and diagnostics (float64, rounding only)."""
    X, y = regression_data if task == "regression" else classification_data
    cls = estimator_pair(method)[task == "classification"]
    builtin = cls(hidden_layer_sizes=(8,) * depth, activation=activation, **budget, **F64)
    user = cls(network=WrappedMLP,
               network_params=dict(width=8, depth=depth, activation=activation),
               **budget, **F64)
    with np.errstate(all="ignore"):
        builtin.fit(X, y)
        user.fit(X, y)
    names = _builtin_names(depth)
    a, b = builtin.posterior_.flat(), user.posterior_.flat()
    mapped = {names.get(k, k): v for k, v in b.items()}
    assert set(mapped) == set(a)
    for key in a:
        # A learned noise that a line search sets (the variational methods' held-out
        # calibration, a golden-section search on a smooth optimum) is located only to
        # about sqrt(eps) = 1.5e-8: nearer the optimum the objective's differences are
        # rounding, so a unit in the last place may move it that far.
        atol = np.sqrt(np.finfo(float).eps) if key == "log_noise" else 1e-10
        torch.testing.assert_close(mapped[key], a[key], rtol=1e-8, atol=atol, msg=key)
    predict = "predict_proba" if task == "classification" else "predict"
    np.testing.assert_allclose(getattr(user, predict)(X), getattr(builtin, predict)(X),
                               rtol=1e-8, atol=1e-10)
    diagnostics = dict(user.diagnostics_)
    if "prior_std" in diagnostics:
        diagnostics["prior_std"] = {names[k]: v for k, v in diagnostics["prior_std"].items()}
    _assert_same_diagnostics(builtin.diagnostics_, diagnostics)


# ------------------------------------------------------------------ scikit-learn contract
def small_mlp(n_features_in, n_outputs, width=8):
    """A network callable for the common checks: a residual MLP with LayerNorm."""
    return ResidualMLP(n_features_in, n_outputs, width)


class ResidualMLP(nn.Module):
    def __init__(self, n_features_in, n_outputs, width=8):
        super().__init__()
        self.inp = nn.Linear(n_features_in, width)
        self.block = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU())
        self.out = nn.Linear(width, n_outputs)

    def forward(self, x):
        h = self.inp(x)
        return self.out(h + self.block(h))


def _network_instances():
    budgets = {"sgld": FAST, "bbb": FAST_OPTIMISATION, "ensemble": FAST_ENSEMBLE}
    for method, budget in budgets.items():
        for cls in estimator_pair(method):
            yield cls(network=WrappedMLP, network_params={"width": 50}, random_state=0,
                      **budget)
    for cls in (skfbnn.BayesianNetRegressor, skfbnn.BayesianNetClassifier):
        yield cls(method="fsgld", method_params=FAST_FUNCTIONAL, network=WrappedMLP,
                  network_params={"width": 50}, random_state=0)


@common_checks(_network_instances(), "as for the built-in network (test_common.py)")
def test_sklearn_compatible_with_a_network(estimator, check):
    check(estimator)


def test_grid_search_over_network_params(regression_data):
    X, y = regression_data
    search = GridSearchCV(
        make_pipeline(StandardScaler(), skfbnn.SGLDRegressor(
            network=small_mlp, random_state=0, **FAST)),
        {"sgldregressor__network_params": [{"width": 4}, {"width": 8}]}, cv=2)
    search.fit(X, y)
    assert search.best_params_["sgldregressor__network_params"] in ({"width": 4},
                                                                     {"width": 8})
    net = search.best_estimator_[-1].network_
    assert net.inp.out_features == search.best_params_["sgldregressor__network_params"][
        "width"]


def test_clone_pickle_and_fit_leave_the_instance_unchanged(regression_data):
    X, y = regression_data
    module = ResidualMLP(3, 1, 5)
    before = copy.deepcopy(module.state_dict())
    global_rng = torch.random.get_rng_state()
    est = skfbnn.BBBRegressor(network=module, random_state=0, **FAST_OPTIMISATION)
    twin = clone(est)
    assert twin.network is not module and isinstance(twin.network, ResidualMLP)
    est.fit(X, y)
    assert est.network is module and est.network_ is not module
    for key, value in module.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert torch.equal(torch.random.get_rng_state(), global_rng)
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    # the instance's own weights are an architecture only: the fit draws its own
    other = ResidualMLP(3, 1, 5)
    np.testing.assert_array_equal(
        clone(est).set_params(network=other).fit(X, y).predict(X), est.predict(X))


def test_the_callables_draws_leave_the_global_rng_alone(regression_data):
    X, y = regression_data
    state = torch.random.get_rng_state()
    skfbnn.SGLDRegressor(network=small_mlp, random_state=0, **FAST).fit(X, y)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32


# ------------------------------------------------------------------ input_shape
class TinyCNN(nn.Module):
    def __init__(self, n_features_in, n_outputs, channels=3):
        super().__init__()
        self.conv = nn.Conv1d(1, channels, 3, padding=1)
        self.norm = nn.GroupNorm(1, channels)
        self.head = nn.Linear(channels * n_features_in, n_outputs)

    def forward(self, x):
        return self.head(torch.tanh(self.norm(self.conv(x))).flatten(1))


def test_input_shape_reshapes_rows_inside_the_network(classification_data):
    X, y = classification_data
    X6 = np.hstack([X, X ** 2, X[:, :1] * X[:, 1:], np.sin(X[:, :1])])  # 6 columns
    est = skfbnn.SGLDClassifier(network=TinyCNN, input_shape=(1, 6), random_state=0,
                                **FAST).fit(X6, y)
    assert est.n_features_in_ == 6
    p = est.predict_proba(X6)
    np.testing.assert_array_equal(est.predict_proba(X6.reshape(-1, 1, 6)), p)
    again = skfbnn.SGLDClassifier(network=TinyCNN, input_shape=(1, 6), random_state=0,
                                  **FAST).fit(X6.reshape(-1, 1, 6), y)
    np.testing.assert_array_equal(again.predict_proba(X6), p)
    with pytest.raises(ValueError, match=r"\(1, 5\).*input_shape is \(1, 6\)"):
        est.predict(X6[:, :5].reshape(-1, 1, 5))
    with pytest.raises(ValueError, match=r"\(5,\).*input_shape is \(1, 6\)"):
        est.predict(X6[:, :5])


def test_input_shape_must_hold_positive_integers(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="input_shape must be"):
        skfbnn.SGLDRegressor(network=small_mlp, input_shape=(3, 0), **FAST).fit(X, y)


# ------------------------------------------------------------------ refusals
class WithBatchNorm(nn.Module):
    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.lin = nn.Linear(n_features_in, 4)
        self.bn = nn.BatchNorm1d(4)
        self.out = nn.Linear(4, n_outputs)

    def forward(self, x):
        return self.out(self.bn(self.lin(x)))


class Clashing(nn.Module):
    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.anchor = nn.Linear(n_features_in, n_outputs)

    def forward(self, x):
        return self.anchor(x)


class Scaled(nn.Module):
    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.lin = nn.Linear(n_features_in, n_outputs)
        self.scale = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return self.scale * self.lin(x)


class Failing(nn.Module):
    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.lin = nn.Linear(n_features_in + 1, n_outputs)

    def forward(self, x):
        return self.lin(x)


class Noisy(nn.Module):
    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.lin = nn.Linear(n_features_in, n_outputs)

    def forward(self, x):
        return self.lin(x + torch.randn_like(x))


class Squared(nn.Module):
    def __init__(self, n_features_in, n_outputs):
        super().__init__()
        self.lin = nn.Linear(n_features_in, n_outputs)

    def forward(self, x):
        return self.lin(x ** 2)


@pytest.mark.parametrize("network, match", [
    (WithBatchNorm, "BatchNorm1d.*LayerNorm or nn.GroupNorm"),
    (lambda d, k: nn.Sequential(nn.Linear(d, 4), nn.Dropout(0.1), nn.Linear(4, k)),
     "Dropout with p=0.1.*set p=0"),
    (Clashing, "'anchor.weight' clashes with the package's own"),
    (Scaled, "'scale'.*no initialisation rule.*register_buffer"),
    (Failing, "forward failed on the first two rows"),
    (Noisy, "random"),
    (lambda d, k: nn.Linear(d, k + 1), r"outputs of shape \(2, 2\).*needs \(2, 1\)"),
    (lambda d, k: nn.Sequential(nn.LazyLinear(k)), "lazy LazyLinear"),
])
def test_what_the_inference_cannot_take_is_refused(network, match, regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match=match) as info:
        skfbnn.SGLDRegressor(network=network, **FAST).fit(X, y)
    if network is Failing:
        assert isinstance(info.value.__cause__, RuntimeError)  # the module's own error


def test_frozen_parameters_are_refused(regression_data):
    X, y = regression_data
    net = nn.Linear(3, 1)
    net.bias.requires_grad_(False)
    with pytest.raises(ValueError, match="'bias' has requires_grad=False.*buffer"):
        skfbnn.SGLDRegressor(network=net, **FAST).fit(X, y)


@pytest.mark.parametrize("network", [Squared, TinyCNN])
def test_ard_needs_a_first_linear_layer_of_the_inputs(network, regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="prior_std='ard'.*nn.Linear of the flat input"):
        skfbnn.SGLDRegressor(network=network, prior_std="ard",
                             input_shape=(1, 3) if network is TinyCNN else None,
                             **FAST).fit(X, y)
    est = skfbnn.SGLDRegressor(network=small_mlp, prior_std="ard", **FAST).fit(X, y)
    assert est.diagnostics_["prior_std"]["inp.weight"].shape == (FAST["n_chains"], 3)
    plain = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))  # the fast path
    est = skfbnn.SGLDRegressor(network=plain, prior_std="ard", **FAST).fit(X, y)
    assert est.diagnostics_["prior_std"]["0.weight"].shape == (FAST["n_chains"], 3)


def test_architecture_parameters_conflict_with_network(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="hidden_layer_sizes and activation set together "
                                         "with network"):
        skfbnn.SGLDRegressor(network=small_mlp, hidden_layer_sizes=(3,), activation="relu",
                             **FAST).fit(X, y)
    with pytest.raises(ValueError, match="^activation set together with network"):
        skfbnn.BayesianNetRegressor(network=small_mlp, activation="relu").fit(X, y)


def test_network_params_need_a_callable(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="network_params are the keyword arguments"):
        skfbnn.SGLDRegressor(network=nn.Linear(3, 1), network_params={"a": 1},
                             **FAST).fit(X, y)
    with pytest.raises(TypeError, match="must return a torch.nn.Module"):
        skfbnn.SGLDRegressor(network=lambda d, k: "net", **FAST).fit(X, y)


def test_metropolis_hastings_needs_a_sequential_with_a_linear_readout(regression_data):
    X, y = regression_data
    with pytest.raises(ValueError, match="need a linear readout"):
        skfbnn.PCNRegressor(network=small_mlp, **FAST_MH).fit(X, y)
    with pytest.raises(ValueError, match="need a linear readout"):
        skfbnn.PCNLRegressor(network=nn.Sequential(nn.Linear(3, 4), nn.Tanh()),
                             **FAST_MH).fit(X, y)


class UserActivation(nn.Module):
    """A built-in activation behind a user's module: the batched MLP path does not
    recognise it, so the network takes the generic path."""

    def __init__(self, name):
        super().__init__()
        self.inner = ACTIVATIONS[name]()

    def forward(self, x):
        return self.inner(x)


def sequential_mlp(n_features_in, n_outputs, width=8, activation="relu"):
    return nn.Sequential(nn.Linear(n_features_in, width), UserActivation(activation),
                         nn.Linear(width, n_outputs))


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("method", ["pcn", "pcnl", "mala"])
def test_sequential_mlp_equals_the_builtin_path_for_metropolis_hastings(
        method, task, regression_data, classification_data, monkeypatch):
    """The MH samplers' generic body (functional_call + vmap over chains) gives the
    built-in NTK layout's draws, diagnostics and predictions in float64 (the features too:
    in their default float32 the two paths' sums round differently)."""
    from skfbnn.inference.mh import build as mh_build

    monkeypatch.setattr(mh_build, "FEATURES_DTYPE", torch.float64)
    X, y = regression_data if task == "regression" else classification_data
    cls = estimator_pair(method)[task == "classification"]
    builtin = cls(hidden_layer_sizes=(8,), activation="relu", **FAST_MH, **F64).fit(X, y)
    user = cls(network=sequential_mlp, network_params=dict(width=8, activation="relu"),
               **FAST_MH, **F64).fit(X, y)
    a, b = builtin.posterior_.flat(), user.posterior_.flat()
    assert set(a) == set(b)
    for key in a:
        torch.testing.assert_close(b[key], a[key], rtol=1e-8, atol=1e-10, msg=key)
    predict = "predict_proba" if task == "classification" else "predict"
    np.testing.assert_allclose(getattr(user, predict)(X), getattr(builtin, predict)(X),
                               rtol=1e-8, atol=1e-10)
    _assert_same_diagnostics(builtin.diagnostics_, user.diagnostics_)


def test_metropolis_hastings_fits_the_package_cnn_on_unflattened_rows():
    """pCNL on CNN1d with rows given as (n, 1, 12) signals: the body's GroupNorm affine
    parameters are held at their initial values in every draw, the rest is sampled."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 1, 12))
    y = X[:, 0, :4].sum(axis=1) + 0.1 * rng.normal(size=30)
    est = skfbnn.PCNLRegressor(network=skfbnn.nn.CNN1d,
                               network_params=dict(channels=4, n_blocks=2, kernel_size=3),
                               input_shape=(1, 12), **FAST_MH, random_state=0).fit(X, y)
    assert est.predict(X).shape == (30,) and np.isfinite(est.predict(X)).all()
    np.testing.assert_allclose(est.predict(X), est.predict(X.reshape(30, 12)))
    draws = est.posterior_.flat()
    assert torch.all(draws["norm0.weight"] == 1) and torch.all(draws["norm0.bias"] == 0)
    assert draws["conv0.weight"].flatten(1).std(dim=0).min() > 0  # sampled


def test_ifbde_random_functions_leave_the_readout_and_normalisation_alone(regression_data):
    """ifBDE perturbs every parameter but the readout's and those that start at a constant
    (here LayerNorm's), each by its own initialisation variance."""
    X, y = regression_data
    est = skfbnn.IFBDERegressor(network=skfbnn.nn.ResidualMLP, network_params={"width": 6},
                                random_function=True, random_state=0, prior_fit_iter=5,
                                n_measurement_points=10,
                                **FAST_ENSEMBLE).fit(X, y)
    members = est.posterior_.flat()
    direction = {k[len("random_function.direction."):]: v for k, v in members.items()
                 if k.startswith("random_function.direction.")}
    assert set(direction) == {n for n, _ in est.network_.named_parameters()}
    for name, d in direction.items():
        owner = est.network_.get_submodule(name.rpartition(".")[0])
        fixed = name.startswith("readout.") or isinstance(owner, nn.LayerNorm)
        assert bool((d == 0).all()) == fixed, name
    assert members["random_function.outputs"].shape == (FAST_ENSEMBLE["n_estimators"], 2)
    assert np.isfinite(est.predict(X)).all()


def test_constant_targets_and_warm_start_with_a_network(regression_data):
    X, y = regression_data
    const = skfbnn.SGLDRegressor(network=small_mlp, random_state=0, **FAST).fit(X, np.ones(40))
    mean, std = const.predict(X[:3], return_std=True)
    np.testing.assert_array_equal(mean, 1.0)
    est = skfbnn.SGLDRegressor(network=small_mlp, warm_start=True, random_state=0, **FAST)
    first = est.fit(X, y).posterior_.draws["out.weight"][:, -1].clone()
    est.set_params(n_burnin=10).fit(X, y)
    assert est.posterior_.draws["out.weight"].shape[2:] == first.shape[1:]
    assert not torch.equal(est.posterior_.draws["out.weight"][:, 0], first)  # moved on


_CNN = dict(network=skfbnn.nn.CNN1d, input_shape=(1, 12),
            network_params=dict(channels=4, n_blocks=2, kernel_size=3))
_CNN_FAMILIES = [
    (skfbnn.SGHMCClassifier, FAST), (skfbnn.FunctionalSGLDClassifier, FAST_FUNCTIONAL),
    (skfbnn.BBBClassifier, FAST_OPTIMISATION), (skfbnn.FBNNClassifier, FAST_OPTIMISATION),
    (skfbnn.IFBNNClassifier, FAST_OPTIMISATION), (skfbnn.DeepEnsembleClassifier, FAST_ENSEMBLE),
    (skfbnn.IFBDEClassifier, FAST_ENSEMBLE), (skfbnn.PCNLClassifier, FAST_MH)]


def _fit_cnn_and_unpickle(cls, budget, device):
    """A fit of the package's CNN on ``device``, its probabilities, and its pickle's on the
    CPU."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 12))
    y = (X[:, :4].sum(axis=1) > 0).astype(int)
    est = cls(**_CNN, **budget, device=device, random_state=0).fit(X, y)
    assert est.device_.type == device
    loaded = pickle.loads(pickle.dumps(est))
    return est.predict_proba(X), loaded.predict_proba(X)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls, budget", _CNN_FAMILIES, ids=[c.__name__ for c, _ in _CNN_FAMILIES])
def test_a_cnn_fits_on_cuda_and_its_pickle_predicts_on_the_cpu(cls, budget):
    proba, on_cpu = _fit_cnn_and_unpickle(cls, budget, "cuda")
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(on_cpu, proba, rtol=1e-4, atol=1e-5)
