"""The ECE a perfectly calibrated classifier would show on the same folds (the estimator's floor).

For each data set and fold of ``compare_classification.py`` (5-fold stratified CV, shuffled,
seed 0), the method is fitted at its defaults and its test probabilities are kept; then
labels are drawn from those probabilities ``--draws`` times (so that the predictions are
calibrated by construction) and the top-label ECE (10 bins) of each draw is computed. Printed
per data set: the observed ECE (mean over folds) and the ECE expected under perfect calibration
with the same confidences (mean over folds of the mean over draws, and the share of draws at
or below 0.05). An observed ECE near that floor is what ``n`` test rows can resolve, not a
calibration error.

Usage: python benchmarks/ece_floor.py [--methods sghmc MLPClassifier]
           [--datasets wine breast_cancer two_moons iris] [--draws 2000]
"""

from __future__ import annotations

import argparse

import numpy as np
from compare_classification import DATASETS, make_model
from sklearn.model_selection import StratifiedKFold

from skfbnn.metrics import expected_calibration_error


def fold_probabilities(method: str, dataset: str):
    """``(test labels as column indices, test probabilities)`` per fold."""
    X, y = DATASETS[dataset]()
    out = []
    for k, (train, test) in enumerate(StratifiedKFold(5, shuffle=True,
                                                      random_state=0).split(X, y)):
        model = make_model(method, k, {}).fit(X[train], y[train])
        out.append((np.searchsorted(model.classes_, y[test]), model.predict_proba(X[test])))
    return out


def calibrated_ece(proba: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """ECE of ``draws`` label sets drawn from ``proba`` (calibrated by construction)."""
    cumulative = proba.cumsum(1)
    values = np.empty(draws)
    for d in range(draws):
        u = rng.random((len(proba), 1))
        labels = np.minimum((u > cumulative).sum(1), proba.shape[1] - 1)
        values[d] = expected_calibration_error(labels, proba)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=["sghmc", "MLPClassifier"])
    parser.add_argument("--datasets", nargs="+",
                        default=["wine", "breast_cancer", "two_moons", "iris"])
    parser.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| data set | method | test rows per fold | observed ECE | ECE if calibrated: mean "
          "(5%-95% of draws) | draws with ECE <= 0.05 |")
    print("|---|---|---|---|---|---|")
    for dataset in args.datasets:
        for method in args.methods:
            folds = fold_probabilities(method, dataset)
            observed = np.mean([expected_calibration_error(y, p) for y, p in folds])
            sims = np.stack([calibrated_ece(p, args.draws, rng) for _, p in folds])
            mean_over_folds = sims.mean(0)  # the 5-fold mean, as the tables report it
            lo, hi = np.quantile(mean_over_folds, [0.05, 0.95])
            print(f"| {dataset} | {method} | {len(folds[0][0])} | {observed:.3f} | "
                  f"{mean_over_folds.mean():.3f} ({lo:.3f}-{hi:.3f}) | "
                  f"{(mean_over_folds <= 0.05).mean():.2f} |", flush=True)


if __name__ == "__main__":
    main()
