"""The adaptive diagonal preconditioner (pSGLD, scale-adapted SGHMC).

After burn-in the inverse mass ``D`` is frozen, so each chain is a fixed
linear recursion on Bayesian linear regression whose exact stationary law
follows from a discrete Lyapunov equation with ``D``: each chain's draws are
whitened by its own law and the pooled moments checked against N(0, I).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn.inference.run import run
from skfbnn.inference.sgmcmc import sghmc, sgld
from skfbnn.inference.sgmcmc.diffusions import (
    LARGE_DATA,
    SMALL_DATA,
    Preconditioner,
    adapt_preconditioner,
    init_preconditioner,
    noise_std,
    noises_like,
    update_step,
)
from skfbnn.inference.types import BayesProblem

from .._harness import (
    SIGMA,
    TAU,
    linear_problem,
    moment_z_scores,
    sghmc_stationary_cov,
    sgld_stationary_cov,
    z_critical,
)

F64 = torch.float64
N_BURNIN = 300


def _linear_run(transform, Phi, y, n_steps, thinning, seed=0, n_chains=8):
    gen = torch.Generator().manual_seed(seed)
    start = {"w": torch.zeros(n_chains, Phi.shape[1], dtype=torch.float64)}
    return run(transform, start, Phi, y, gen, n_steps=n_steps, batch_size=len(Phi),
               n_burnin=N_BURNIN, thinning=thinning)


def _problem(Phi):
    return BayesProblem(
        forward=lambda p, x: (x @ p["w"].unsqueeze(-1)),
        log_likelihood=lambda f, y, p: -0.5 * ((y - f) ** 2).sum((1, 2)) / SIGMA**2,
        log_prior=lambda p, f_m, m: -0.5 * (p["w"] ** 2).sum(-1) / TAU**2,
        n_data=len(Phi),
    )


def _data():
    X, y, mu, precision = linear_problem()
    Phi = torch.as_tensor(np.column_stack([X, np.ones(len(X))]))
    return Phi, torch.as_tensor(y).unsqueeze(-1), mu, precision


def _whitened_z(result, mu, law) -> np.ndarray:
    draws = result.draws["w"].numpy()  # (C, S, p)
    inv_mass = result.state.preconditioner.inverse_mass["w"].numpy()  # (C, p)
    white = []
    for chain, d in zip(draws, inv_mass, strict=True):
        L = np.linalg.cholesky(law(d))
        white.append(np.linalg.solve(L, (chain - mu).T).T)
    return moment_z_scores(np.stack(white), np.zeros(len(mu)), np.eye(len(mu)))


@pytest.mark.parametrize("kernel", ["sgld", "sghmc"])
def test_adaptive_preconditioner_matches_discrete_lyapunov_law(kernel):
    Phi, y, mu, precision = _data()
    lam = np.linalg.eigvalsh(precision).max()
    if kernel == "sgld":
        h = 0.1 / np.sqrt(lam)
        transform = sgld.build(_problem(Phi), step_size=lambda t: h, preconditioner="adaptive",
                               n_burnin=N_BURNIN)
        law = lambda d: sgld_stationary_cov(precision, h, d)  # noqa: E731
    else:
        eta, alpha = 0.02 / np.sqrt(lam), 0.2
        transform = sghmc.build(_problem(Phi), step_size=lambda t: eta, friction=alpha,
                                n_leapfrog=None, preconditioner="adaptive", n_burnin=N_BURNIN)
        law = lambda d: sghmc_stationary_cov(precision, eta, alpha, d)  # noqa: E731
    result = _linear_run(transform, Phi, y, n_steps=N_BURNIN + 3000, thinning=5)
    inv_mass = result.state.preconditioner.inverse_mass["w"].numpy()
    # the metric really is non-trivial: it differs between coordinates
    assert (inv_mass.max(1) / inv_mass.min(1)).min() > 1.5
    z = _whitened_z(result, mu, law)
    assert np.all(np.isfinite(z))
    assert np.abs(z).max() < z_critical(len(z)), z


def test_identity_law_differs_from_adapted_metric():
    """Power check: the adapted chains are not at the identity-metric law."""
    Phi, y, mu, precision = _data()
    h = 0.1 / np.sqrt(np.linalg.eigvalsh(precision).max())
    transform = sgld.build(_problem(Phi), step_size=lambda t: h, preconditioner="adaptive",
                           n_burnin=N_BURNIN)
    result = _linear_run(transform, Phi, y, n_steps=N_BURNIN + 3000, thinning=5)
    z = _whitened_z(result, mu, lambda d: sgld_stationary_cov(precision, h))
    assert np.abs(z).max() > z_critical(len(z))


def test_adaptation_stops_after_burnin():
    params = {"w": torch.zeros(2, 3)}
    pre = init_preconditioner(params, "adaptive")
    grads = {"w": torch.full((2, 3), 2.0)}
    adapted = adapt_preconditioner(pre, grads, step=0, n_adapt=1)
    torch.testing.assert_close(adapted.inverse_mass["w"], torch.full((2, 3), 0.5))
    frozen = adapt_preconditioner(adapted, {"w": torch.full((2, 3), 9.0)}, step=1, n_adapt=1)
    assert frozen is adapted
    # a vanishing gradient does not give an unbounded inverse mass (floor: M^-1 <= 1)
    flat = adapt_preconditioner(pre, {"w": torch.full((2, 3), 1e-6)}, step=0, n_adapt=1)
    torch.testing.assert_close(flat.inverse_mass["w"], torch.ones(2, 3))
    assert init_preconditioner(params, "identity") == Preconditioner(None, None, 0)
    with pytest.raises(ValueError, match="preconditioner"):
        init_preconditioner(params, "diagonal")


def test_adapted_metric_is_the_bias_corrected_rms_of_the_gradients():
    """Several steps of the fused update equal the textbook running mean (RMSprop's,
    bias-corrected as Adam's) and ``M^-1 = 1 / max(sqrt(v_hat), 1)``, per element."""
    gen = torch.Generator().manual_seed(0)
    params = {"w": torch.zeros(2, 3, dtype=F64), "b": torch.zeros(2, dtype=F64)}
    pre = init_preconditioner(params, "adaptive")
    history = []
    for step in range(5):
        grads = {k: 3 * torch.randn(v.shape, generator=gen, dtype=F64) for k, v in params.items()}
        history.append(grads)
        pre = adapt_preconditioner(pre, grads, step=step, n_adapt=10)
    decay = 0.99
    for key in params:
        v = sum((1 - decay) * decay ** (4 - t) * g[key] ** 2 for t, g in enumerate(history))
        expected = 1.0 / (v / (1 - decay**5)).sqrt().clamp_min(1.0)
        torch.testing.assert_close(pre.inverse_mass[key], expected, rtol=1e-12, atol=0)
        assert pre.square_mean[key] is not history[-1][key]


def test_noises_like_is_one_standard_normal_draw_split_by_shape():
    params = {"w": torch.zeros(4, 3, 5, dtype=F64), "b": torch.zeros(4, 5, dtype=F64)}
    noise = noises_like(params, torch.Generator().manual_seed(1))
    flat = torch.randn(4 * 3 * 5 + 4 * 5, generator=torch.Generator().manual_seed(1),
                       dtype=F64)
    assert {k: v.shape for k, v in noise.items()} == {k: v.shape for k, v in params.items()}
    torch.testing.assert_close(torch.cat([noise["w"].flatten(), noise["b"].flatten()]), flat)
    many = noises_like({"w": torch.zeros(200_000, dtype=F64)}, torch.Generator().manual_seed(2))
    z_mean = float(many["w"].mean()) / (1 / 200_000) ** 0.5
    z_var = (float(many["w"].var()) - 1.0) / (2 / 200_000) ** 0.5
    assert abs(z_mean) < 4 and abs(z_var) < 4


def test_noise_std_subtracts_minibatch_noise():
    inverse_mass = {"w": torch.tensor([1.0, 0.01])}
    pre = Preconditioner({"w": torch.ones(2)}, inverse_mass, 1)
    eta, variance = 0.1, 0.5
    full = noise_std(pre, "w", variance, eta, batch_fraction=1.0)
    torch.testing.assert_close(full, torch.tensor([0.5, 0.005]).sqrt())
    mini = noise_std(pre, "w", variance, eta, batch_fraction=0.0)
    torch.testing.assert_close(mini, torch.tensor([0.5 - 0.01, 0.0]).sqrt())
    identity = Preconditioner(None, None, 0)
    assert noise_std(identity, "w", variance, eta, batch_fraction=0.1) == variance**0.5


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_noise_std_subtracts_only_the_noise_share_of_the_squared_gradient(fraction):
    """The minibatch noise is ``1 - b/N`` of the squared gradient's running mean."""
    pre = Preconditioner({"w": torch.ones(1)}, {"w": torch.ones(1)}, 1)
    eta, variance = 0.1, 0.5
    got = noise_std(pre, "w", variance, eta, batch_fraction=fraction)
    torch.testing.assert_close(got**2, torch.tensor([variance - eta**2 * (1 - fraction)]))


@pytest.mark.parametrize("n_data", [10, 256, 700, 1024, 5000, 40000])
def test_adaptive_step_is_per_datum_between_the_clips(n_data):
    step = update_step(0.5, n_data, "adaptive")
    clipped = min(max(n_data, SMALL_DATA), LARGE_DATA)
    assert step == pytest.approx(0.5 / clipped)
    assert 0.5 / LARGE_DATA <= step <= 0.5 / SMALL_DATA


def test_identity_step_is_per_datum_at_any_size():
    for n_data in (10, 5000, 40000):
        assert update_step(0.5, n_data) == pytest.approx(0.5 / n_data)
