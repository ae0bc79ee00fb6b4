"""Check the UCI goals from benchmark records: functional vs weight-space priors, and MC dropout.

Prints, per data set, mean test log-likelihood of each method, whether fSGLD beats SGLD and
fSGHMC beats SGHMC, and the best functional method against MC dropout's published RMSE / LL
(Gal & Ghahramani 2016, original units).

Usage: python benchmarks/compare_uci.py benchmarks/results/uci/*.csv
"""

from __future__ import annotations

import sys

from skfbnn.bench.report import read_records, summarize_records

MC_DROPOUT = {  # RMSE, test LL
    "bostonHousing": (2.97, -2.46), "concrete": (5.23, -3.04), "energy": (1.66, -1.99),
    "kin8nm": (0.10, 0.95), "protein-tertiary-structure": (4.36, -2.89),
    "wine-quality-red": (0.62, -0.93), "yacht": (1.11, -1.55),
}


def main(paths: list[str]) -> None:
    summary = summarize_records(read_records(paths))
    datasets = sorted({d for d, _ in summary})
    wins = {"fsgld>sgld": 0, "fsghmc>sghmc": 0}
    print("| dataset | SGLD LL | fSGLD LL | SGHMC LL | fSGHMC LL | fSGLD>SGLD | fSGHMC>SGHMC "
          "| best functional RMSE / LL | MC dropout RMSE / LL |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in datasets:
        ll = {m: summary[(d, m)]["test_ll"][0] for m in ("sgld", "fsgld", "sghmc", "fsghmc")
              if (d, m) in summary}
        a = ll.get("fsgld", -1e9) > ll.get("sgld", 1e9)
        b = ll.get("fsghmc", -1e9) > ll.get("sghmc", 1e9)
        wins["fsgld>sgld"] += a
        wins["fsghmc>sghmc"] += b
        best = max((m for m in ("fsgld", "fsghmc") if (d, m) in summary),
                   key=lambda m: summary[(d, m)]["test_ll"][0])
        rmse, lik = summary[(d, best)]["rmse"][0], summary[(d, best)]["test_ll"][0]
        ref = MC_DROPOUT.get(d, (float("nan"), float("nan")))
        cells = " | ".join(f"{ll[m]:.3f}" if m in ll else "-"
                           for m in ("sgld", "fsgld", "sghmc", "fsghmc"))
        print(f"| {d} | {cells} | {'yes' if a else 'no'} | {'yes' if b else 'no'} "
              f"| {best}: {rmse:.3f} / {lik:.3f} | {ref[0]:.2f} / {ref[1]:.2f} |")
    print(f"\nfSGLD beats SGLD on {wins['fsgld>sgld']} of {len(datasets)} data sets; "
          f"fSGHMC beats SGHMC on {wins['fsghmc>sghmc']} of {len(datasets)}.")


if __name__ == "__main__":
    main(sys.argv[1:])
