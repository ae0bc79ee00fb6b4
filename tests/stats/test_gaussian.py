"""Tests for skfbnn.stats.gaussian: Gaussian log-densities and jittered Cholesky."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from skfbnn.stats.gaussian import NotPSDError, jittered_cholesky, mvn_log_prob_chol

F64 = torch.float64


def _random_spd(batch: tuple[int, ...], m: int, seed: int, dtype=F64) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    A = torch.randn((*batch, m, m), generator=gen, dtype=dtype)
    return A @ A.transpose(-1, -2) + 0.5 * torch.eye(m, dtype=dtype)


@pytest.mark.parametrize("m", [1, 2, 5])
def test_mvn_log_prob_matches_torch_and_scipy(m):
    K = _random_spd((), m, seed=m)
    gen = torch.Generator().manual_seed(10 + m)
    r = torch.randn(m, generator=gen, dtype=F64) * 2.0
    chol = torch.linalg.cholesky(K)
    got = mvn_log_prob_chol(r, chol)
    expected_torch = torch.distributions.MultivariateNormal(
        torch.zeros(m, dtype=F64), covariance_matrix=K
    ).log_prob(r)
    expected_scipy = stats.multivariate_normal(np.zeros(m), K.numpy()).logpdf(r.numpy())
    assert got.shape == ()
    assert got.item() == pytest.approx(expected_torch.item(), rel=1e-12, abs=1e-12)
    assert got.item() == pytest.approx(float(expected_scipy), rel=1e-10, abs=1e-10)


@pytest.mark.parametrize(
    "res_shape, chol_batch",
    [((4, 3), (4,)), ((2, 4, 3), (4,)), ((2, 1, 3), (2, 5)), ((3,), (2, 5))],
)
def test_mvn_log_prob_batches_and_broadcasting(res_shape, chol_batch):
    m = res_shape[-1]
    K = _random_spd(chol_batch, m, seed=1)
    chol = torch.linalg.cholesky(K)
    gen = torch.Generator().manual_seed(2)
    r = torch.randn(res_shape, generator=gen, dtype=F64)
    got = mvn_log_prob_chol(r, chol)
    dist = torch.distributions.MultivariateNormal(
        torch.zeros(m, dtype=F64), scale_tril=chol
    )
    expected = dist.log_prob(r)
    assert got.shape == expected.shape == torch.broadcast_shapes(res_shape[:-1], chol_batch)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    # and one element against scipy with the explicit covariance
    idx_r = (0,) * (len(res_shape) - 1)
    idx_k = (0,) * len(chol_batch)
    one = stats.multivariate_normal(np.zeros(m), K[idx_k].numpy()).logpdf(r[idx_r].numpy())
    assert got[(0,) * got.dim()].item() == pytest.approx(float(one), rel=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_jittered_cholesky_reconstructs_jittered_matrix(dtype, batch):
    # different scales per batch member: the jitter is relative to each mean diagonal
    K = _random_spd(batch, 5, seed=3, dtype=F64)
    if batch:
        K = K * torch.tensor([1.0, 10.0, 1e3], dtype=F64).reshape(3, 1, 1)
    K = K.to(dtype)
    res = jittered_cholesky(K, 1e-4)
    assert res.n_escalations == 0
    assert res.jitter == pytest.approx(1e-4)
    L = res.chol
    assert L.shape == K.shape and L.dtype == dtype
    assert torch.equal(L, L.tril())
    scale = K.diagonal(dim1=-2, dim2=-1).mean(-1)[..., None, None]
    expected = K + res.jitter * scale * torch.eye(5, dtype=dtype)
    tol = 1e-12 if dtype == F64 else 1e-5
    torch.testing.assert_close(L @ L.transpose(-1, -2), expected, rtol=tol, atol=tol * scale.max())
    # the jitter is visible: L L^T differs from K itself by the relative jitter
    diff = (L @ L.transpose(-1, -2) - K).diagonal(dim1=-2, dim2=-1)
    torch.testing.assert_close(diff, (1e-4 * scale[..., 0]).expand_as(diff), rtol=1e-2, atol=0)


@pytest.mark.parametrize("dtype, start", [(torch.float32, 1e-12), (F64, 1e-20)])
@pytest.mark.parametrize("kind", ["ones", "random"])
def test_jittered_cholesky_escalates_on_rank_one_matrix(dtype, start, kind):
    """A jitter below machine precision cannot rescue a singular matrix; 10x steps do."""
    if kind == "ones":
        K = torch.ones(6, 6, dtype=dtype)
    else:
        v = torch.randn(6, 1, generator=torch.Generator().manual_seed(0), dtype=dtype)
        K = v @ v.T
    with pytest.raises(NotPSDError):
        jittered_cholesky(K, start, max_tries=0)
    res = jittered_cholesky(K, start, max_tries=12)
    assert res.n_escalations >= 1
    assert res.jitter == pytest.approx(start * 10.0**res.n_escalations, rel=1e-9)
    scale = K.diagonal().mean()
    eye = torch.eye(6, dtype=dtype)
    # minimal escalation: the previous jitter still fails
    previous = res.jitter / 10.0
    assert torch.linalg.cholesky_ex(K + previous * scale * eye).info.item() != 0
    L = res.chol
    assert torch.isfinite(L).all()
    torch.testing.assert_close(
        L @ L.T, K + res.jitter * scale * eye, rtol=0, atol=1e-5 if dtype != F64 else 1e-12
    )


def test_jittered_cholesky_default_jitter_on_singular_matrix():
    K = torch.ones(3, 3, dtype=F64)
    res = jittered_cholesky(K)
    assert res.chol.shape == (3, 3) and res.jitter >= 1e-6


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_jittered_cholesky_rejects_non_finite(bad):
    K = torch.eye(3, dtype=F64)
    K[1, 2] = bad
    with pytest.raises(NotPSDError, match="NaN or inf"):
        jittered_cholesky(K)
    with pytest.raises(ValueError):  # NotPSDError is a ValueError
        jittered_cholesky(K)


@pytest.mark.parametrize("diag", [(1.0, -1.0), (1.0, -0.5, 2.0)])
@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_jittered_cholesky_rejects_indefinite(diag, dtype):
    K = torch.diag(torch.tensor(diag, dtype=dtype))
    with pytest.raises(NotPSDError, match="not positive definite"):
        jittered_cholesky(K, 1e-6, max_tries=4)
    assert issubclass(NotPSDError, ValueError)
