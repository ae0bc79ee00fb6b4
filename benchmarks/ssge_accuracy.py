"""How much of a Gaussian's score SSGE recovers from few draws (fBNN's entropy gradient).

For a ``d``-dimensional Gaussian ``N(0, K)`` with known score ``-K^{-1} x``, SSGE
(:func:`skfbnn.stats.ssge.ssge_score`, eigenvalue threshold 0.99) estimates the score at
``S`` draws from those draws; printed is the projection of the estimate on the true score,
``<g, s> / <s, s>`` (1: unbiased in size; below 1: the entropy gradient is too weak), and
their cosine, averaged over ``--repeats`` sets of draws. ``K`` is the identity, or
``"function"``: an RBF covariance of length scale 0.3 and variance 0.09 on ``d`` grid points
in [-1, 1] plus the injected noise variance 0.01 (function values at measurement points, as
fBNN sees them).

Usage: python benchmarks/ssge_accuracy.py [--dims 5 20 40] [--draws 32 128] [--repeats 10]
"""

from __future__ import annotations

import argparse

import torch

from skfbnn.stats.ssge import ssge_score


def covariance(kind: str, d: int) -> torch.Tensor:
    if kind == "isotropic":
        return torch.eye(d, dtype=torch.float64)
    x = torch.linspace(-1, 1, d, dtype=torch.float64)
    rbf = 0.09 * torch.exp(-0.5 * (x[:, None] - x[None]) ** 2 / 0.3**2)
    return rbf + 0.01 * torch.eye(d, dtype=torch.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", nargs="+", type=int, default=[5, 20, 40])
    parser.add_argument("--draws", nargs="+", type=int, default=[32, 128])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(0)
    print("| covariance | d | draws | bandwidth | projection | cosine |")
    print("|---|---|---|---|---|---|")
    for kind in ("isotropic", "function"):
        for d in args.dims:
            K = covariance(kind, d)
            chol, precision = torch.linalg.cholesky(K), torch.linalg.inv(K)
            for S in args.draws:
                for bandwidth in (None, "median"):
                    proj = cos = 0.0
                    for _ in range(args.repeats):
                        x = torch.randn(S, d, generator=gen, dtype=torch.float64) @ chol.T
                        g, s = ssge_score(x, threshold=0.99, bandwidth=bandwidth), -x @ precision
                        proj += float((g * s).sum() / (s * s).sum()) / args.repeats
                        cos += float((g * s).sum() / (g.norm() * s.norm())) / args.repeats
                    print(f"| {kind} | {d} | {S} | {bandwidth or 'per dimension'} | "
                          f"{proj:.2f} | {cos:.2f} |")


if __name__ == "__main__":
    main()
