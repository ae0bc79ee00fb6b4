"""Classifiers against the plain alternatives on scikit-learn's bundled data.

Data: iris, wine, breast cancer, digits (bundled with scikit-learn) and two
moons (300 points, noise 0.3, seed 0). Inputs standardised inside the
pipeline; 5-fold stratified cross-validation (shuffled, seed 0). Metrics per
fold: accuracy, log loss, top-label ECE (10 bins); the table shows mean +-
standard error over folds. Methods: the skfbnn classifiers at their defaults
(``--methods``, registry names), scikit-learn's ``MLPClassifier((50,))`` and
``LogisticRegression``.

Records (one row per fold) are appended to ``--out``; a rerun skips the (data set, method)
pairs already there.

Usage (the two committed experiments):
    python benchmarks/classification.py --methods sghmc fsghmc \
        --out benchmarks/results/classification/small.csv
    python benchmarks/classification.py --methods bbb ensemble ifbde fbnn ifbnn \
        --datasets digits --folds 1 --no-baselines \
        --out benchmarks/results/classification/digits.csv
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfbnn import BayesianNetClassifier
from skfbnn.bench.report import append_record, read_records
from skfbnn.metrics import expected_calibration_error

DATASETS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "two_moons": lambda: make_moons(300, noise=0.3, random_state=0),
}
BASELINES = {
    "MLPClassifier": lambda seed: MLPClassifier((50,), max_iter=2000, random_state=seed),
    "LogisticRegression": lambda seed: LogisticRegression(max_iter=5000),
}


def make_model(name: str, seed: int, params: dict):
    if name in BASELINES:
        return make_pipeline(StandardScaler(), BASELINES[name](seed))
    own = BayesianNetClassifier().get_params()  # e.g. hidden_layer_sizes: not method_params
    top = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items() if k in own}
    rest = {k: v for k, v in params.items() if k not in own}
    est = BayesianNetClassifier(method=name, method_params=rest or None, random_state=seed,
                                device="cpu", **top)
    return make_pipeline(StandardScaler(), est)


def evaluate(name: str, dataset: str, params: dict, n_folds: int = 5) -> list[dict]:
    X, y = DATASETS[dataset]()
    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)
    records = []
    for k, (train, test) in enumerate(folds):
        if k >= n_folds:
            break
        model = make_model(name, k, params)
        start = time.perf_counter()
        model.fit(X[train], y[train])
        fit_time = time.perf_counter() - start
        proba = model.predict_proba(X[test])
        classes = model.classes_
        y_index = np.searchsorted(classes, y[test])
        records.append({
            "dataset": dataset, "method": name, "fold": k,
            "accuracy": accuracy_score(y[test], classes[proba.argmax(1)]),
            "log_loss": log_loss(y_index, proba, labels=np.arange(len(classes))),
            "ece": expected_calibration_error(y_index, proba), "fit_time": fit_time,
        })
    return records


def table(records: list[dict]) -> str:
    lines = ["| dataset | method | accuracy | log loss | ECE | fit time (s) |",
             "|---|---|---|---|---|---|"]
    for dataset in dict.fromkeys(r["dataset"] for r in records):
        for method in dict.fromkeys(r["method"] for r in records):
            rows = [r for r in records if r["dataset"] == dataset and r["method"] == method]
            if not rows:
                continue
            cells = []
            for col in ("accuracy", "log_loss", "ece", "fit_time"):
                v = np.array([r[col] for r in rows], float)
                cells.append(f"{v.mean():.3f}" if len(v) < 2 else
                             f"{v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(len(v)):.3f}")
            lines.append(f"| {dataset} | {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/classification/small.csv")
    parser.add_argument("--methods", nargs="+", default=["sghmc", "fsghmc"])
    parser.add_argument("--datasets", nargs="+",
                        default=["wine", "breast_cancer", "two_moons", "iris"])
    parser.add_argument("--label", default="", help="suffix for the method names")
    parser.add_argument("--params", default="{}", help="JSON method_params for skfbnn")
    parser.add_argument("--folds", type=int, default=5,
                        help="evaluate only the first FOLDS of the 5 folds (cost)")
    parser.add_argument("--no-baselines", action="store_true")
    args = parser.parse_args()
    import json

    params = json.loads(args.params)
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["dataset"], r["method"]) for r in read_records([out])}
    for name in [*args.methods, *([] if args.no_baselines else BASELINES)]:
        label = name + args.label if name not in BASELINES else name
        for dataset in args.datasets:
            if (dataset, label) in done:
                continue
            for rec in evaluate(name, dataset, params, args.folds):
                append_record(out, {**rec, "method": label})
            print(dataset, label, flush=True)
    print(table([r for r in read_records([out]) if r["dataset"] in args.datasets]))


if __name__ == "__main__":
    main()
