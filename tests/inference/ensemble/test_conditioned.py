"""The conditioned covariance of ifBDE's linearised members: the hand-written backward
against autograd, and a blown-up kernel."""

from __future__ import annotations

import pytest
import torch

from skfbnn.inference.ensemble.conditioned import conditioned_covariance

F64 = torch.float64


def test_conditioned_covariance_matches_the_cholesky_autograd_reference():
    """The hand-written backward against autograd through the Cholesky factorisation (the
    pre-custom computation), and gradcheck. ``theta`` is symmetric: only the symmetric part
    of a gradient is defined (ours is symmetric; autograd's puts the off-diagonal blocks'
    share on the block the forward reads)."""
    gen = torch.Generator().manual_seed(6)
    n, M = 4, 3
    B = torch.randn(2, 1, n + M, n + M + 2, generator=gen, dtype=F64)
    theta = (B @ B.transpose(-1, -2)).requires_grad_(True)

    def reference(t):
        t_bb, t_bm, t_mm = t[..., :n, :n], t[..., :n, n:], t[..., n:, n:]
        chol = torch.linalg.cholesky(t_bb + 1e-3 * torch.eye(n, dtype=F64))
        white = torch.linalg.solve_triangular(chol, t_bm, upper=False)
        cov = t_mm - white.transpose(-1, -2) @ white
        return 0.5 * (cov + cov.transpose(-1, -2))

    got = conditioned_covariance(theta, n, 1e-3)
    expected = reference(theta)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
    G = torch.randn(got.shape, generator=gen, dtype=F64)
    g_got, = torch.autograd.grad((got * G).sum(), theta)
    g_ref, = torch.autograd.grad((expected * G).sum(), theta)
    sym = lambda g: 0.5 * (g + g.transpose(-1, -2))  # noqa: E731
    torch.testing.assert_close(g_got, sym(g_got), rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(g_got, sym(g_ref), rtol=1e-10, atol=1e-12)
    assert torch.autograd.gradcheck(lambda t: conditioned_covariance(sym(t), n, 1e-3),
                                    (theta,))


def test_conditioned_covariance_of_a_blown_up_kernel_is_finite_or_nan():
    """A learning rate far too large sends the NTK's entries to 1e9, where the absolute jitter
    is lost in rounding and the plain factorisation fails: the conditioned covariance then
    takes a relative jitter and stays finite and symmetric; a kernel holding NaN gives NaN
    (the driver reports the divergence), never a linear-algebra traceback."""
    gen = torch.Generator().manual_seed(7)
    n, M = 30, 4
    B = torch.randn(1, 1, n + M, 5, generator=gen, dtype=F64)
    # rank 5, entries of order 1e9 rounded to float32 as the NTK is: indefinite by ~1e2
    theta = (1e9 * (B @ B.transpose(-1, -2))).float().double()
    with pytest.raises(torch.linalg.LinAlgError):  # what the plain factorisation does
        torch.linalg.cholesky(theta[..., :n, :n] + 0.07 * torch.eye(n, dtype=F64))
    cov = conditioned_covariance(theta, n, 0.07)
    assert torch.isfinite(cov).all()
    torch.testing.assert_close(cov, cov.transpose(-1, -2))
    broken = theta.clone()
    broken[..., 0, 0] = float("nan")
    assert torch.isnan(conditioned_covariance(broken, n, 0.07)).all()
