"""Deep ensembles: vectorised training equals a loop over members, step for step."""

from __future__ import annotations

import pytest
import torch

from skfbnn.inference.ensemble import deep_ensemble
from skfbnn.inference.families import lr_schedule
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import CategoricalLikelihood, HeteroscedasticGaussianLikelihood
from skfbnn.nn.functional import index_params, init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.weight import WeightPrior

F64 = torch.float64
M, N, STEPS = 3, 20, 6


def _setup(task: str, prior_std: float | None):
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(N, 2, generator=gen, dtype=F64)
    if task == "regression":
        y = torch.sin(X[:, :1]) + 0.1 * torch.randn(N, 1, generator=gen, dtype=F64)
        likelihood, n_out = HeteroscedasticGaussianLikelihood(), 2
    else:
        y = (X[:, 0] > 0).long()
        likelihood, n_out = CategoricalLikelihood(), 2
    net = build_mlp(2, n_out, (8,), "tanh")
    prior = None if prior_std is None else WeightPrior(prior_std)
    problem = BayesProblem(make_forward(net), likelihood, prior, N)
    params = init_params(net, M, gen, device=torch.device("cpu"), dtype=F64)
    # one minibatch order per member and step, as the driver feeds them
    order = torch.stack([torch.randperm(N, generator=gen)[:8] for _ in range(STEPS * M)])
    order = order.reshape(STEPS, M, 8)
    return problem, params, X, y, order


@pytest.mark.parametrize("task, prior_std",
                         [("regression", None), ("regression", 1.0), ("classification", None)])
def test_vectorised_members_equal_a_loop_over_members(task, prior_std):
    problem, params, X, y, order = _setup(task, prior_std)
    transform = deep_ensemble.build(problem, learning_rate=lr_schedule("cosine", 1e-2, STEPS))
    gen = torch.Generator()
    state = transform.init(params)
    together = []
    for t in range(STEPS):
        state, info = transform.update(state, {"x": X[order[t]], "y": y[order[t]]}, gen)
        together.append((state.params, info))
    for m in range(M):
        single = transform.init(index_params(params, slice(m, m + 1)))
        for t in range(STEPS):
            idx = order[t, m : m + 1]
            single, info = transform.update(single, {"x": X[idx], "y": y[idx]}, gen)
            joint_params, joint_info = together[t]
            for k, v in single.params.items():
                torch.testing.assert_close(v[0], joint_params[k][m], rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(info.objective[0], joint_info.objective[m])
    final = together[-1][0]["0.weight"]
    assert not torch.allclose(final[0], final[1])  # members differ


def test_prior_penalises_weights():
    """With a weight prior the objective is the likelihood minus the prior penalty."""
    problem, params, X, y, _ = _setup("regression", 0.5)
    flat, _, _, _, _ = _setup("regression", None)
    batch = {"x": X, "y": y}
    a = deep_ensemble.build(problem, learning_rate=lambda t: 1e-2)
    b = deep_ensemble.build(flat, learning_rate=lambda t: 1e-2)
    _, info_a = a.update(a.init(params), batch, torch.Generator())
    _, info_b = b.update(b.init(params), batch, torch.Generator())
    penalty = (WeightPrior(0.5).log_prob(params) / N)
    torch.testing.assert_close(info_a.objective, info_b.objective + penalty)


def test_calibrate_variance_adds_a_held_out_floor_to_the_heads():
    """``calibrate_variance=True`` trains the same members (equal means) and adds, per member
    and output, a non-negative variance to the heads (wider aleatoric std); it survives
    pickling; without variance heads (a fixed noise) there is nothing to calibrate."""
    import pickle

    import numpy as np

    from skfbnn import DeepEnsembleRegressor
    from skfbnn.likelihoods import VARIANCE_FLOOR_KEY

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (60, 1))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=60)
    # 60 rows, 1000 steps: the heads learn the training residuals of one member, whose held-out
    # rows then call for a floor beyond the likelihood-ratio test
    kw = dict(n_iter=1000, n_estimators=3, hidden_layer_sizes=(32, 32), device="cpu",
              random_state=0, validation_fraction=0.3)
    plain = DeepEnsembleRegressor(**kw, calibrate_variance=False).fit(X, y)
    cal = DeepEnsembleRegressor(**kw, calibrate_variance=True).fit(X, y)
    floor = cal.posterior_.members[VARIANCE_FLOOR_KEY]
    assert floor.shape == (3, 1) and bool((floor >= 0).all()) and bool((floor > 0).any())
    np.testing.assert_array_equal(cal.predict(X), plain.predict(X))
    wider = cal.predict_std(X, kind="aleatoric") - plain.predict_std(X, kind="aleatoric")
    assert wider.min() >= 0 and wider.max() > 0
    loaded = pickle.loads(pickle.dumps(cal))
    np.testing.assert_array_equal(loaded.predict_std(X), cal.predict_std(X))
    fixed = DeepEnsembleRegressor(**kw, noise_std=0.3, calibrate_variance=True).fit(X, y)
    assert VARIANCE_FLOOR_KEY not in fixed.posterior_.members


def test_calibrate_variance_auto_is_true_with_held_out_rows_and_off_without():
    """The default 'auto' gives the members of ``True`` where there are held-out rows, and
    without them (``validation_fraction=0``) the members of ``False``, with no error."""
    import numpy as np

    from skfbnn import DeepEnsembleRegressor
    from skfbnn.likelihoods import VARIANCE_FLOOR_KEY

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (60, 1))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=60)
    kw = dict(n_iter=1000, n_estimators=3, hidden_layer_sizes=(32, 32), device="cpu",
              random_state=0, validation_fraction=0.3)
    assert DeepEnsembleRegressor().calibrate_variance == "auto"
    auto = DeepEnsembleRegressor(**kw).fit(X, y).posterior_.members
    true = DeepEnsembleRegressor(**kw, calibrate_variance=True).fit(X, y).posterior_.members
    assert auto.keys() == true.keys() and VARIANCE_FLOOR_KEY in auto
    for key in auto:
        torch.testing.assert_close(auto[key], true[key], rtol=0, atol=0)
    kw["validation_fraction"] = 0.0
    auto = DeepEnsembleRegressor(**kw).fit(X, y).posterior_.members
    off = DeepEnsembleRegressor(**kw, calibrate_variance=False).fit(X, y).posterior_.members
    assert VARIANCE_FLOOR_KEY not in auto and auto.keys() == off.keys()
    for key in auto:
        torch.testing.assert_close(auto[key], off[key], rtol=0, atol=0)


def test_calibrate_variance_without_held_out_rows_is_refused_by_name():
    import numpy as np

    from skfbnn import DeepEnsembleRegressor

    X, y = np.linspace(-1, 1, 20)[:, None], np.linspace(-1, 1, 20)
    with pytest.raises(ValueError, match="calibrate_variance.*validation_fraction=0.0"):
        DeepEnsembleRegressor(n_iter=5, n_estimators=2, device="cpu", calibrate_variance=True,
                              validation_fraction=0.0).fit(X, y)
