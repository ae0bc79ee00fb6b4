"""Tests for skfbnn.priors.gp: kernels, median heuristic, marginal-likelihood fit."""

from __future__ import annotations

import gpytorch
import numpy as np
import pytest
import torch

import skfbnn.priors.gp as gp_module
from skfbnn.device import cpu_threads
from skfbnn.priors.gp import (
    KERNELS,
    GPPrior,
    _MarginalLikelihood,
    _ScaledRBF,
    dense_kernel,
    make_kernel,
    median_lengthscale,
    same_form,
)

F64 = torch.float64


def _X(n: int = 12, d: int = 3, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=F64)


def _exact_mll(gp: GPPrior, X: torch.Tensor, y: torch.Tensor, noise_var: torch.Tensor):
    """Our own float64 log N(y; m, K + s^2 I), summed over the independent outputs."""
    mean, K = gp.mean_cov(X)  # (k, n), (k, n, n)
    n = X.shape[0]
    total = 0.0
    for o in range(K.shape[0]):
        C = (K[o] + noise_var[o] * torch.eye(n, dtype=F64)).numpy()
        r = (y[:, o] - mean[o]).numpy()
        sign, logdet = np.linalg.slogdet(C)
        assert sign > 0
        total += -0.5 * r @ np.linalg.solve(C, r) - 0.5 * logdet - 0.5 * n * np.log(2 * np.pi)
    return float(total)


@pytest.mark.parametrize("kernel", [None, *KERNELS])
@pytest.mark.parametrize("n_out", [1, 3])
def test_make_kernel_gives_symmetric_psd_matrices(kernel, n_out):
    X = _X()
    k = make_kernel(kernel, X, n_out)
    assert isinstance(k, gpytorch.kernels.ScaleKernel)
    with torch.no_grad():
        K = k.double()(X).to_dense()
    assert K.shape == (n_out, 12, 12)
    torch.testing.assert_close(K, K.transpose(-1, -2), rtol=1e-12, atol=1e-12)
    eig = torch.linalg.eigvalsh(K)
    assert (eig > -1e-9 * eig.abs().max()).all()
    assert (K.diagonal(dim1=-2, dim2=-1) > 0).all()
    # independent latent GPs: same hyperparameters at start, so the blocks agree
    torch.testing.assert_close(K, K[:1].expand_as(K))


@pytest.mark.parametrize("kernel, base", [
    (None, gpytorch.kernels.RBFKernel), ("rbf", gpytorch.kernels.RBFKernel),
    ("matern12", gpytorch.kernels.MaternKernel), ("matern32", gpytorch.kernels.MaternKernel),
    ("matern52", gpytorch.kernels.MaternKernel), ("linear", gpytorch.kernels.LinearKernel),
    ("periodic", gpytorch.kernels.PeriodicKernel),
])
def test_make_kernel_types_and_median_lengthscales(kernel, base):
    X = _X(n=9, d=2)
    k = make_kernel(kernel, X, 2)
    assert type(k.base_kernel) is base
    if kernel is not None and kernel.startswith("matern"):
        assert k.base_kernel.nu == {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}[kernel]
    if base is not gpytorch.kernels.LinearKernel:
        ls = k.base_kernel.lengthscale.detach()
        assert ls.shape == (2, 1, 2)  # batch n_out, ARD over d
        expected = median_lengthscale(X).to(ls)
        torch.testing.assert_close(ls, expected.expand_as(ls), rtol=1e-5, atol=1e-6)


def test_user_kernel_is_deep_copied_and_never_modified():
    X = _X(n=30, d=1, seed=1)
    y = torch.sin(3 * X) + 0.1 * _X(n=30, d=1, seed=2)
    user = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())
    before = {k: v.clone() for k, v in user.state_dict().items()}
    k = make_kernel(user, X, 1)
    assert k is not user and k.base_kernel is not user.base_kernel
    gp = GPPrior(k, 1, constant_mean=True).fit(X, y, 10, torch.Generator().manual_seed(0))
    after = user.state_dict()
    assert before.keys() == after.keys()
    for name, value in before.items():
        assert after[name].dtype == value.dtype == torch.float32  # not .double()'d
        assert torch.equal(after[name], value), name
    assert all(p.requires_grad for p in user.parameters())
    # the copy was fitted
    assert not torch.allclose(
        gp.kernel.base_kernel.lengthscale.float(), user.base_kernel.lengthscale
    )


