"""Mean +- standard error tables (markdown) and plots from benchmark records."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .records import (  # noqa: F401  (the record files' functions, importable from here too)
    DETAIL_KINDS,
    append_record,
    append_records,
    detail_path,
    read_records,
    split_record_files,
)
from .tables import (  # noqa: F401  (importable from here too)
    format_cell,
    format_summary,
    plain_value,
    summarize,
)

__all__ = ["read_records", "append_record", "summarize_records", "markdown_table", "plot_records",
           "append_records", "detail_path", "split_record_files", "summarize", "format_summary",
           "format_cell"]

COLUMNS = ("rmse", "test_ll", "test_ll_gauss", "crps", "coverage95", "fit_time")


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


TWINS = (("fsgld", "sgld"), ("fsghmc", "sghmc"), ("fbnn", "bbb"), ("ifbnn", "bbb"),
         ("ifbde", "ensemble"))
"""Each functional method and its weight-space twin."""


def twin_table(records: Sequence[dict], metric: str, by: Sequence[str], pair: str,
               digits: int = 3) -> str:
    """Paired differences functional minus weight-space twin of ``metric``.

    Records are matched on the ``by`` columns and ``pair`` (the split or seed);
    one row per twin pair present and group: mean difference ± standard error
    over the matched pairs, and how many pairs were above zero.

    Examples
    --------
    >>> rows = [{"d": "a", "method": m, "k": k, "x": v} for m, k, v in
    ...         [("fsgld", 0, 0.9), ("sgld", 0, 0.8), ("fsgld", 1, 0.5), ("sgld", 1, 0.8)]]
    >>> print(twin_table(rows, "x", ["d"], "k"))
    | d | functional | weight-space | pairs | x difference | above zero |
    |---|---|---|---|---|---|
    | a | fsgld | sgld | 2 | -0.100 ± 0.200 | 1 of 2 |
    """
    index = {}
    for r in records:
        value = r.get(metric, np.nan)
        index[(*[r[c] for c in by], r["method"], r[pair])] = value
    groups = sorted({tuple(r[c] for c in by) for r in records}, key=lambda g: tuple(map(str, g)))
    lines = ["| " + " | ".join([*by, "functional", "weight-space", "pairs",
                                f"{metric} difference", "above zero"]) + " |",
             "|" + "---|" * (len(by) + 5)]
    for g in groups:
        for f, w in TWINS:
            diffs = []
            for key, value in index.items():
                if key[:-2] == g and key[-2] == f:
                    other = index.get((*g, w, key[-1]))
                    if other is not None and np.isfinite(value) and np.isfinite(other):
                        diffs.append(value - other)
            if not diffs:
                continue
            d = np.array(diffs)
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
            lines.append("| " + " | ".join([*map(plain_value, g), f, w, str(len(d)),
                                            format_cell(d.mean(), se, digits),
                                            f"{int(np.sum(d > 0))} of {len(d)}"]) + " |")
    return "\n".join(lines)


def task_of(records: Sequence[dict]) -> str:
    """The task of a list of records (``regression`` when they have no ``task`` column)."""
    tasks = {r.get("task", "regression") for r in records}
    if len(tasks) > 1:
        raise ValueError(f"records must come from one task. Got {sorted(tasks)}.")
    return tasks.pop() if tasks else "regression"


def task_summary(task: str, records: Sequence[dict], order: Sequence[str] = ()) -> str:
    """The Markdown summary of a task's records (the regression table as ``skfbnn bench``
    has always printed it; the other tasks add the functional-vs-weight-space table).

    Records made with different settings (:data:`skfbnn.bench.settings.SETTINGS`) are
    never pooled: each setting gets its own tables, under a line naming it, and a
    method run with several sets of ``--set`` overrides gets a row for each.
    """
    from .settings import label_params, setting_groups

    records = label_params(records)
    groups = setting_groups(task, records)
    if len(groups) == 1:
        return _one_summary(task, records, order)
    return "\n\n".join(f"Records with {label}:\n\n{_one_summary(task, rows, order)}"
                       for label, rows in groups)


def check_one_setting(task: str, records: Sequence[dict]) -> None:
    """Raise ValueError when the records come from more than one setting (a figure would
    pool them)."""
    from .settings import mixed_settings

    mixed = mixed_settings(task, records)
    if mixed:
        raise ValueError(f"the records come from several settings ({'; '.join(mixed)}); a "
                         "figure would pool them. Choose one with --where KEY=VALUE.")


def _one_summary(task: str, records: Sequence[dict], order: Sequence[str] = ()) -> str:
    if task == "regression":
        return markdown_table(summarize_records(list(records)))
    if task == "classification":
        from .classification import summary_markdown

        clean = [r for r in records if r["shift"] == "none"]
        parts = [summary_markdown(records, order)]
        for metric in ("auroc_entropy", "auroc_mi", "log_loss"):
            table = twin_table(clean, metric, ("dataset",), "split")
            if table.count("\n") > 1:
                parts.append(table)
        return "\n\n".join(parts)
    if task == "bandit":
        from .bandit import summary_markdown

        parts = [summary_markdown(records, order)]
        table = twin_table(records, "regret", ("p", "horizon", "warm_start"), "seed", digits=1)
        if table.count("\n") > 1:
            parts.append(table)
        return "\n\n".join(parts)
    raise ValueError(f"task must be regression, classification or bandit. Got {task!r}.")


def write_report(stem: Path, task: str, records: Sequence[dict],
                 details: dict[str, list[dict]] | None = None,
                 order: Sequence[str] = (), column: str = "test_ll") -> list[Path]:
    """``<stem>.md`` (the summary) and, with matplotlib installed, the task's figures
    ``<stem>_*.png``; returns the paths written."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    md = stem.with_name(stem.name + ".md")
    md.write_text(task_summary(task, records, order) + "\n")
    written = [md]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return written
    from . import plots

    check_one_setting(task, records)
    details = details or {}
    if task == "regression":
        path = stem.with_name(f"{stem.name}_{column}.png")
        plot_records(summarize_records(list(records)), path, column=column)
        written.append(path)
    elif task == "classification":
        written += plots.reliability_diagrams(details.get("bins", []), stem, order)
        written += plots.uncertainty_histograms(details.get("bins", []), stem, order)
        written += plots.shift_curves(records, stem, order)
    elif task == "bandit":
        written += plots.regret_curves(details.get("curves", []), stem, order)
    return written
