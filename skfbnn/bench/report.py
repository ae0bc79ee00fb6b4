"""Mean +- standard error tables (markdown) and plots from benchmark records."""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["read_records", "append_record", "summarize_records", "markdown_table", "plot_records"]

COLUMNS = ("rmse", "test_ll", "test_ll_gauss", "crps", "coverage95", "fit_time")


def append_record(path: Path, record: dict) -> None:
    """Append one record to a CSV file (header written on creation)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(record))
        if new:
            writer.writeheader()
        writer.writerow(record)


def read_records(paths: Sequence[Path]) -> list[dict]:
    """Records from CSV files, numbers parsed as floats."""
    rows = []
    for path in paths:
        with Path(path).open() as fh:
            for row in csv.DictReader(fh):
                rows.append({k: _number(v) for k, v in row.items()})
    return rows


def _number(value: str):
    try:
        return float(value)
    except ValueError:
        return value


def summarize_records(records: list[dict]) -> dict[tuple[str, str], dict[str, tuple]]:
    """``{(dataset, method): {column: (mean, standard error, n)}}``."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["dataset"], r["method"])].append(r)
    out = {}
    for key, rows in groups.items():
        out[key] = {}
        for col in COLUMNS:
            values = np.array([r[col] for r in rows], dtype=float)
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
            out[key][col] = (values.mean(), se, len(values))
    return out


def markdown_table(summary: dict, columns: Sequence[str] = COLUMNS) -> str:
    """One row per (dataset, method): ``mean +- s.e.`` per column."""
    head = "| dataset | method | splits | " + " | ".join(columns) + " |"
    lines = [head, "|" + "---|" * (len(columns) + 3)]
    for (dataset, method), cols in sorted(summary.items()):
        n = cols[columns[0]][2]
        cells = [f"{m:.3f} ± {s:.3f}" if np.isfinite(s) else f"{m:.3f}" for m, s, _ in
                 (cols[c] for c in columns)]
        lines.append(f"| {dataset} | {method} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_records(summary: dict, path: Path, column: str = "test_ll") -> None:
    """Grouped error-bar plot of one column per data set and method (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted({d for d, _ in summary})
    methods = sorted({m for _, m in summary})
    fig, axes = plt.subplots(1, len(datasets), figsize=(2.4 * len(datasets), 3.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        for i, method in enumerate(methods):
            if (dataset, method) in summary:
                mean, se, _ = summary[(dataset, method)][column]
                ax.errorbar(i, mean, yerr=se, fmt="o", capsize=3)
        ax.set_xticks(range(len(methods)), methods, rotation=90, fontsize=8)
        ax.set_title(dataset, fontsize=9)
    axes[0][0].set_ylabel(column)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
