"""How much of a Gaussian's entropy gradient SSGE recovers, by kernel bandwidth and threshold.

fBNN climbs the entropy of its function values ``f~ = f + noise`` through SSGE's score
``g``: for ``f~ = a L e + sqrt(nu) z`` (``L L^T = K`` an RBF covariance on ``d`` grid points
in [-1, 1], ``nu = 0.01`` the injected noise) the exact derivative of the entropy in the
scale ``a`` at ``a = 1`` is ``sum_i lam_i / (lam_i + nu)`` (``lam`` the eigenvalues of
``K``), and SSGE's estimate is ``-mean_s g(f~_s)^T L e_s``. Printed is their ratio (1: the
entropy's push at its true size), averaged over ``--repeats`` sets of ``S`` draws, for the
per-dimension median bandwidth (fBNN's default) and one isotropic bandwidth of ``c`` times
the median pairwise distance.

Usage: python benchmarks/ssge_entropy_scale.py [--repeats 10]
"""

from __future__ import annotations

import argparse

import torch

from skfbnn.stats.ssge import ssge_score

SCALES = (0.5, 1.0, 1.5, 2.0, 3.0, 5.0)


def covariance(d: int, length_scale: float, variance: float = 0.09) -> torch.Tensor:
    x = torch.linspace(-1, 1, d, dtype=torch.float64)
    rbf = variance * torch.exp(-0.5 * (x[:, None] - x[None]) ** 2 / length_scale**2)
    return rbf + 1e-10 * torch.eye(d, dtype=torch.float64)


def ratio(chol, exact, draws, threshold, scale, repeats, gen, nu=0.01) -> float:
    d, total = chol.shape[0], 0.0
    for _ in range(repeats):
        signal = torch.randn(draws, d, generator=gen, dtype=torch.float64) @ chol.T
        f = signal + nu**0.5 * torch.randn(draws, d, generator=gen, dtype=torch.float64)
        width = None if scale is None else (scale * torch.cdist(f, f).median()).expand(d)
        g = ssge_score(f, threshold=threshold, bandwidth=width)
        total += float(-(g * signal).sum(-1).mean()) / exact / repeats
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(0)
    print("| d | length scale | draws | threshold | per dimension | "
          + " | ".join(f"c = {c}" for c in SCALES) + " |")
    print("|---" * (5 + len(SCALES)) + "|")
    for d in (20, 40):
        for length_scale in (0.3, 0.1):
            K = covariance(d, length_scale)
            lam = torch.linalg.eigvalsh(K).clamp_min(0)
            exact = float((lam / (lam + 0.01)).sum())
            chol = torch.linalg.cholesky(K)
            for draws in (32, 128):
                for threshold in (0.99, 1.0):
                    cells = [ratio(chol, exact, draws, threshold, c, args.repeats, gen)
                             for c in (None, *SCALES)]
                    print(f"| {d} | {length_scale} | {draws} | {threshold} | "
                          + " | ".join(f"{v:.2f}" for v in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
