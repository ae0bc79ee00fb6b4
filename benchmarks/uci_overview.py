"""Every method at its current defaults on the standard UCI splits: one table, one figure.

Reads the records of the UCI grid (``benchmarks/results/uci/<method>.csv``, one file per
method, written by ``benchmarks/uci.py``; the exact GP's by ``benchmarks/exact_gp_uci.py``)
and the published anchors (``published.py``), and writes

- a markdown table per column (test log-likelihood, RMSE, 95% coverage): one row per data set,
  one column per method, mean +- standard error over the splits run (the number of splits in
  brackets where a method has fewer than the data set's standard ones);
- a figure: one panel per data set, every method's test log-likelihood with its standard error,
  the published MC dropout and Deep Ensembles values and the exact GP as horizontal lines;
- with ``--ranks FILE``, each method's rank by mean test log-likelihood on each data set
  (1 = highest; the exact GP and the published anchors left out; many neighbours differ by
  less than a standard error);
- with ``--fit-times FILE``, the mean fit time per split in seconds (the records' ``fit_time``;
  the runs shared the two cores with one to four other benchmark processes, so these are
  orders of magnitude, not timings).

Usage: python benchmarks/uci_overview.py --markdown benchmarks/results/uci/summary.md \
           --plot docs/images/uci_overview.png --fit-times benchmarks/results/uci/fit_time.md \
           --ranks benchmarks/results/uci/ranks.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

# published.py sits next to this script, so it is importable when the script is run.
from published import DEEP_ENSEMBLES, MC_DROPOUT

from skfbnn.bench.report import read_records, summarize_records

RESULTS = Path(__file__).resolve().parent / "results" / "uci"

METHODS = {
    # column label: record file under benchmarks/results/uci (its records' method name)
    "SGLD": "sgld",
    "fSGLD": "fsgld",
    "SGHMC": "sghmc",
    "fSGHMC": "fsghmc",
    "pCN": "pcn",
    "pCNL": "pcnl",
    "BBB": "bbb",
    "fBNN": "fbnn",
    "ifBNN": "ifbnn",
    "deep ensemble": "ensemble",
    "ifBDE": "ifbde",
}
FAMILY = {"SGLD": "SG-MCMC", "fSGLD": "SG-MCMC", "SGHMC": "SG-MCMC", "fSGHMC": "SG-MCMC",
          "pCN": "MH", "pCNL": "MH", "BBB": "VI", "fBNN": "VI", "ifBNN": "VI",
          "deep ensemble": "ensemble", "ifBDE": "ensemble"}
DATASETS = ("bostonHousing", "concrete", "energy", "kin8nm", "protein-tertiary-structure",
            "wine-quality-red", "yacht")
SHORT = {"bostonHousing": "Boston", "protein-tertiary-structure": "protein",
         "wine-quality-red": "wine"}
STANDARD_SPLITS = {"protein-tertiary-structure": 5}
GP_ARTEFACT = {"wine-quality-red"}
"""Sets where the exact GP's log-likelihood is not comparable: wine's duplicated rows let it
interpolate a quarter of the test rows (docs/benchmarks.md, "The exact GP"); the table
marks the value, the figure leaves it out."""


def load(results: Path = RESULTS) -> dict:
    """``{(dataset, method): {column: (mean, s.e., n)}}`` for every method of ``METHODS`` and
    ``"exact GP"``."""
    records = []
    for method, name in METHODS.items():
        for r in read_records([results / f"{name}.csv"]):
            if r["method"] == name:
                records.append({**r, "method": method})
    for r in read_records([results / "exact_gp.csv"]):
        records.append({**r, "method": "exact GP", "test_ll_gauss": r["test_ll"]})
    return summarize_records(records)


def _cell(stats, column: str, dataset: str) -> str:
    mean, se, n = stats[column]
    digits = 4 if column == "rmse" and abs(mean) < 0.2 else 1 if column == "fit_time" else 3
    text = f"{mean:.{digits}f} ± {se:.{digits}f}"
    return text if n == STANDARD_SPLITS.get(dataset, 20) else f"{text} ({n})"


def markdown(summary: dict, column: str) -> str:
    """One row per data set, one column per method, then the published anchors."""
    methods = [*METHODS, "exact GP"]
    lines = ["| data set | " + " | ".join(methods) + " | MC dropout | Deep Ensembles |",
             "|---|" + "---|" * (len(methods) + 2)]
    index = 1 if column == "test_ll" else 0
    for d in DATASETS:
        cells = [_cell(summary[(d, m)], column, d) if (d, m) in summary else "–"
                 for m in methods]
        if d in GP_ARTEFACT and (d, "exact GP") in summary and column != "fit_time":
            cells[-1] = f"({cells[-1]}: duplicates)"
        anchors = [f"{table[d][index]:.2f}" if column in ("test_ll", "rmse") else "–"
                   for table in (MC_DROPOUT, DEEP_ENSEMBLES)]
        lines.append(f"| {SHORT.get(d, d)} | " + " | ".join(cells + anchors) + " |")
    return "\n".join(lines)


def ranks(summary: dict) -> str:
    """One row per method: its rank by mean test log-likelihood on each data set."""
    methods = list(METHODS)
    order = {d: sorted((m for m in methods if (d, m) in summary),
                       key=lambda m: -summary[(d, m)]["test_ll"][0]) for d in DATASETS}
    lines = ["| method | " + " | ".join(SHORT.get(d, d) for d in DATASETS) + " | mean rank |",
             "|---|" + "---|" * (len(DATASETS) + 1)]
    for m in methods:
        r = [order[d].index(m) + 1 for d in DATASETS if m in order[d]]
        cells = [str(order[d].index(m) + 1) if m in order[d] else "–" for d in DATASETS]
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {sum(r) / len(r):.1f} |")
    return "\n".join(lines)


def plot(summary: dict, path: Path) -> None:
    """One panel per data set: test log-likelihood +- s.e. per method, anchors as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"SG-MCMC": "tab:blue", "MH": "tab:purple", "VI": "tab:orange",
              "ensemble": "tab:green"}
    methods = list(METHODS)
    fig, axes = plt.subplots(1, len(DATASETS), figsize=(2.6 * len(DATASETS), 3.8))
    for ax, d in zip(axes, DATASETS, strict=True):
        for i, m in enumerate(methods):
            if (d, m) in summary:
                mean, se, _ = summary[(d, m)]["test_ll"]
                ax.errorbar(i, mean, yerr=se, fmt="o", ms=4, capsize=2,
                            color=colors[FAMILY[m]])
        ax.axhline(MC_DROPOUT[d][1], color="0.5", ls="--", lw=1, label="MC dropout")
        ax.axhline(DEEP_ENSEMBLES[d][1], color="0.2", ls=":", lw=1.2, label="Deep Ensembles")
        if (d, "exact GP") in summary and d not in GP_ARTEFACT:
            ax.axhline(summary[(d, "exact GP")]["test_ll"][0], color="tab:red", lw=1,
                       label="exact GP")
        ax.set_xticks(range(len(methods)), methods, rotation=90, fontsize=7)
        ax.set_title(SHORT.get(d, d), fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    axes[0].set_ylabel("test log-likelihood (higher is better)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", default=None, help="write the tables here")
    parser.add_argument("--plot", default=None, help="write the figure here")
    parser.add_argument("--fit-times", default=None, help="write the fit-time table here")
    parser.add_argument("--ranks", default=None, help="write the rank table here")
    args = parser.parse_args()
    summary = load()
    text = "\n\n".join(f"{title}\n\n{markdown(summary, column)}" for title, column in (
        ("Test log-likelihood (original units)", "test_ll"), ("RMSE", "rmse"),
        ("95% coverage", "coverage95")))
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    if args.plot:
        plot(summary, Path(args.plot))
    if args.ranks:
        Path(args.ranks).write_text("Rank by mean test log-likelihood among the methods "
                                    "(1 = highest)\n\n" + ranks(summary) + "\n")
    if args.fit_times:
        Path(args.fit_times).write_text("Mean fit time per split (s)\n\n"
                                        + markdown(summary, "fit_time") + "\n")


if __name__ == "__main__":
    main()
