"""Acceptance versus dimension on the reference measure itself (a flat likelihood).

The idealised limit of the paper's argument: when the reparametrised posterior *is*
``N(0, I)``, pCN (and pCNL, whose gradient vanishes) accept every proposal in any
dimension, while MALA at a fixed step does not preserve ``N(0, I)`` and its acceptance
falls as the dimension grows. Steps are equalised on the noise coefficient ``beta``
(MALA ``h = beta^2 / 2``); 4 chains started at draws of ``N(0, I)``, ``--n-steps`` steps.

Usage: python benchmarks/mh_dimension.py --beta 0.2 0.1
"""

from __future__ import annotations

import argparse
import math

import torch

from skfbnn.inference.mh import mala, pcn, pcnl
from skfbnn.inference.mh.kernel import MHState, evaluate, update


class Flat:
    """``Phi = 0`` on ``R^D``."""

    def __init__(self, dim: int) -> None:
        self.step_scale = torch.ones(dim, dtype=torch.float64)

    def potential(self, phi):
        return torch.zeros(phi.shape[0], dtype=phi.dtype)

    def potential_and_grad(self, phi):
        return self.potential(phi), torch.zeros_like(phi)


def acceptance(module, dim: int, step: float, n_steps: int) -> float:
    gen = torch.Generator().manual_seed(0)
    target = Flat(dim)
    phi = torch.randn(4, dim, generator=gen, dtype=torch.float64)
    pot, grad = evaluate(target, phi, module.PROPOSAL.needs_grad)
    state = MHState(phi, None, pot, grad, torch.tensor(math.log(step), dtype=torch.float64),
                    0, target, torch.float64, module.PROPOSAL.max_step)
    total = 0.0
    for _ in range(n_steps):
        state, info = update(state, {}, gen, proposal=module.PROPOSAL)
        total += float(info.accepted.mean())
    return total / n_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beta", type=float, nargs="+", default=[0.2, 0.1])
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 1000, 100000, 1000000])
    parser.add_argument("--n-steps", type=int, default=100)
    args = parser.parse_args()
    print("| beta | D | pCN | pCNL | MALA |")
    print("|---|---|---|---|---|")
    for beta in args.beta:
        for dim in args.dims:
            rates = [acceptance(pcn, dim, beta, args.n_steps),
                     acceptance(pcnl, dim, beta, args.n_steps),
                     acceptance(mala, dim, beta**2 / 2, args.n_steps)]
            print(f"| {beta} | {dim} | " + " | ".join(f"{r:.3f}" for r in rates) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
