"""Compare our deep ensemble and Bayes by backprop with their published UCI test log-likelihoods.

Prints, per data set, a markdown table: our deep ensemble's RMSE / test LL / 95% coverage
(mean +- standard error over splits) beside the published Deep Ensembles test LL
(Lakshminarayanan, Pritzel & Blundell 2017, Table 1), and our BBB's beside the published
variational-inference column (Graves-style VI, as reported by Hernandez-Lobato & Adams 2015,
Table 2). "match or beat" means our mean is at least the published value minus our standard
error; Δ is ours minus published; "BBB − our DE" is the gap between our two methods, beside
the published gap between VI and deep ensembles.

Usage: python benchmarks/compare_vi_ensemble.py benchmarks/results/uci_vi_ensemble/*.csv
"""

from __future__ import annotations

import sys

# published.py sits next to this script, so it is importable when the script is run.
from published import DEEP_ENSEMBLES as _DE
from published import VI as _VI

from skfbnn.bench.report import read_records, summarize_records

DEEP_ENSEMBLES = {d: ll for d, (_, ll) in _DE.items()}  # published test LL
VI = {d: ll for d, (_, ll) in _VI.items()}


def _cell(summary, key, column, digits=3) -> str:
    if key not in summary:
        return "-"
    mean, se, _ = summary[key][column]
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def _matches(summary, key, published) -> str:
    if key not in summary:
        return "-"
    mean, se, _ = summary[key]["test_ll"]
    return "yes" if mean >= published - se else "no"


def main(paths: list[str]) -> None:
    summary = summarize_records(read_records(paths))
    datasets = sorted(DEEP_ENSEMBLES)
    counts = {"ensemble": 0, "bbb": 0}
    print("| dataset | DE RMSE | DE test LL | DE cov95 | paper DE LL | Δ | match/beat "
          "| BBB RMSE | BBB test LL | BBB cov95 | paper VI LL | Δ | match/beat "
          "| BBB − our DE | paper VI − paper DE |")
    print("|---" * 15 + "|")
    for d in datasets:
        ens, bbb = (d, "ensemble"), (d, "bbb")
        flags = {"ensemble": _matches(summary, ens, DEEP_ENSEMBLES[d]),
                 "bbb": _matches(summary, bbb, VI[d])}
        for m, flag in flags.items():
            counts[m] += flag == "yes"
        delta = {m: f"{summary[(d, m)]['test_ll'][0] - ref:+.2f}" if (d, m) in summary else "-"
                 for m, ref in (("ensemble", DEEP_ENSEMBLES[d]), ("bbb", VI[d]))}
        gap = "-"
        if bbb in summary and ens in summary:
            gap = f"{summary[bbb]['test_ll'][0] - summary[ens]['test_ll'][0]:+.3f}"
        print(f"| {d} | {_cell(summary, ens, 'rmse')} | {_cell(summary, ens, 'test_ll')} "
              f"| {_cell(summary, ens, 'coverage95')} | {DEEP_ENSEMBLES[d]:.2f} "
              f"| {delta['ensemble']} | {flags['ensemble']} | {_cell(summary, bbb, 'rmse')} "
              f"| {_cell(summary, bbb, 'test_ll')} | {_cell(summary, bbb, 'coverage95')} "
              f"| {VI[d]:.2f} | {delta['bbb']} | {flags['bbb']} | {gap} "
              f"| {VI[d] - DEEP_ENSEMBLES[d]:+.2f} |")
    print(f"\nDeep ensemble matches or beats the published deep ensembles on "
          f"{counts['ensemble']} of {len(datasets)} data sets; BBB matches or beats the "
          f"published VI on {counts['bbb']} of {len(datasets)}.")


if __name__ == "__main__":
    main(sys.argv[1:])
