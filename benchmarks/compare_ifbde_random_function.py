"""ifBDE with its randomised-function term against the deep ensemble and ifBDE without it.

Reads the ``skfbnn bench`` records of ifBDE with ``random_function=True``
(``benchmarks/results/uci_ifbde_rf``), of ifBDE at its defaults
(``benchmarks/results/uci_functional_vi/ifbde-*.csv``) and of the deep ensemble
(``benchmarks/results/uci_ensemble``), and prints per data set, over the splits the term has:
test log-likelihood and coverage95 (mean +- standard error), and the paired test
log-likelihood differences (term minus deep ensemble, term minus no term: mean, standard
error, z).

Usage: python benchmarks/compare_ifbde_random_function.py
"""

from __future__ import annotations

import glob

import numpy as np

from skfbnn.bench.report import read_records

SOURCES = {
    "ifBDE + term": "benchmarks/results/uci_ifbde_rf/ifbde-*.csv",
    "ifBDE": "benchmarks/results/uci_functional_vi/ifbde-*.csv",
    "deep ensemble": "benchmarks/results/uci_ensemble/*.csv",
}


def _load(pattern: str) -> dict:
    out: dict = {}
    for r in read_records(sorted(glob.glob(pattern))):
        out.setdefault(r["dataset"], {})[int(r["split"])] = r
    return out


def _mean_se(v) -> str:
    v = np.asarray(v, float)
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan
    return f"{v.mean():.3f} ± {se:.3f}"


def main() -> None:
    runs = {name: _load(pattern) for name, pattern in SOURCES.items()}
    print("| dataset (splits) | " + " | ".join(runs) + " | term - DE | term - no term |")
    print("|---" * (len(runs) + 3) + "|")
    wins = 0
    for dataset, by_split in sorted(runs["ifBDE + term"].items()):
        splits = sorted(s for s in by_split if all(s in runs[n].get(dataset, {}) for n in runs))
        if not splits:
            continue
        cells = []
        for name in runs:
            rows = [runs[name][dataset][s] for s in splits]
            ll = [float(r["test_ll"]) for r in rows]
            cover = np.mean([float(r["coverage95"]) for r in rows])
            cells.append(f"{_mean_se(ll)} ({cover:.2f})")
        diffs = []
        for other in ("deep ensemble", "ifBDE"):
            d = np.array([float(runs["ifBDE + term"][dataset][s]["test_ll"])
                          - float(runs[other][dataset][s]["test_ll"]) for s in splits])
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
            diffs.append(f"{d.mean():+.3f} ± {se:.3f} (z {d.mean() / se:.1f})")
            if other == "deep ensemble":
                wins += d.mean() > 0
        print(f"| {dataset} ({len(splits)}) | " + " | ".join(cells + diffs) + " |")
    print(f"\nifBDE + term above the deep ensemble (mean paired difference > 0) on {wins} sets")


if __name__ == "__main__":
    main()
