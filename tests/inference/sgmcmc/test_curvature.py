"""The curvature cap: the sharpest preconditioned curvature against its closed form,
and the capped chain against its exact discrete stationary law."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn import SGHMCRegressor, SGLDRegressor
from skfbnn.inference.objective import make_log_posterior
from skfbnn.inference.run import run
from skfbnn.inference.sgmcmc import sghmc, sgld
from skfbnn.inference.sgmcmc.curvature import cap_hook, capped_scale, sharpest_curvature
from skfbnn.inference.sgmcmc.diffusions import (
    Preconditioner,
    adapt_preconditioner,
    noise_std,
    rescale_preconditioner,
)
from skfbnn.inference.types import BayesProblem

from ...conftest import FAST
from .._harness import moment_z_scores, sghmc_stationary_cov, z_critical
from .test_preconditioner import N_BURNIN, _data, _linear_run, _problem


def _largest(precision: np.ndarray, inv_mass: np.ndarray) -> float:
    root = np.sqrt(inv_mass)
    return float(np.linalg.eigvalsh(root[:, None] * precision * root[None, :]).max())


def test_sharpest_curvature_is_the_largest_eigenvalue_of_the_preconditioned_precision():
    Phi, y, mu, precision = _data()
    rng = np.random.default_rng(1)
    inv_mass = np.stack([np.ones(3), rng.uniform(0.01, 1.0, 3), rng.uniform(0.01, 1.0, 3)])
    # the Hessian of a Gaussian posterior does not depend on where it is taken
    params = {"w": torch.as_tensor(rng.normal(size=(3, 3)))}
    got = sharpest_curvature(make_log_posterior(_problem(Phi)), params, {"x": Phi, "y": y},
                             {"w": torch.as_tensor(inv_mass)}, torch.Generator().manual_seed(0),
                             n_iter=200)
    want = [_largest(precision, d) for d in inv_mass]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-8)
    assert len(set(np.round(want, 6))) == 3  # the chains really differ


def test_capped_scale_only_scales_down():
    curvature = torch.tensor([10.0, 1000.0, 0.0])
    torch.testing.assert_close(capped_scale(curvature, 0.01, 2.0),
                               torch.tensor([1.0, 0.2, 1.0]))


def test_rescaling_replaces_the_scale_and_survives_burnin_adaptation():
    pre = Preconditioner({"w": torch.ones(2, 3)}, {"w": torch.full((2, 3), 0.5)}, 1)
    half = rescale_preconditioner(pre, torch.tensor([0.5, 1.0]))
    torch.testing.assert_close(half.inverse_mass["w"][:, 0], torch.tensor([0.25, 0.5]))
    again = rescale_preconditioner(half, torch.tensor([0.1, 1.0]))  # replaces, no compounding
    torch.testing.assert_close(again.inverse_mass["w"][:, 0], torch.tensor([0.05, 0.5]))
    grads = {"w": torch.full((2, 3), 2.0)}
    adapted = adapt_preconditioner(again, grads, step=1, n_adapt=10)
    unscaled = adapt_preconditioner(pre, grads, step=1, n_adapt=10)
    torch.testing.assert_close(adapted.inverse_mass["w"],
                               unscaled.inverse_mass["w"] * torch.tensor([[0.1], [1.0]]))
    with pytest.raises(ValueError, match="adaptive"):
        rescale_preconditioner(Preconditioner(None, None, 0), torch.ones(2))


def test_minibatch_noise_subtraction_follows_the_scale():
    """A scale ``c`` multiplies ``M^{-1}``, so the minibatch noise is ``(c eta)^2 (1 - b/N)``."""
    pre = Preconditioner({"w": torch.ones(2, 1)}, {"w": torch.ones(2, 1)}, 1)
    scaled = rescale_preconditioner(pre, torch.tensor([0.5, 1.0]))
    got = noise_std(scaled, "w", 0.5, 0.2, batch_fraction=0.5) ** 2
    want = torch.tensor([[0.5 * 0.5 - 0.25 * 0.04 * 0.5], [0.5 - 0.04 * 0.5]])
    torch.testing.assert_close(got, want)


def _adapted_step(Phi, y, precision, alpha, product):
    """A step at which the sharpest curvature of a burnt-in adaptive metric times the
    step is about ``product`` (from a pilot run: the metric depends a little on it)."""
    eta = 0.02 / np.sqrt(np.linalg.eigvalsh(precision).max())
    pilot = sghmc.build(_problem(Phi), step_size=lambda t: eta, friction=alpha,
                        n_leapfrog=None, preconditioner="adaptive", n_burnin=N_BURNIN)
    inv_mass = _linear_run(pilot, Phi, y, n_steps=N_BURNIN, thinning=5).state \
        .preconditioner.inverse_mass["w"].numpy()
    return product / np.mean([_largest(precision, d) for d in inv_mass])


def test_capped_sghmc_chain_has_the_capped_step_and_its_exact_stationary_law():
    """A step at about 2 times the sharpest curvature is cut to ``cap`` at the end of
    burn-in; the kept chain is then the fixed recursion with the scaled metric, whose
    law follows from the discrete Lyapunov equation."""
    Phi, y, mu, precision = _data()
    alpha, cap = 0.2, 0.5
    eta = _adapted_step(Phi, y, precision, alpha, product=2.0)
    problem = _problem(Phi)
    gen = torch.Generator().manual_seed(3)
    hook = cap_hook(make_log_posterior(problem), Phi, y, gen, cap=cap,
                    step_size=lambda t: eta, at=N_BURNIN - 1)
    transform = sghmc.build(problem, step_size=lambda t: eta, friction=alpha, n_leapfrog=None,
                            preconditioner="adaptive", n_burnin=N_BURNIN)
    n_chains = 8
    start = {"w": torch.zeros(n_chains, Phi.shape[1], dtype=torch.float64)}
    result = run(transform, start, Phi, y, gen, n_steps=N_BURNIN + 3000, batch_size=len(Phi),
                 n_burnin=N_BURNIN, thinning=5, adapt=hook)
    pre = result.state.preconditioner
    assert (pre.scale < 0.5).all()
    inv_mass = pre.inverse_mass["w"].numpy()
    products = [eta * _largest(precision, d) for d in inv_mass]
    np.testing.assert_allclose(products, cap, rtol=1e-3)
    white = []
    for chain, d in zip(result.draws["w"].numpy(), inv_mass, strict=True):
        L = np.linalg.cholesky(sghmc_stationary_cov(precision, eta, alpha, d))
        white.append(np.linalg.solve(L, (chain - mu).T).T)
    z = moment_z_scores(np.stack(white), np.zeros(len(mu)), np.eye(len(mu)))
    assert np.abs(z).max() < z_critical(len(z)), z


def test_cap_holds_for_the_largest_step_after_it():
    """A schedule at a trough when the cap is measured (a cyclical one) and back at its
    peak afterwards: with ``until`` the cap is for the peak (peak times curvature equals
    ``cap``); without it the trough's step looks safe and nothing is cut, which left the
    later peaks unstable (SGHMC, ``schedule="cyclical"``: predictive std 135 sd(y))."""
    Phi, y, mu, precision = _data()
    alpha, cap = 0.2, 0.5
    eta = _adapted_step(Phi, y, precision, alpha, product=2.0)
    at = N_BURNIN - 1

    def schedule(t):  # the trough at the measuring step only
        return eta / 100 if t == at else eta

    problem = _problem(Phi)
    transform = sghmc.build(problem, step_size=schedule, friction=alpha, n_leapfrog=None,
                            preconditioner="adaptive", n_burnin=N_BURNIN)
    scales = {}
    for until in (None, N_BURNIN + 10):
        gen = torch.Generator().manual_seed(3)
        hook = cap_hook(make_log_posterior(problem), Phi, y, gen, cap=cap,
                        step_size=schedule, at=at, until=until)
        result = run(transform, {"w": torch.zeros(8, Phi.shape[1], dtype=torch.float64)},
                     Phi, y, gen, n_steps=N_BURNIN + 10, batch_size=len(Phi),
                     n_burnin=N_BURNIN, thinning=5, adapt=hook)
        pre = result.state.preconditioner
        scales[until] = pre.scale
        if until is not None:
            products = [eta * _largest(precision, d) for d in pre.inverse_mass["w"].numpy()]
            np.testing.assert_allclose(products, cap, rtol=1e-3)
    torch.testing.assert_close(scales[None], torch.ones(8, dtype=torch.float64))
    assert (scales[N_BURNIN + 10] < 0.5).all()


def test_uncapped_chain_keeps_its_step():
    """Below the cap nothing changes: the scale is exactly 1."""
    Phi, y, mu, precision = _data()
    eta = 0.02 / np.sqrt(np.linalg.eigvalsh(precision).max())
    problem = _problem(Phi)
    gen = torch.Generator().manual_seed(0)
    hook = cap_hook(make_log_posterior(problem), Phi, y, gen, cap=1.0,
                    step_size=lambda t: eta, at=N_BURNIN - 1)
    transform = sghmc.build(problem, step_size=lambda t: eta, friction=0.2, n_leapfrog=None,
                            preconditioner="adaptive", n_burnin=N_BURNIN)
    result = _linear_run(transform, Phi, y, n_steps=N_BURNIN + 10, thinning=5)
    capped = run(transform, {"w": torch.zeros(8, 3, dtype=torch.float64)}, Phi, y, gen,
                 n_steps=N_BURNIN + 10, batch_size=len(Phi), n_burnin=N_BURNIN, thinning=5,
                 adapt=hook)
    assert result.state.preconditioner.scale is None
    torch.testing.assert_close(capped.state.preconditioner.scale,
                               torch.ones(8, dtype=torch.float64))


@pytest.mark.parametrize("kernel,friction", [("sgld", None), ("sghmc", 0.1), ("sghmc", 0.5)])
def test_stability_limit_separates_decay_from_blow_up(kernel, friction):
    """Noise-free (temperature 0) on a quadratic of curvature ``lam``: just below the
    kernel's stated limit the recursion decays, just above it grows."""
    lam = 40.0
    problem = BayesProblem(forward=lambda p, x: x @ p["w"].unsqueeze(-1),
                           log_likelihood=lambda f, y, p: torch.zeros(f.shape[0], dtype=f.dtype),
                           log_prior=lambda p, f_m, m: -0.5 * lam * (p["w"] ** 2).sum(-1),
                           n_data=1)
    x, y = torch.zeros(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
    ends = []
    for factor in (0.98, 1.02):
        kw = {} if kernel == "sgld" else {"friction": friction, "n_leapfrog": None}
        module = sgld if kernel == "sgld" else sghmc
        limit = module.build(problem, step_size=lambda t: 1.0, **kw).stability_limit
        eta = factor * limit / lam
        transform = module.build(problem, step_size=lambda t, eta=eta: eta, temperature=0.0,
                                 **kw)
        start = {"w": torch.ones(1, 1, dtype=torch.float64)}
        result = run(transform, start, x, y, torch.Generator().manual_seed(0), n_steps=600,
                     batch_size=1)
        ends.append(float(result.state.params["w"].abs().max()))
    assert ends[0] < 1e-2 < 1e2 < ends[1], ends


def _fit_inside(context, estimator_cls, data):
    X, y = data
    plain = estimator_cls(random_state=0, **FAST).fit(X, y).predict(X)
    with context():
        estimator = estimator_cls(random_state=0, **FAST).fit(X, y)
        inside = estimator.predict(X)
        assert not torch.is_grad_enabled()  # the caller's mode, kept through the fit
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    np.testing.assert_array_equal(inside, plain)


@pytest.mark.parametrize("estimator_cls", [SGLDRegressor, SGHMCRegressor])
def test_fit_inside_a_callers_no_grad_block(estimator_cls, regression_data):
    """The curvature cap's Hessian-vector products record their graph under
    ``enable_grad``: a fit inside ``torch.no_grad()`` gives the same draws as
    outside, and the caller's grad mode is as before afterwards."""
    _fit_inside(torch.no_grad, estimator_cls, regression_data)


@pytest.mark.parametrize("estimator_cls", [SGLDRegressor, SGHMCRegressor])
def test_fit_inside_a_callers_inference_mode_block(estimator_cls, regression_data):
    """A fit inside ``torch.inference_mode()`` gives the same draws as outside (``fit``
    runs under ``torch.inference_mode(False)``, :func:`skfbnn.device.torch_state_kept`)."""
    _fit_inside(torch.inference_mode, estimator_cls, regression_data)