@pytest.mark.parametrize("n", [5, 7, 11])  # odd n: n*n pairs, unambiguous median
def test_median_lengthscale_matches_numpy(n):
    rng = np.random.default_rng(n)
    Xn = rng.normal(size=(n, 3)) * np.array([1.0, 5.0, 0.1])
    Xn[:, 2] = 4.2 if n == 7 else Xn[:, 2]  # a constant feature gets lengthscale 1
    diff = np.abs(Xn[:, None, :] - Xn[None, :, :]).reshape(-1, 3)
    expected = np.median(diff, axis=0) * np.sqrt(3)
    expected = np.where(expected < 1e-6, 1.0, expected)
    got = median_lengthscale(torch.tensor(Xn))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    if n == 7:
        assert got[2].item() == 1.0


def test_median_lengthscale_uses_first_500_rows():
    X = _X(n=600, d=2)
    X[500:] *= 100.0  # rows beyond 500 would change the median a lot
    torch.testing.assert_close(median_lengthscale(X), median_lengthscale(X[:500]))


@pytest.mark.parametrize("n_out, constant_mean", [(1, True), (1, False), (2, True)])
def test_fit_increases_exact_marginal_likelihood(n_out, constant_mean):
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(50, 1, generator=gen, dtype=F64) * 4 - 2
    y = torch.sin(2 * X) + 0.5 + 0.1 * torch.randn(50, n_out, generator=gen, dtype=F64)
    gp = GPPrior(make_kernel(None, X, n_out), n_out, constant_mean)
    # fit starts from noise variance 0.1, zero mean and the median-heuristic kernel
    before = _exact_mll(gp, X, y, torch.full((n_out,), 0.1, dtype=F64))
    gp.fit(X, y, 30, torch.Generator().manual_seed(1))
    assert gp.noise_std.shape == (n_out,) and torch.isfinite(gp.noise_std).all()
    after = _exact_mll(gp, X, y, gp.noise_std**2)
    assert after > before + 10.0
    assert gp.mean.shape == (n_out,)
    if constant_mean:
        assert (gp.mean.abs() > 0.1).all()  # moved towards the data mean 0.5
    else:
        assert torch.equal(gp.mean, torch.zeros(n_out, dtype=F64))
    assert not any(p.requires_grad for p in gp.kernel.parameters())


def test_fit_learns_noise_std():
    """Truth 0.2 on 100 points of a smooth 1-D function.

    The MLE of sigma has sampling sd about sigma / sqrt(2 n) = 0.014 (7%); a 25%
    tolerance is ~3.5 sd, yet excludes the starting value sqrt(0.1) = 0.32 and
    a variance reported as a std (0.04).
    """
    gen = torch.Generator().manual_seed(3)
    X = torch.rand(100, 1, generator=gen, dtype=F64) * 6 - 3
    y = torch.sin(2 * X) + 0.2 * torch.randn(100, 1, generator=gen, dtype=F64)
    gp = GPPrior(make_kernel(None, X, 1), 1, True).fit(X, y, 60, gen)
    assert gp.noise_std.item() == pytest.approx(0.2, rel=0.25)


