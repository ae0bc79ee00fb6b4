"""The anchored-ensemble oracle with and without its ingredients (anchors, perturbed targets).

The set-up of ``tests/inference/ensemble/test_anchored.py``: Bayesian linear regression (a
network without hidden layer), known noise 0.4, ``prior_std=1``, 12 points, 4000 members,
3000 full-batch Adam steps in float64. Printed per variant: the z-scores of the members'
prediction mean (3 points) and covariance (6 entries) against the exact posterior, from the
Monte-Carlo standard errors, and the members' std over the posterior's at each point.

Usage: python benchmarks/anchored_linear_oracle.py
"""

from __future__ import annotations

import torch

from skfbnn.inference.ensemble import anchored, deep_ensemble
from skfbnn.inference.families import lr_schedule
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp
from skfbnn.priors.weight import WeightPrior

F64 = torch.float64


def run(perturb: bool, anchors: bool, C: int = 4000, N: int = 12, s: float = 1.0,
        sigma: float = 0.4, steps: int = 3000) -> str:
    """One variant's z-scores and std ratios, as a line."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(N, 2, generator=gen, dtype=F64)
    y = X @ torch.tensor([[1.0], [-0.5]], dtype=F64) + 0.3 \
        + sigma * torch.randn(N, 1, generator=gen, dtype=F64)
    net = build_mlp(2, 1, (), "identity")
    problem = BayesProblem(make_forward(net), GaussianLikelihood([sigma]), WeightPrior(s), N)
    transform = deep_ensemble.build(problem, learning_rate=lr_schedule("cosine", 0.05, steps),
                                    prior_std=s, anchored=anchors)
    state = transform.init(init_params(net, C, gen, device=torch.device("cpu"), dtype=F64),
                           None, gen)
    targets = anchored.perturb_targets(y, C, sigma, gen) if perturb else y
    for _ in range(steps):
        state, _ = transform.update(state, {"x": X, "y": targets, "measure": None}, gen)
    w = torch.cat([state.params["0.weight"][:, 0], state.params["0.bias"]], dim=1)
    Phi = torch.cat([X, torch.ones(N, 1, dtype=F64)], dim=1)
    cov = torch.linalg.inv(torch.eye(3, dtype=F64) / s**2 + Phi.T @ Phi / sigma**2)
    mean = cov @ Phi.T @ y / sigma**2
    Z = torch.tensor([[0.0, 0.0, 1.0], [1.5, -1.0, 1.0], [-2.0, 2.0, 1.0]], dtype=F64)
    f, m, S = w @ Z.T, (Z @ mean)[:, 0], Z @ cov @ Z.T
    z_mean = (f.mean(0) - m) / (S.diagonal() / C).sqrt()
    S_hat = torch.cov(f.T)
    se = ((S.diagonal()[:, None] * S.diagonal()[None, :] + S**2) / C).sqrt()
    z_cov = ((S_hat - S) / se)[torch.triu_indices(3, 3).unbind()]
    ratio = (S_hat.diagonal() / S.diagonal()).sqrt()
    return (f"perturbed targets {perturb}, anchors {anchors}: z mean "
            f"{[round(v, 2) for v in z_mean.tolist()]}, z cov "
            f"{[round(v, 2) for v in z_cov.tolist()]}, std ratio "
            f"{[round(v, 3) for v in ratio.tolist()]}")


if __name__ == "__main__":
    for perturb, anchors in ((True, True), (False, True), (False, False)):
        print(run(perturb, anchors), flush=True)
