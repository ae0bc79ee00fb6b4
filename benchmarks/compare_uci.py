"""The samplers' UCI results beside the published anchors and an exact GP.

Prints a markdown table per data set: RMSE, test log-likelihood (mixture of the posterior
draws) and 95% coverage of every method in the record files (mean +- standard error over
splits), the exact GP of ``exact_gp_uci.py`` (``--gp`` folder, same splits), and the published
PBP, MC dropout and Deep Ensembles numbers. Then the goals of the samplers issue: the better of
SGHMC and fSGHMC reaches MC dropout's log-likelihood (within one standard error) on how many
data sets, Deep Ensembles' on how many, and its gap to the exact GP; and whether each
functional sampler beats its weight-space twin.

Usage: python benchmarks/compare_uci.py benchmarks/results/uci_v2/*.csv \
           --gp benchmarks/results/exact_gp
       python benchmarks/compare_uci.py benchmarks/results/uci_mh/*.csv --best-of pcn,pcnl
"""

from __future__ import annotations

import argparse
from pathlib import Path

# published.py sits next to this script, so it is importable when the script is run.
from published import DEEP_ENSEMBLES, MC_DROPOUT, PBP

from skfbnn.bench.report import read_records, summarize_records

_ORDER = ("sgld", "fsgld", "sghmc", "fsghmc", "pcn", "pcnl", "mala", "bbb", "ensemble",
          "fbnn", "ifbnn", "ifbde")


def _cell(stats, column, digits=3) -> str:
    mean, se, _ = stats[column]
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--gp", default=None, help="folder of exact-GP CSV files")
    parser.add_argument("--best-of", default="sghmc,fsghmc",
                        help="comma-separated methods whose best is held against the anchors")
    args = parser.parse_args()
    summary = summarize_records(read_records(args.files))
    gp = {}
    if args.gp:
        gp_records = [{**r, "method": "exact GP", "test_ll_gauss": r["test_ll"]} for r in
                      read_records(sorted(Path(args.gp).glob("*.csv")))]
        gp = summarize_records(gp_records)
    datasets = sorted({d for d, _ in summary})
    present = {m for _, m in summary}
    methods = [m for m in _ORDER if m in present] + sorted(present - set(_ORDER))
    best_of = args.best_of.split(",")
    print("| dataset | method | splits | RMSE | test LL | coverage95 |")
    print("|---|---|---|---|---|---|")
    for d in datasets:
        for m in methods:
            if (d, m) in summary:
                s = summary[(d, m)]
                print(f"| {d} | {m} | {s['rmse'][2]} | {_cell(s, 'rmse')} "
                      f"| {_cell(s, 'test_ll')} | {_cell(s, 'coverage95')} |")
        if (d, "exact GP") in gp:
            s = gp[(d, "exact GP")]
            print(f"| {d} | exact GP | {s['rmse'][2]} | {_cell(s, 'rmse')} "
                  f"| {_cell(s, 'test_ll')} | {_cell(s, 'coverage95')} |")
        for name, table in (("PBP", PBP), ("MC dropout", MC_DROPOUT),
                            ("Deep Ensembles", DEEP_ENSEMBLES)):
            rmse, ll = table[d]
            print(f"| {d} | {name} (published) | 20 | {rmse:.2f} | {ll:.2f} | – |")
    print(f"\n| dataset | best of {' / '.join(best_of)}: LL | ≥ MC dropout | ≥ Deep Ensembles "
          "| exact GP LL | gap to GP | fSGLD > SGLD | fSGHMC > SGHMC |")
    print("|---|---|---|---|---|---|---|---|")
    counts = {"mc": 0, "de": 0, "gp": 0, "n_gp": 0}
    for d in datasets:
        pair = [m for m in best_of if (d, m) in summary]
        if not pair:
            continue
        best = max(pair, key=lambda m: summary[(d, m)]["test_ll"][0])
        mean, se, _ = summary[(d, best)]["test_ll"]
        mc, de = mean + se >= MC_DROPOUT[d][1], mean + se >= DEEP_ENSEMBLES[d][1]
        counts["mc"] += mc
        counts["de"] += de
        gp_cell, gap = "–", "–"
        if (d, "exact GP") in gp:
            g = gp[(d, "exact GP")]["test_ll"][0]
            gp_cell, gap = f"{g:.3f}", f"{mean - g:+.3f}"
            counts["n_gp"] += 1
            counts["gp"] += mean >= g - 0.05
        wins = []
        for f, w in (("fsgld", "sgld"), ("fsghmc", "sghmc")):
            if (d, f) in summary and (d, w) in summary:
                delta = summary[(d, f)]["test_ll"][0] - summary[(d, w)]["test_ll"][0]
                wins.append(f"{'yes' if delta > 0 else 'no'} ({delta:+.3f})")
            else:
                wins.append("–")
        print(f"| {d} | {best}: {mean:.3f} ± {se:.3f} | {'yes' if mc else 'no'} "
              f"| {'yes' if de else 'no'} | {gp_cell} | {gap} | {wins[0]} | {wins[1]} |")
    n = sum(any((d, m) in summary for m in best_of) for d in datasets)
    print(f"\nMC dropout reached on {counts['mc']} of {n}; Deep Ensembles on {counts['de']} of "
          f"{n}; within 0.05 nats of the exact GP on {counts['gp']} of {counts['n_gp']}.")


if __name__ == "__main__":
    main()
