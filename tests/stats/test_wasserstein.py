"""Gaussian W2 distance and barycenter against closed forms (TESTING.md 1.7, 1.8)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skfbnn.stats.wasserstein import gaussian_barycenter, gaussian_w2, sqrtm_psd

F64 = torch.float64


def _spd(n, seed, cond=10.0, dtype=F64):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    vals = np.geomspace(1.0, cond, n)
    return torch.tensor(Q @ np.diag(vals) @ Q.T, dtype=dtype)


def _np_sqrtm(C):
    vals, vecs = np.linalg.eigh(C)
    return vecs @ np.diag(np.sqrt(np.clip(vals, 0, None))) @ vecs.T


def _reference_w2sq(m1, C1, m2, C2):
    r = _np_sqrtm(C1)
    return ((m1 - m2) ** 2).sum() + np.trace(C1) + np.trace(C2) - 2 * np.trace(
        _np_sqrtm(r @ C2 @ r))


def test_one_dimensional_closed_form():
    m1, m2 = torch.tensor([1.0], dtype=F64), torch.tensor([-2.0], dtype=F64)
    c1, c2 = torch.tensor([[4.0]], dtype=F64), torch.tensor([[0.25]], dtype=F64)
    assert float(gaussian_w2(m1, c1, m2, c2, squared=True)) == pytest.approx(9 + 1.5**2, 1e-12)
    assert float(gaussian_w2(m1, c1, m2, c2)) == pytest.approx(np.sqrt(9 + 2.25), 1e-12)


def test_commuting_and_scaled_covariances():
    C = _spd(5, 0)
    m1, m2 = torch.zeros(5, dtype=F64), torch.arange(5, dtype=F64)
    expected = float((m2**2).sum() + (1 - 1.7) ** 2 * torch.trace(C))
    got = float(gaussian_w2(m1, C, m2, 1.7**2 * C, squared=True))
    assert got == pytest.approx(expected, rel=1e-10)
    D1, D2 = torch.diag(torch.tensor([1.0, 4.0, 9.0], dtype=F64)), torch.eye(3, dtype=F64)
    expected = float(((D1.diagonal().sqrt() - 1) ** 2).sum())
    assert float(gaussian_w2(torch.zeros(3, dtype=F64), D1, torch.zeros(3, dtype=F64), D2,
                             squared=True)) == pytest.approx(expected, rel=1e-12)


def test_general_pair_matches_an_independent_eigh_reference_and_is_a_metric():
    C1, C2, C3 = _spd(6, 1, 1e3), _spd(6, 2, 1e2), _spd(6, 3)
    m = [torch.tensor(np.random.default_rng(s).normal(size=6)) for s in (4, 5, 6)]
    ref = _reference_w2sq(m[0].numpy(), C1.numpy(), m[1].numpy(), C2.numpy())
    got = float(gaussian_w2(m[0], C1, m[1], C2, squared=True))
    assert got == pytest.approx(ref, rel=1e-8)
    d12, d21 = gaussian_w2(m[0], C1, m[1], C2), gaussian_w2(m[1], C2, m[0], C1)
    torch.testing.assert_close(d12, d21)
    assert float(d12) <= float(gaussian_w2(m[0], C1, m[2], C3) + gaussian_w2(m[2], C3, m[1], C2))
    Q, _ = torch.linalg.qr(torch.tensor(np.random.default_rng(7).normal(size=(6, 6))))
    rotated = gaussian_w2(Q @ m[0], Q @ C1 @ Q.T, Q @ m[1], Q @ C2 @ Q.T)
    torch.testing.assert_close(rotated, d12, rtol=1e-9, atol=1e-9)


def test_equal_arguments_give_zero_with_a_finite_gradient():
    C = _spd(4, 8).requires_grad_(True)
    m = torch.ones(4, dtype=F64, requires_grad=True)
    w2 = gaussian_w2(m, C, m.detach(), C.detach(), squared=True)
    assert float(w2.detach()) == 0.0
    w2.backward()
    assert torch.isfinite(C.grad).all() and torch.isfinite(m.grad).all()
    eye = torch.eye(3, dtype=F64, requires_grad=True)  # repeated eigenvalues
    gaussian_w2(torch.zeros(3, dtype=F64), eye, torch.zeros(3, dtype=F64),
                torch.eye(3, dtype=F64), squared=True).backward()
    assert torch.isfinite(eye.grad).all()


def test_gradient_matches_finite_differences():
    C2 = _spd(3, 9)
    m1 = torch.tensor([0.3, -0.2, 0.1], dtype=F64, requires_grad=True)
    C1 = _spd(3, 10).requires_grad_(True)
    torch.autograd.gradcheck(
        lambda m, C: gaussian_w2(m, 0.5 * (C + C.T), torch.zeros(3, dtype=F64), C2,
                                 squared=True),
        (m1, C1),
    )


def test_batches_broadcast_and_float32_is_stable():
    C = torch.stack([_spd(8, s, 1e3) for s in range(4)])
    m = torch.randn(4, 8, dtype=F64, generator=torch.Generator().manual_seed(0))
    batched = gaussian_w2(m, C, m.flip(0), C.flip(0), squared=True)
    loop = torch.stack([gaussian_w2(m[i], C[i], m[3 - i], C[3 - i], squared=True)
                        for i in range(4)])
    torch.testing.assert_close(batched, loop)
    single = gaussian_w2(m, C, torch.zeros(8, dtype=F64), torch.eye(8, dtype=F64))
    assert single.shape == (4,)
    f32 = gaussian_w2(m.float(), C.float(), m.flip(0).float(), C.flip(0).float(), squared=True)
    torch.testing.assert_close(f32.double(), batched, rtol=1e-4, atol=1e-4)


def test_singular_covariances_are_handled():
    v = torch.tensor([[1.0], [2.0]], dtype=F64)
    C = v @ v.T  # rank 1
    out = gaussian_w2(torch.zeros(2, dtype=F64), C, torch.zeros(2, dtype=F64), 4 * C,
                      squared=True)
    assert float(out) == pytest.approx(float(torch.trace(C)), rel=1e-4)  # (1 - 2)^2 tr C


# ------------------------------------------------------------------ barycenter
def test_barycenter_closed_forms():
    stds = torch.tensor([1.0, 2.0, 4.0], dtype=F64)
    w = torch.tensor([0.5, 0.25, 0.25], dtype=F64)
    means = torch.tensor([[1.0], [2.0], [3.0]], dtype=F64)
    mean, cov = gaussian_barycenter(means, (stds**2).view(3, 1, 1), w)
    assert float(mean) == pytest.approx(1.75)
    assert float(cov) == pytest.approx(float((w * stds).sum()) ** 2, rel=1e-10)
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    lams = rng.uniform(0.5, 3.0, size=(3, 4))
    covs = torch.tensor(np.stack([Q @ np.diag(lam) @ Q.T for lam in lams]))
    _, cov = gaussian_barycenter(torch.zeros(3, 4, dtype=F64), covs)
    expected = Q @ np.diag(np.sqrt(lams).mean(0) ** 2) @ Q.T
    np.testing.assert_allclose(cov.numpy(), expected, atol=1e-9)


def test_barycenter_identities_and_fixed_point():
    covs = torch.stack([_spd(5, s, 50.0) for s in range(4)])
    means = torch.randn(4, 5, dtype=F64, generator=torch.Generator().manual_seed(1))
    _, same = gaussian_barycenter(means[:1].expand(3, -1), covs[:1].expand(3, -1, -1))
    torch.testing.assert_close(same, covs[0])
    onehot = torch.tensor([0.0, 0.0, 1.0, 0.0], dtype=F64)
    m, c = gaussian_barycenter(means, covs, onehot)
    torch.testing.assert_close(c, covs[2])
    torch.testing.assert_close(m, means[2])
    w = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=F64)
    _, S = gaussian_barycenter(means, covs, w)
    _, S_perm = gaussian_barycenter(means.flip(0), covs.flip(0), w.flip(0))
    torch.testing.assert_close(S, S_perm)
    root = sqrtm_psd(S)
    residual = S - (w.view(-1, 1, 1) * sqrtm_psd(root @ covs @ root)).sum(0)
    assert float(residual.norm() / S.norm()) < 1e-8  # Agueh-Carlier characterisation
    objective = lambda C: float((w * gaussian_w2(means[0], C, means[0], covs,  # noqa: E731
                                                 squared=True)).sum())
    assert objective(S) <= objective((w.view(-1, 1, 1) * covs).sum(0)) + 1e-12


def test_barycenter_validates_weights_and_warns_without_convergence():
    covs = torch.stack([_spd(3, s) for s in range(2)])
    means = torch.zeros(2, 3, dtype=F64)
    with pytest.raises(ValueError, match="weights"):
        gaussian_barycenter(means, covs, torch.tensor([1.0, -1.0], dtype=F64))
    with pytest.warns(Warning, match="did not converge"):
        gaussian_barycenter(means, covs, max_iter=1, tol=0.0)


# ----------------------------------------------------- low-rank form, sqrtm gradient
@pytest.mark.parametrize("rank", [2, 6, 12])
def test_factor_form_equals_the_full_form(rank):
    from skfbnn.stats.wasserstein import gaussian_w2_factor

    gen = torch.Generator().manual_seed(rank)
    A = torch.randn(3, 6, rank, generator=gen, dtype=F64)
    C2 = _spd(6, rank)
    m1, m2 = torch.randn(3, 6, generator=gen, dtype=F64), torch.randn(6, dtype=F64)
    got = gaussian_w2_factor(m1, A, m2, torch.linalg.cholesky(C2))
    expected = [_reference_w2sq(m1[i].numpy(), (A[i] @ A[i].T).numpy(), m2.numpy(),
                                C2.numpy()) for i in range(3)]
    # A rank-deficient A A^T costs the eigh reference sqrt(eps) on its zero eigenvalues.
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9 if rank >= 6 else 1e-7)


@pytest.mark.parametrize("matrix", ["spd", "identity", "rank_deficient"])
def test_sqrtm_gradient_is_finite_and_correct(matrix):
    if matrix == "spd":
        C = _spd(4, 0)
    elif matrix == "identity":
        C = torch.eye(4, dtype=F64)  # repeated eigenvalues: eigh's own backward gives NaN
    else:
        B = torch.randn(4, 2, generator=torch.Generator().manual_seed(0), dtype=F64)
        C = B @ B.T + 1e-3 * torch.eye(4, dtype=F64)
    C = C.requires_grad_(True)
    # symmetric perturbations only: the square root is defined on symmetric matrices
    assert torch.autograd.gradcheck(lambda c: sqrtm_psd(0.5 * (c + c.T)), (C,))


def test_barycenter_step_leaves_the_barycenter_fixed():
    from skfbnn.stats.wasserstein import barycenter_step

    covs = torch.stack([_spd(5, s, cond=30.0) for s in range(4)])
    w = torch.full((4,), 0.25, dtype=F64)
    _, S = gaussian_barycenter(torch.zeros(4, 5, dtype=F64), covs, tol=1e-13, max_iter=500)
    torch.testing.assert_close(barycenter_step(S, covs, w), S, rtol=1e-9, atol=1e-10)


def test_barycenter_is_batched_over_independent_problems():
    covs = torch.stack([torch.stack([_spd(4, 10 * b + s, cond=20.0) for b in range(2)])
                        for s in range(3)])  # (k=3 members, 2 problems, 4, 4)
    means = torch.randn(3, 2, 4, generator=torch.Generator().manual_seed(0), dtype=F64)
    mean, S = gaussian_barycenter(means, covs, tol=1e-12)
    for b in range(2):
        m_b, S_b = gaussian_barycenter(means[:, b], covs[:, b], tol=1e-12)
        torch.testing.assert_close(mean[b], m_b)
        torch.testing.assert_close(S[b], S_b, rtol=1e-8, atol=1e-10)


# ------------------------------------------- Gram route and Cholesky barycenter map
@pytest.mark.parametrize("r, shift", [(6, 0.0), (20, 0.0), (3, 0.3), (20, 0.3)])
def test_gram_route_equals_the_explicit_factor_with_its_gradient(r, shift):
    """``C1 = A A^T + s I`` by the Gram route against the same distance written with the
    explicit factor ``[A, sqrt(s) I]`` through autograd (the pre-Gram computation)."""
    from skfbnn.stats.wasserstein import gaussian_w2_factor, nuclear_norm

    gen = torch.Generator().manual_seed(r)
    n = 6
    A = torch.randn(2, 3, n, r, generator=gen, dtype=F64, requires_grad=True)
    L = torch.linalg.cholesky(_spd(n, r)).requires_grad_(True)
    m1, m2 = torch.randn(2, 3, n, generator=gen, dtype=F64), torch.randn(n, dtype=F64)
    got = gaussian_w2_factor(m1, A, m2, L, shift1=shift)
    full = torch.cat([A, (shift**0.5 * torch.eye(n, dtype=F64)).expand(2, 3, n, n)], -1)
    tr = full.pow(2).sum((-2, -1)) + L.pow(2).sum((-2, -1))
    expected = ((m1 - m2) ** 2).sum(-1) + tr - 2 * nuclear_norm(L.T @ full)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    reference = [_reference_w2sq(m1[i, j].numpy(), (full[i, j] @ full[i, j].T).detach().numpy(),
                                 m2.numpy(), (L @ L.T).detach().numpy())
                 for i in range(2) for j in range(3)]
    np.testing.assert_allclose(got.detach().reshape(-1).numpy(), reference, rtol=1e-9)
    weights = torch.randn(2, 3, generator=gen, dtype=F64)
    g_got = torch.autograd.grad((weights * got).sum(), (A, L))
    g_exp = torch.autograd.grad((weights * expected).sum(), (A, L))
    for a, b in zip(g_got, g_exp, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_gram_route_gradcheck_and_rank_deficient_fallback():
    from skfbnn.stats.wasserstein import gaussian_w2_factor

    gen = torch.Generator().manual_seed(0)
    A = torch.randn(4, 7, generator=gen, dtype=F64, requires_grad=True)
    L = torch.linalg.cholesky(_spd(4, 1)).requires_grad_(True)
    z = torch.zeros(4, dtype=F64)
    assert torch.autograd.gradcheck(lambda a, chol: gaussian_w2_factor(z, a, z, chol, shift1=0.2),
                                    (A, L))
    # r >= n but rank 2: the Gram matrix is singular, the SVD route answers
    low = torch.randn(4, 2, generator=gen, dtype=F64) @ torch.randn(2, 7, generator=gen,
                                                                    dtype=F64)
    got = gaussian_w2_factor(z, low, z, L.detach())
    expected = _reference_w2sq(z.numpy(), (low @ low.T).numpy(), z.numpy(),
                               (L @ L.T).detach().numpy())
    assert float(got) == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_barycenter_factor_is_the_symmetric_root_map_with_its_gradient(batch):
    """``F F^T`` from the Cholesky factor of ``S`` against the map written with ``S^{1/2}``
    (eigendecomposition, the pre-Cholesky computation), values and gradients."""
    from skfbnn.stats.wasserstein import (
        _barycenter_step_eigh,
        barycenter_factor,
        barycenter_step,
    )

    n, k = 5, 3
    covs = torch.stack([torch.stack([_spd(n, 10 * s + b, cond=40.0) for b in range(2)])
                        for s in range(k)])[(slice(None), *((0,) if not batch else ()))]
    covs = covs.requires_grad_(True)
    S = _spd(n, 99, cond=5.0).expand(*batch, n, n).clone().requires_grad_(True)
    w = torch.tensor([0.2, 0.3, 0.5], dtype=F64)
    F = barycenter_factor(S, covs, w)
    expected = _barycenter_step_eigh(S, covs, w)
    torch.testing.assert_close(F @ F.transpose(-1, -2), expected, rtol=1e-11, atol=1e-12)
    torch.testing.assert_close(barycenter_step(S, covs, w), expected, rtol=1e-11, atol=1e-12)
    G = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1), dtype=F64)
    got = torch.autograd.grad(((F @ F.transpose(-1, -2)) * G).sum(), (S, covs))
    ref = torch.autograd.grad((expected * G).sum(), (S, covs))
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11)
    singular = torch.zeros(n, n, dtype=F64)
    assert barycenter_factor(singular, covs.detach(), w) is None
    nearly = torch.diag(torch.tensor([1.0, 1.0, 1.0, 1.0, 1e-20], dtype=F64))  # factorises
    assert barycenter_factor(nearly, covs.detach(), w) is None
    torch.testing.assert_close(barycenter_step(nearly, covs.detach(), w),
                               _barycenter_step_eigh(nearly, covs.detach(), w))