def _tensors(value, seen=None):
    """Every tensor reachable from ``value``: attributes, dicts, lists and modules."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, torch.nn.Module):
        yield from value.parameters()
        yield from value.buffers()
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v, seen)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v, seen)
    elif hasattr(value, "__dict__"):
        yield from _tensors(vars(value), seen)


@pytest.mark.parametrize("classification", [False, True])
def test_to_moves_every_tensor_of_a_fitted_prior(classification):
    """What a pickle moves to the CPU: a tensor left behind on a GPU would not unpickle
    where there is none (the "meta" device stands in for the GPU)."""
    X = _X(n=20, d=2)
    y = torch.tensor([0, 1] * 10) if classification else X[:, :1] ** 2
    gp = GPPrior(make_kernel(None, X, 2 if classification else 1),
                 2 if classification else 1, True)
    gp.fit(X, y, 3, torch.Generator().manual_seed(0), classification=classification)
    assert gp.likelihood_params
    moved = list(_tensors(gp.to(torch.device("meta"))))
    assert len(moved) > 4
    assert all(t.device.type == "meta" for t in moved)


def test_fit_with_zero_iterations_changes_nothing():
    X = _X(n=20, d=2)
    y = X[:, :1] ** 2
    gp = GPPrior(make_kernel("matern52", X, 1), 1, True)
    state = {k: v.clone() for k, v in gp.kernel.state_dict().items()}
    assert gp.fit(X, y, 0, torch.Generator().manual_seed(0)) is gp
    for k, v in gp.kernel.state_dict().items():
        assert torch.equal(v, state[k]), k
    assert torch.equal(gp.mean, torch.zeros(1, dtype=F64))
    assert torch.isnan(gp.noise_std).all()


@pytest.mark.parametrize("classification", [False, True])
def test_a_fit_started_from_a_fitted_prior_starts_at_its_values(classification, monkeypatch):
    """``start``: the optimisation's first point is the fitted prior's kernel, mean and
    likelihood noise (not the fresh kernel's, zero mean and noise 0.1), and on the same
    points it stays at that optimum (a marginal likelihood no lower)."""
    gen = torch.Generator().manual_seed(4)
    X = torch.rand(60, 2, generator=gen, dtype=F64) * 4 - 2
    y = (X[:, :1] > 0).long().reshape(-1) if classification else \
        torch.sin(2 * X[:, :1]) + 0.1 * torch.randn(60, 1, generator=gen, dtype=F64)
    n_out = 2 if classification else 1
    first = GPPrior(make_kernel(None, X, n_out), n_out, True)
    first.fit(X, y, 50, gen, classification=classification)
    assert first.likelihood_params  # the noise to start from
    firsts = []
    real = gp_module._minimize_lbfgs

    def spy(loss, params, max_iter):
        with torch.no_grad():
            firsts.append((float(loss()), [p.detach().clone() for p, _ in params]))
        return real(loss, params, max_iter)

    monkeypatch.setattr(gp_module, "_minimize_lbfgs", spy)
    fresh = make_kernel(None, X, n_out, heuristic=False)
    assert not torch.allclose(fresh.base_kernel.lengthscale.double(),
                              first.kernel.base_kernel.lengthscale)
    second = GPPrior(fresh, n_out, True).fit(X, y, 50, gen, classification=classification,
                                             start=first)
    again = GPPrior(make_kernel(None, X, n_out, heuristic=False), n_out, True)
    again.fit(X, y, 50, gen, classification=classification)  # no start: its own values
    (start_loss, start_values), (cold_loss, _) = firsts
    kernel = list(first.kernel.parameters())  # the optimiser's kernel, noise, mean
    for value, fitted in zip(start_values[:len(kernel)], kernel, strict=True):
        torch.testing.assert_close(value, fitted, rtol=0, atol=0)
    noise = list(first.likelihood_params.values())
    for value, fitted in zip(start_values[len(kernel):-1], noise, strict=True):
        torch.testing.assert_close(value, fitted, rtol=0, atol=0)
    torch.testing.assert_close(start_values[-1], first.mean, rtol=0, atol=0)
    assert start_loss < cold_loss  # the fitted values, a better start than a fresh kernel
    for name, value in second.likelihood_params.items():
        torch.testing.assert_close(value, first.likelihood_params[name], rtol=1e-3,
                                   atol=1e-3)
    torch.testing.assert_close(second.kernel.base_kernel.lengthscale,
                               first.kernel.base_kernel.lengthscale, rtol=1e-3, atol=1e-3)


def test_a_start_of_another_form_is_ignored():
    X = _X(n=20, d=2)
    y = X[:, :1] ** 2
    gen = torch.Generator().manual_seed(0)
    other = GPPrior(make_kernel("matern52", X, 1), 1, True).fit(X, y, 5, gen)
    assert not same_form(GPPrior(make_kernel(None, X, 1), 1, True), other)
    started = GPPrior(make_kernel(None, X, 1), 1, True).fit(
        X, y, 5, torch.Generator().manual_seed(1), start=other)
    plain = GPPrior(make_kernel(None, X, 1), 1, True).fit(X, y, 5,
                                                          torch.Generator().manual_seed(1))
    for (name, a), b in zip(started.kernel.state_dict().items(),
                            plain.kernel.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def test_classification_fit_gives_per_class_constant_means():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(60, 2, generator=gen, dtype=F64)
    y = torch.tensor([0] * 36 + [1] * 18 + [2] * 6)
    gp = GPPrior(make_kernel(None, X, 3), 3, constant_mean=True)
    gp.fit(X, y, 15, gen, classification=True)
    assert gp.mean.shape == (3,)
    assert torch.isfinite(gp.mean).all()
    # Dirichlet targets are log(alpha) < 0 mostly; the majority class's are highest
    assert (gp.mean < 0).all()
    assert gp.mean[0] > gp.mean[1:].max()
    # the Dirichlet GP's noise: per-label log(1/alpha + 1) (0.69 where the class is the
    # label, 4.62 elsewhere at alpha_epsilon=0.01) plus a learned extra >= 0, averaged
    # over the points of each class's latent function
    share = torch.tensor([36, 18, 6], dtype=F64) / 60
    fixed = share * np.log(1 / 1.01 + 1) + (1 - share) * np.log(1 / 0.01 + 1)
    assert gp.noise_std.shape == (3,)
    assert torch.isfinite(gp.noise_std).all()
    assert (gp.noise_std.pow(2) >= fixed - 1e-6).all()
    mean, K = gp.mean_cov(X[:4])
    assert mean.shape == (3, 4) and K.shape == (3, 4, 4)
    torch.testing.assert_close(mean, gp.mean[:, None].expand(3, 4))


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
@pytest.mark.parametrize("n_out", [1, 3])
def test_mean_cov_shapes_and_values(batch, n_out):
    X = torch.randn(*batch, 6, 2, generator=torch.Generator().manual_seed(0))  # float32 in
    gp = GPPrior(make_kernel("rbf", X.reshape(-1, 2), n_out), n_out, True)
    gp.mean = torch.arange(1.0, n_out + 1, dtype=F64)
    mean, K = gp.mean_cov(X)
    assert mean.shape == (*batch, n_out, 6) and K.shape == (*batch, n_out, 6, 6)
    assert mean.dtype == K.dtype == F64
    torch.testing.assert_close(mean, gp.mean[:, None].expand_as(mean))
    # every batch member equals the unbatched computation; independent RBF formula
    Xf, Kf = X.reshape(-1, 6, 2).double(), K.reshape(-1, n_out, 6, 6)
    ls = gp.kernel.base_kernel.lengthscale.detach()[0, 0]
    scale = gp.kernel.outputscale.detach()[0]
    for b in range(Xf.shape[0]):
        z = Xf[b] / ls
        expected = scale * torch.exp(-0.5 * torch.cdist(z, z) ** 2)
        for o in range(n_out):
            torch.testing.assert_close(Kf[b, o], expected, rtol=1e-10, atol=1e-10)


def _gp_sample(n: int, seed: int):
    """``n`` points in [-3, 3]^2 from a GP: ARD lengthscales (0.8, 2), scale 1.5, noise 0.2."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=gen, dtype=F64) * 6 - 3
    z = X / torch.tensor([0.8, 2.0], dtype=F64)
    K = 1.5 * torch.exp(-0.5 * torch.cdist(z, z) ** 2) + 0.04 * torch.eye(n, dtype=F64)
    f = torch.linalg.cholesky(K) @ torch.randn(n, generator=gen, dtype=F64)
    return X, (0.3 + f).unsqueeze(-1)


def _adam_reference(X: torch.Tensor, y: torch.Tensor, n_steps: int) -> GPPrior:
    """A long Adam run of gpytorch's exact marginal likelihood from the same start."""
    batch = torch.Size([1])
    gp = GPPrior(make_kernel(None, X, 1), 1, constant_mean=True)
    likelihood = gpytorch.likelihoods.GaussianLikelihood(batch_shape=batch).double()
    likelihood.noise = 0.1

    class Model(gpytorch.models.ExactGP):
        def __init__(self):
            super().__init__(X.expand(1, *X.shape), y.T, likelihood)
            self.covar_module = gp.kernel
            self.mean_module = gpytorch.means.ConstantMean(batch_shape=batch).double()

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(
                self.mean_module(x), self.covar_module(x)
            )

    model = Model()
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(n_steps):
        optimizer.zero_grad()
        (-mll(model(*model.train_inputs), y.T).sum()).backward()
        optimizer.step()
    gp.mean = model.mean_module.constant.detach().reshape(1)
    gp.noise_std = likelihood.noise.detach().reshape(1).sqrt()
    return gp


def test_lbfgs_fit_reaches_long_adam_likelihood_and_recovers_hyperparameters():
    """L-BFGS in at most 100 iterations ends within 1e-3 nats per point of 300 Adam steps
    at rate 0.1 (converged: the last 100 change the MLL by < 1e-7 per point), and near the
    true lengthscales and noise of the GP the data were drawn from (the scale and mean of
    one sample path on a bounded box are poorly identified, so they are not checked)."""
    X, y = _gp_sample(150, seed=0)
    gp = GPPrior(make_kernel(None, X, 1), 1, constant_mean=True)
    with cpu_threads(torch.device("cpu")):
        gp.fit(X, y, 100, torch.Generator().manual_seed(0))
        reference = _adam_reference(X, y, 300)
    fitted = _exact_mll(gp, X, y, gp.noise_std**2) / len(X)
    adam = _exact_mll(reference, X, y, reference.noise_std**2) / len(X)
    assert fitted >= adam - 1e-3
    lengthscale = gp.kernel.base_kernel.lengthscale.detach().reshape(-1)
    torch.testing.assert_close(lengthscale, torch.tensor([0.8, 2.0], dtype=F64), rtol=0.2, atol=0)
    assert gp.noise_std.item() == pytest.approx(0.2, rel=0.15)


@pytest.mark.parametrize("shape", [(7, 3), (2, 7, 3), (4, 1, 7, 3)])
@pytest.mark.parametrize("n_out", [1, 2])
def test_dense_kernel_matches_gpytorch_values_and_gradients(shape, n_out):
    """The closed-form scaled RBF (and its analytic backward) against gpytorch's."""
    gen = torch.Generator().manual_seed(0)
    kernel = make_kernel("rbf", _X(), n_out).double()
    kernel.base_kernel.lengthscale = 0.5 + torch.rand(n_out, 1, 3, generator=gen, dtype=F64)
    kernel.outputscale = 0.5 + torch.rand(n_out, generator=gen, dtype=F64)
    X = torch.randn(*shape, generator=gen, dtype=F64)
    expected = kernel(X).to_dense()
    got = dense_kernel(kernel, X)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    weights = torch.randn(expected.shape, generator=gen, dtype=F64)
    params = list(kernel.parameters())
    for a, b in zip(torch.autograd.grad((expected * weights).sum(), params),
                    torch.autograd.grad((dense_kernel(kernel, X) * weights).sum(), params),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_dense_kernel_gradcheck_and_other_kernels():
    z = torch.randn(2, 6, 3, dtype=F64, requires_grad=True)
    scale = (0.5 + torch.rand(2, 1, 1, dtype=F64)).requires_grad_()
    assert torch.autograd.gradcheck(_ScaledRBF.apply, (z, scale))
    X = _X(n=8, d=2)
    kernel = make_kernel("matern52", X, 2).double()  # through gpytorch
    torch.testing.assert_close(dense_kernel(kernel, X), kernel(X).to_dense())


@pytest.mark.parametrize("classification", [False, True])
def test_marginal_likelihood_objective_matches_gpytorch(classification):
    """Our loss and gradient equal gpytorch's ExactMarginalLogLikelihood, negated."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(30, 2, generator=gen, dtype=F64)
    if classification:
        n_out, y = 3, torch.randint(0, 3, (30,), generator=gen)
    else:
        n_out, y = 2, torch.randn(30, 2, generator=gen, dtype=F64)
    gp = GPPrior(make_kernel(None, X, n_out), n_out, constant_mean=True)
    problem = _MarginalLikelihood(gp, X, y, classification)
    with torch.no_grad():
        problem.mean.copy_(torch.linspace(-0.5, 0.5, n_out, dtype=F64))
        gp.kernel.base_kernel.raw_lengthscale.add_(0.3)
    batch = torch.Size([n_out])

    class Model(gpytorch.models.ExactGP):
        def __init__(self):
            super().__init__(problem.inputs, problem.targets, problem.likelihood)
            self.covar_module = gp.kernel
            self.mean_module = gpytorch.means.ConstantMean(batch_shape=batch).double()
            self.mean_module.constant = problem.mean.detach()

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(
                self.mean_module(x), self.covar_module(x)
            )

    model = Model()
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(problem.likelihood, model)
    params = [p for p, _ in problem.parameters() if p is not problem.mean]
    expected = -mll(model(problem.inputs), problem.targets).sum()
    got = problem.loss()
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)
    for a, b in zip(torch.autograd.grad(got, params), torch.autograd.grad(expected, params),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10)
