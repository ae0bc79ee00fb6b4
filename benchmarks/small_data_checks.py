"""Fits on 40 rows that the fit checks must report, measured (user guide, "Diagnostics").

The data of issue 9's bad-input report: 40 rows, 2 features,
``y = sin(2 x0) + 0.5 x1 + 0.1 noise``; test RMSE against the noise-free function on 200
more rows. Prints, per fit, the test RMSE, the median predictive std, the learned noise in
standard deviations of y (``diagnostics_["noise_ratio"]``), the pooled and the largest
per-chain predictive spread at the training inputs, and the warnings raised.

Usage: python benchmarks/small_data_checks.py
"""

from __future__ import annotations

import warnings

import numpy as np

import skfbnn

CASES = [
    ("BBBRegressor", {}),
    ("BBBRegressor", {"noise_std": 0.1}),
    ("BBBRegressor", {"hidden_layer_sizes": (5, 5)}),
    ("DeepEnsembleRegressor", {}),
    ("FunctionalSGHMCRegressor", {"activation": "relu"}),
    ("FunctionalSGHMCRegressor", {}),
    ("SGHMCRegressor", {}),
    ("SGHMCRegressor", {"schedule": "cyclical"}),
    ("SGLDRegressor", {"schedule": "cyclical"}),
    ("FunctionalSGLDRegressor", {"schedule": "cyclical"}),
]


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=40)
    X_test = rng.normal(size=(200, 2))
    f_test = np.sin(2 * X_test[:, 0]) + 0.5 * X_test[:, 1]
    print("| estimator | settings | test RMSE | median std | noise / sd(y) | spread: all "
          "| spread: worst chain | warnings |")
    print("|---|---|---|---|---|---|---|---|")
    for name, params in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = getattr(skfbnn, name)(random_state=0, **params).fit(X, y)
        mean, std = est.predict(X_test, return_std=True)
        d = est.diagnostics_
        kinds = sorted({w.kind for w in d["warnings"]} & {"spread", "noise"})
        print(f"| {name} | {params or 'defaults'} | {np.sqrt(np.mean((mean - f_test) ** 2)):.3f} "
              f"| {np.median(std):.3f} | {d['noise_ratio'][0]:.2f} "
              f"| {d['predictive_spread'][0]:.2f} "
              f"| {np.nanmax(d['predictive_spread_by_chain']):.2f} | {', '.join(kinds) or '-'} |",
              flush=True)


if __name__ == "__main__":
    main()
