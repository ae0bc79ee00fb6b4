"""fBNN, ifBNN and ifBDE against their weight-space twins and the published Deep Ensembles.

Reads record CSVs (``skfbnn bench`` output) of the functional methods and of ``bbb`` /
``ensemble`` and prints a markdown table (RMSE, test LL, CRPS, 95% coverage, fit time: mean
+- standard error over splits; each functional method on the splits it has, ``bbb`` and
``ensemble`` on the splits any functional method has), then the issue's goals: ifBNN and fBNN
vs BBB and ifBDE vs the deep ensemble in test log-likelihood (paired over common splits: mean
difference, standard error, z), and whether the best of the three functional methods reaches
the published Deep Ensembles log-likelihood (within one standard error).

Usage: python benchmarks/compare_functional_vi.py benchmarks/results/uci_functional_vi/*.csv \
           benchmarks/results/uci_vi_ensemble/*.csv benchmarks/results/uci_ensemble/*.csv
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

# published.py sits next to this script, so it is importable when the script is run.
from published import DEEP_ENSEMBLES

from skfbnn.bench.report import read_records

METHODS = ("bbb", "ifbnn", "fbnn", "ensemble", "ifbde")
FUNCTIONAL = ("ifbnn", "fbnn", "ifbde")
BASELINES = ("bbb", "ensemble")
PAIRS = (("ifbnn", "bbb"), ("fbnn", "bbb"), ("ifbde", "ensemble"))
COLUMNS = ("rmse", "test_ll", "crps", "coverage95", "fit_time")


def _mean_se(values) -> tuple[float, float]:
    v = np.asarray(values, float)
    return v.mean(), (v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan)


def main() -> None:
    records = read_records(sys.argv[1:])
    by = defaultdict(dict)  # (dataset, method) -> {split: record}
    for r in records:
        if r["method"] in METHODS:
            by[(r["dataset"], r["method"])][int(r["split"])] = r
    datasets = sorted({d for d, _ in by})
    print("| dataset | method | splits | RMSE | test LL | CRPS | coverage95 | fit time (s) |")
    print("|---|---|---|---|---|---|---|---|")
    goals = []
    for d in datasets:
        present = [m for m in METHODS if (d, m) in by]
        best = None
        for m in present:
            splits = sorted(by[(d, m)])
            if m in BASELINES:  # on the splits the functional methods have, for comparison
                ours = set().union(*(by[(d, f)] for f in FUNCTIONAL if (d, f) in by))
                splits = sorted(set(splits) & ours) or splits
            rows = [by[(d, m)][s] for s in splits]
            cells = [_mean_se([r[c] for r in rows]) for c in COLUMNS]
            print(f"| {d} | {m} | {len(splits)} | "
                  + " | ".join(f"{mu:.3f} ± {se:.3f}" for mu, se in cells) + " |")
            if m in FUNCTIONAL and (best is None or cells[1][0] > best[1][0]):
                best = (m, cells[1])
        for new, old in PAIRS:
            if (d, new) in by and (d, old) in by:
                paired = sorted(set(by[(d, new)]) & set(by[(d, old)]))
                diff = [by[(d, new)][s]["test_ll"] - by[(d, old)][s]["test_ll"] for s in paired]
                mu, se = _mean_se(diff)
                goals.append(f"- {d}: {new} − {old} test LL {mu:+.3f} ± {se:.3f} "
                             f"({'better' if mu > 0 else 'worse'}, z {mu / se:+.1f}; "
                             f"{len(paired)} paired splits)")
        if best is None:
            continue
        published = DEEP_ENSEMBLES[d][1]
        m, (mu, se) = best
        reached = mu >= published - (0.0 if np.isnan(se) else se)
        goals.append(f"- {d}: best {m} {mu:.3f} ± {se:.3f} vs published Deep Ensembles "
                     f"{published:.2f}: {'reached' if reached else 'missed'}")
    print("\n" + "\n".join(goals))


if __name__ == "__main__":
    main()
