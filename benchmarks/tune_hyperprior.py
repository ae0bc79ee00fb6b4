"""Shape of the Gamma(a, a) hyperprior of ``prior_std="learn"`` on validation rows.

For each shape ``a`` (rate ``a``: prior mean precision 1), SGHMC at its defaults on the
validation rows of splits 0 and 1 (``tune_samplers.validation_rows``: 80/20 of the training
part, test rows never read), plus the 20-row Boston subset of split 2 on which one chain ran
off with ``a = 1`` (``functional_small_data.py``'s rows; scored on that split's test part).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/tune_hyperprior.py --data-home ../shared/data/uci \\
        --shapes 1 2 5 --datasets yacht bostonHousing concrete energy wine-quality-red
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from tune_samplers import validation_rows

from skfbnn.bench.configs import make_regression_pipeline
from skfbnn.bench.runner import evaluate_split
from skfbnn.datasets import load_uci_split
from skfbnn.exceptions import SamplerDivergenceError
from skfbnn.priors import weight


def _score(X, y, X_test, y_test, seed: int) -> str:
    pipe = make_regression_pipeline("sghmc", random_state=seed, device="cpu")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f"{evaluate_split(pipe, X, y, X_test, y_test)['test_ll']:.3f}"
    except SamplerDivergenceError:
        return "diverged"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", required=True)
    parser.add_argument("--shapes", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--datasets", nargs="+", default=["yacht", "bostonHousing"])
    args = parser.parse_args()
    for a in args.shapes:
        weight.HierarchicalWeightPrior.__init__.__defaults__ = (a, a)
        X, X_test, y, y_test = load_uci_split("bostonHousing", 2, data_home=args.data_home)
        rows = np.random.default_rng(1002).choice(len(X), 20, replace=False)
        print(f"shape {a:g}: Boston, 20 rows of split 2, test LL "
              f"{_score(X[rows], y[rows], X_test, y_test, 2)}", flush=True)
        for dataset in args.datasets:
            lls = [_score(*validation_rows(dataset, split, args.data_home), split)
                   for split in (0, 1)]
            print(f"shape {a:g}: {dataset} validation LL, splits 0 and 1: {' '.join(lls)}",
                  flush=True)


if __name__ == "__main__":
    main()
