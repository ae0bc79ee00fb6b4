"""How much of ifBDE's random function survives training on the 1-D example.

Fits :class:`~skfbnn.IFBDERegressor` (defaults plus the given parameters) on the 20 points of
``examples/plot_extrapolation.py`` and prints, on the same grid and regions, the RMSE of the
predictive mean to the truth in the data region, the epistemic std (the spread of the members'
``f + g``) in the data region, the gap and outside, and the spread across members of the
random function ``g`` alone (standardised units), which the trained ``f`` may cancel.

Usage: python benchmarks/ifbde_random_function_1d.py "random_function=True" \\
           "random_function=True,prior_std=None"
"""

from __future__ import annotations

import argparse
import ast

import numpy as np
import torch

from skfbnn import IFBDERegressor
from skfbnn.datasets import make_oscillation, oscillation_function
from skfbnn.inference.ensemble.random_function import offset
from skfbnn.nn.functional import make_forward


def _params(text: str) -> dict:
    out = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        out[name] = ast.literal_eval(value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", help="comma-separated name=value lists")
    args = parser.parse_args()
    X, y = make_oscillation(20, noise_std=0.5, random_state=0)
    grid = np.linspace(-1, 1, 400)[:, None]
    x = grid.ravel()
    regions = {"data": (np.abs(x) >= 0.25) & (np.abs(x) <= 0.75), "gap": np.abs(x) < 0.25,
               "outside": np.abs(x) > 0.75}
    for config in args.configs:
        model = IFBDERegressor(random_state=0, **_params(config)).fit(X, y)
        mean, std = model.predict(grid), model.predict_std(grid, kind="epistemic")
        data = regions["data"]
        rmse = np.sqrt(np.mean((mean[data] - oscillation_function(x[data])) ** 2))
        members = {k: v.double() for k, v in model.posterior_.members.items()}
        g = offset(make_forward(model.network_), members, torch.as_tensor(grid))
        line = f"{config}: RMSE {rmse:.2f}, epistemic std " + " / ".join(
            f"{name} {std[r].mean():.3f}" for name, r in regions.items())
        if g is not None:
            spread = g[..., 0].std(0).numpy()
            line += ", std of g alone " + " / ".join(
                f"{name} {spread[r].mean():.3f}" for name, r in regions.items())
        print(line, flush=True)


if __name__ == "__main__":
    main()
