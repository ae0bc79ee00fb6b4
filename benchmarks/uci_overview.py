"""Every method at its current defaults on the standard UCI splits: one table, one figure.

Reads the records of the UCI grid (``benchmarks/results/uci/<method>.csv``, one file per
method, written by ``benchmarks/uci.py``; the exact GP's by ``benchmarks/exact_gp_uci.py``)
and the published anchors (``published.py``), and writes

- two markdown tables per column (test log-likelihood, RMSE, 95% coverage), the samplers in
  one and the variational methods, ensembles and exact GP in the other, each with the published
  baselines, so that each fits the width of a page (at most nine columns): one row per data
  set, one column per method, mean +-
  standard error over the splits run (the number of splits in brackets where a method has fewer
  than the data set's standard ones);
- a figure: one panel per data set (two rows of panels), every method's test log-likelihood
  with its standard error, the published MC dropout and Deep Ensembles values and the exact GP
  as vertical lines;
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


SAMPLERS = ("SGLD", "fSGLD", "SGHMC", "fSGHMC", "pCN", "pCNL")
"""The methods of the first table of each column; the others and the exact GP make the second."""


def markdown(summary: dict, column: str, methods=None, anchors: bool = True) -> str:
    """One row per data set, one column per method (``methods``: the default all of
    ``METHODS`` and the exact GP), then the published anchors when ``anchors``."""
    methods = [*METHODS, "exact GP"] if methods is None else list(methods)
    published = (" | MC dropout | Deep Ensembles" if anchors else "")
    lines = ["| data set | " + " | ".join(methods) + published + " |",
             "|---|" + "---|" * (len(methods) + (2 if anchors else 0))]
    index = 1 if column == "test_ll" else 0
    for d in DATASETS:
        cells = [_cell(summary[(d, m)], column, d) if (d, m) in summary else "–"
                 for m in methods]
        if (d in GP_ARTEFACT and "exact GP" in methods and (d, "exact GP") in summary
                and column != "fit_time"):
            i = methods.index("exact GP")
            cells[i] = f"({cells[i]}) \\*"
        if anchors:
            cells += [f"{table[d][index]:.2f}" if column in ("test_ll", "rmse") else "–"
                      for table in (MC_DROPOUT, DEEP_ENSEMBLES)]
        lines.append(f"| {SHORT.get(d, d)} | " + " | ".join(cells) + " |")
    if ("exact GP" in methods and column != "fit_time"
            and any((d, "exact GP") in summary for d in GP_ARTEFACT)):
        lines += ["", "\\* " + ", ".join(SHORT.get(d, d) for d in GP_ARTEFACT)
                  + ": not comparable, the exact GP interpolates test rows that duplicate"
                  " training rows (see \"The exact GP\")."]
    return "\n".join(lines)


def split_markdown(summary: dict, column: str, title: str) -> str:
    """``title`` over two tables, the samplers and then the other methods, each with the
    published anchors (test log-likelihood and RMSE)."""
    others = [m for m in [*METHODS, "exact GP"] if m not in SAMPLERS]
    anchors = column in ("test_ll", "rmse")
    return (f"{title}: samplers\n\n{markdown(summary, column, SAMPLERS, anchors)}\n\n"
            f"{title}: variational methods, ensembles and exact GP\n\n"
            f"{markdown(summary, column, others, anchors)}")


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
    """One panel per data set in two rows: test log-likelihood +- s.e. per method (one row of
    the panel each, the same order in every panel), the anchors as vertical lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"SG-MCMC": "tab:blue", "MH": "tab:purple", "VI": "tab:orange",
              "ensemble": "tab:green"}
    methods = list(METHODS)
    ncols = 4
    fig, axes = plt.subplots(2, ncols, figsize=(13, 8.5), sharey=True)
    flat = axes.ravel()
    for ax, d in zip(flat, DATASETS, strict=False):
        for i, m in enumerate(methods):
            if (d, m) in summary:
                mean, se, _ = summary[(d, m)]["test_ll"]
                ax.errorbar(mean, i, xerr=se, fmt="o", ms=6, capsize=3,
                            color=colors[FAMILY[m]])
        ax.axvline(MC_DROPOUT[d][1], color="0.5", ls="--", lw=1.5, label="MC dropout")
        ax.axvline(DEEP_ENSEMBLES[d][1], color="0.2", ls=":", lw=2, label="Deep Ensembles")
        if (d, "exact GP") in summary and d not in GP_ARTEFACT:
            ax.axvline(summary[(d, "exact GP")]["test_ll"][0], color="tab:red", lw=1.5,
                       label="exact GP")
        ax.set_yticks(range(len(methods)), methods, fontsize=12)
        ax.set_title(SHORT.get(d, d), fontsize=14)
        ax.tick_params(axis="x", labelsize=11)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.grid(axis="y", color="0.92")
    flat[0].invert_yaxis()  # shared by every panel: the first method on top
    for ax in axes[-1]:
        ax.set_xlabel("test log-likelihood", fontsize=12)
    # The eighth panel holds the legend: the lines and the method families' colours.
    legend_ax = flat[len(DATASETS)]
    legend_ax.axis("off")
    handles, labels = flat[0].get_legend_handles_labels()
    handles += [plt.Line2D([], [], marker="o", ls="", ms=7, color=c) for c in colors.values()]
    labels += [{"MH": "Metropolis-Hastings", "VI": "variational"}.get(f, f) for f in colors]
    legend_ax.legend(handles, labels, loc="center", fontsize=12, frameon=False,
                     title="higher is better", title_fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", default=None, help="write the tables here")
    parser.add_argument("--plot", default=None, help="write the figure here")
    parser.add_argument("--fit-times", default=None, help="write the fit-time table here")
    parser.add_argument("--ranks", default=None, help="write the rank table here")
    args = parser.parse_args()
    summary = load()
    text = "\n\n".join(split_markdown(summary, column, title) for title, column in (
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
        Path(args.fit_times).write_text(
            split_markdown(summary, "fit_time", "Mean fit time per split (s)") + "\n")


if __name__ == "__main__":
    main()
