"""Learned noise of a default pCNL fit, with and without the burn-in noise refreshes.

Fits ``make_regression_pipeline("pcnl")`` on the training rows of split 0 of a UCI set and
prints the test RMSE, the median predictive std (total, aleatoric, epistemic), the noise draws
(standardised units) at the first and last kept draw of each chain, and the training RMSE of
the predictive mean (standardised units). ``--no-refresh`` disables
:func:`skfbnn.inference.mh.kernel.refresh_noise` (the behaviour before it existed).

Usage: python benchmarks/mh_noise_check.py --dataset energy [--no-refresh] \
           --data-home ../shared/data/uci
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.datasets import load_uci_split
from skfbnn.inference.mh import kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="energy")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--no-refresh", action="store_true")
    args = parser.parse_args()
    if args.no_refresh:
        kernel.refresh_noise = lambda state, step: state
    Xtr, Xte, ytr, yte = load_uci_split(args.dataset, 0, data_home=args.data_home)
    pipe = make_regression_pipeline("pcnl", random_state=0, device="cpu").fit(Xtr, ytr)
    model, Zte = pipe[-1], pipe[:-1].transform(Xte)
    mean, std = pipe.predict(Xte, return_std=True)
    noise = torch.exp(model.posterior_.draws["log_noise"]).flatten(2)[..., 0]
    print(f"test RMSE {np.sqrt(np.mean((mean - yte) ** 2)):.3f}, median std: total "
          f"{np.median(std):.3f}, aleatoric {np.median(model.predict_std(Zte, 'aleatoric')):.3f},"
          f" epistemic {np.median(model.predict_std(Zte, 'epistemic')):.3f}")
    print("noise (std units), first / last kept draw per chain:",
          np.round(noise[:, 0].numpy(), 3), np.round(noise[:, -1].numpy(), 3))
    print(f"training RMSE of the mean (std units): "
          f"{np.sqrt(np.mean((pipe.predict(Xtr) - ytr) ** 2)) / ytr.std():.3f}")


if __name__ == "__main__":
    main()
