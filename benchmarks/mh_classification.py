"""The two class-probability maps of the wide-network classifiers, on the same draws.

``PCNClassifier`` at its defaults (Gaussian likelihood on shifted one-hot targets, noise std
0.1) with ``proba="clip"`` and ``proba="argmax"``: the seed is the same, so both use the
same posterior draws and differ only in how a draw's outputs become probabilities. Data:
scikit-learn's bundled iris, wine, breast cancer and digits; inputs standardised; stratified
K-fold cross-validation (shuffled, seed 0). Metrics per fold: accuracy, log loss, top-label
ECE (10 bins); mean +- standard error over folds.

``--hidden-layer-sizes`` and ``--activation`` override the network defaults (the table in
docs/mh.md was measured with the family's former default, one tanh layer of 50).

Usage: python benchmarks/mh_classification.py --folds 3 [--hidden-layer-sizes 50 --activation tanh]
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from skfbnn import PCNClassifier
from skfbnn.metrics import expected_calibration_error

DATASETS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--hidden-layer-sizes", nargs="+", type=int, default=None)
    parser.add_argument("--activation", default=None)
    args = parser.parse_args()
    network = {k: v for k, v in (("hidden_layer_sizes", args.hidden_layer_sizes),
                                 ("activation", args.activation)) if v is not None}
    if "hidden_layer_sizes" in network:
        network["hidden_layer_sizes"] = tuple(network["hidden_layer_sizes"])
    print("| data set | proba | accuracy | log loss | ECE |")
    print("|---|---|---|---|---|")
    for name in args.datasets:
        X, y = DATASETS[name]()
        scores = {"clip": [], "argmax": []}
        folds = StratifiedKFold(args.folds, shuffle=True, random_state=0).split(X, y)
        for k, (train, test) in enumerate(folds):
            scaler = StandardScaler().fit(X[train])
            Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
            for proba in scores:
                est = PCNClassifier(proba=proba, random_state=k, device="cpu", **network)
                p = est.fit(Xtr, y[train]).predict_proba(Xte)
                scores[proba].append((accuracy_score(y[test], est.classes_[p.argmax(1)]),
                                      log_loss(y[test], p, labels=est.classes_),
                                      expected_calibration_error(y[test], p)))
        for proba, rows in scores.items():
            a = np.array(rows)
            mean, se = a.mean(0), a.std(0, ddof=1) / np.sqrt(len(a))
            cells = " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, se, strict=True))
            print(f"| {name} | {proba} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
