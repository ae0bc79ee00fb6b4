"""Is a regressor's predictive as wide as its errors? Test MSE against the predicted variance.

On scikit-learn's diabetes data (5-fold CV, shuffled with seed 0, inputs standardised on the
training folds, ``random_state`` = the fold), prints per setting the test mean squared error
of the predictive mean, the mean predicted epistemic and aleatoric variances, their sum over
the MSE (1 for a calibrated Gaussian predictive), the 95% coverage of the Gaussian interval
``mean ± 1.96 std`` and the training MSE (how much closer the network fits its own rows).

Usage: python benchmarks/predictive_variance.py --method ensemble \
           [--set prior_std=3.0 "hidden_layer_sizes=(50,)" activation=tanh] [--set ...]
(each ``--set`` is one setting, its values read as Python literals; none: the defaults)
"""

from __future__ import annotations

import argparse
import ast

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import KFold

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.inference.registry import METHODS


def parse(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        try:
            out[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[key] = text
    return out


def summary(method: str, params: dict) -> tuple[float, ...]:
    X, y = load_diabetes(return_X_y=True)
    rows = []
    for k, (train, test) in enumerate(KFold(5, shuffle=True, random_state=0).split(X)):
        # StandardScaler on the training folds, then the method (the benchmark's pipeline)
        model = make_regression_pipeline(method, random_state=k, device="cpu", **params)
        model.fit(X[train], y[train])
        mean, std = model.predict(X[test], return_std=True)
        net, x_test = model[-1], model[:-1].transform(X[test])
        rows.append((np.mean((y[test] - mean) ** 2),
                     np.mean(net.predict_std(x_test, kind="epistemic") ** 2),
                     np.mean(net.predict_std(x_test, kind="aleatoric") ** 2),
                     np.mean(np.abs(y[test] - mean) < 1.96 * std),
                     np.mean((y[train] - model.predict(X[train])) ** 2)))
    return tuple(np.mean(rows, axis=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="ensemble", choices=sorted(METHODS))
    parser.add_argument("--set", nargs="*", action="append", default=None)
    args = parser.parse_args()
    print("| setting | test MSE | epistemic var | aleatoric var | variance / MSE | coverage95 "
          "| train MSE |")
    print("|---|---|---|---|---|---|---|")
    for pairs in args.set or [[]]:
        mse, epi, ale, cov, train = summary(args.method, parse(pairs))
        print(f"| {args.method} {' '.join(pairs) or '(defaults)'} | {mse:.0f} | {epi:.0f} | "
              f"{ale:.0f} | {(epi + ale) / mse:.2f} | {cov:.3f} | {train:.0f} |", flush=True)


if __name__ == "__main__":
    main()
