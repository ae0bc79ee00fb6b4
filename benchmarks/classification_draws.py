"""Per-draw against pooled log loss of a classifier's posterior draws (a calibration diagnostic).

For each of the 5 stratified folds (shuffled, seed 0) of a bundled data set, inputs
standardised on the training rows, the classifier at its defaults plus ``--params`` is fitted
and its posterior draws are evaluated on the training and test rows:

- pooled log loss: of the predictive (the mean of the draws' probabilities, ``predict_proba``);
- per-draw log loss: the mean over draws of each draw's own log loss;
- per-draw confidence: the median over draws and rows of the probability of the true class;
- logit spread: the mean absolute logit after subtracting each row's mean over classes.

A pooled log loss far below the per-draw one means the draws disagree (epistemic spread); a
low per-draw confidence on the training rows means every draw is pulled towards uniform
probabilities (e.g. by its prior). Output: one CSV row per fold and set (``--out``) and a
table of means over folds.

Usage: python benchmarks/classification_draws.py --method fsghmc --dataset wine \
           [--params '{"prior_nugget": 30}'] [--label _nugget30] \
           --out benchmarks/results/classification/draws.csv
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from compare_classification import DATASETS  # noqa: E402  (benchmarks/ is the script's dir)
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from skfbnn import BayesianNetClassifier
from skfbnn.bench.report import append_record, read_records

METRICS = ("pooled_log_loss", "per_draw_log_loss", "per_draw_p_true", "logit_spread")


def draw_metrics(est: BayesianNetClassifier, X: np.ndarray, y: np.ndarray) -> dict:
    """The four diagnostics of ``est``'s draws on rows ``X`` with labels ``y`` (indices)."""
    logits = est._draws_at(X).to(torch.float64)  # (draws, n, classes)
    rows = torch.arange(len(y))
    p_true = torch.softmax(logits, -1)[:, rows, torch.as_tensor(y)]  # (draws, n)
    centred = logits - logits.mean(-1, keepdim=True)
    return {"pooled_log_loss": float(-p_true.mean(0).clamp_min(1e-300).log().mean()),
            "per_draw_log_loss": float(-p_true.clamp_min(1e-300).log().mean()),
            "per_draw_p_true": float(p_true.median()),
            "logit_spread": float(centred.abs().mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="fsghmc")
    parser.add_argument("--dataset", default="wine", choices=sorted(DATASETS))
    parser.add_argument("--params", default="{}", help="JSON method_params")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="benchmarks/results/classification/draws.csv")
    args = parser.parse_args()
    params = json.loads(args.params)
    label = args.method + args.label
    X, y = DATASETS[args.dataset]()
    y = np.unique(y, return_inverse=True)[1]
    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)
    for k, (train, test) in enumerate(folds):
        scaler = StandardScaler().fit(X[train])
        est = BayesianNetClassifier(method=args.method, method_params=params or None,
                                    random_state=k, device="cpu")
        est.fit(scaler.transform(X[train]), y[train])
        for part, rows in (("train", train), ("test", test)):
            rec = draw_metrics(est, scaler.transform(X[rows]), y[rows])
            append_record(Path(args.out), {"dataset": args.dataset, "method": label,
                                           "fold": k, "set": part, **rec})
    records = [r for r in read_records([Path(args.out)])
               if r["dataset"] == args.dataset and r["method"] == label]
    print(f"| {args.dataset} | {label} | " + " | ".join(
        f"{np.mean([float(r[m]) for r in records if r['set'] == part]):.3f}"
        for part in ("train", "test") for m in METRICS) + " |")


if __name__ == "__main__":
    main()
