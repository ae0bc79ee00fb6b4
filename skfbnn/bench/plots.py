"""Figures of the benchmark tasks (matplotlib, the ``plot`` extra), drawn from records.

Each function writes one PNG per data set (or per bandit setting) next to the
tables, ``<stem>_<figure>_<name>.png``, and returns the paths.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["reliability_diagrams", "uncertainty_histograms", "shift_curves", "regret_curves"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _ordered(methods, order: Sequence[str]) -> list[str]:
    order = list(order)
    return sorted(set(methods), key=lambda m: (order.index(m) if m in order else len(order), m))


def _grid(n: int, plt, size=(2.4, 2.2)):
    cols = min(n, 4)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(size[0] * cols, size[1] * rows),
                             squeeze=False, sharex=True, sharey=True)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def _pooled(bins: Sequence[dict], kind: str) -> dict[tuple[str, str], dict[int, list[float]]]:
    """``{(dataset, method): {bin: [lo, hi, count, sum count*acc, sum count*conf]}}``,
    summed over splits."""
    out: dict = defaultdict(dict)
    for r in bins:
        if r["kind"] != kind:
            continue
        cell = out[(r["dataset"], r["method"])].setdefault(
            int(r["bin"]), [r["lo"], r["hi"], 0.0, 0.0, 0.0])
        count = float(r["count"])
        cell[2] += count
        if count:
            cell[3] += count * float(r["accuracy"]) if np.isfinite(r["accuracy"]) else 0.0
            cell[4] += count * float(r["confidence"]) if np.isfinite(r["confidence"]) else 0.0
    return out


def reliability_diagrams(bins: Sequence[dict], stem: Path, order: Sequence[str] = ()
                         ) -> list[Path]:
    """Accuracy against confidence in the 15 ECE bins, pooled over splits, a panel per
    method, one figure per data set (in-distribution test rows)."""
    plt = _plt()
    pooled = _pooled(bins, "reliability")
    paths = []
    for dataset in sorted({d for d, _ in pooled}):
        methods = _ordered([m for d, m in pooled if d == dataset], order)
        fig, axes = _grid(len(methods), plt)
        for ax, method in zip(axes, methods, strict=False):
            cells = pooled[(dataset, method)]
            lo = np.array([cells[b][0] for b in sorted(cells)])
            hi = np.array([cells[b][1] for b in sorted(cells)])
            n = np.array([cells[b][2] for b in sorted(cells)])
            acc = np.divide([cells[b][3] for b in sorted(cells)], n,
                            out=np.full(len(n), np.nan), where=n > 0)
            ax.bar(lo, np.nan_to_num(acc), width=hi - lo, align="edge", alpha=0.7,
                   edgecolor="k", linewidth=0.4)
            ax.plot([0, 1], [0, 1], "k--", linewidth=0.8)
            ax.set_title(method, fontsize=9)
        for ax in axes[: len(methods)]:
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
        fig.supxlabel("confidence (15 bins)", fontsize=9)
        fig.supylabel("accuracy", fontsize=9)
        fig.suptitle(f"reliability, {dataset} (in-distribution test rows)", fontsize=10)
        fig.tight_layout()
        path = stem.with_name(f"{stem.name}_reliability_{dataset}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def uncertainty_histograms(bins: Sequence[dict], stem: Path, order: Sequence[str] = ()
                           ) -> list[Path]:
    """Histograms of the predictive entropy (and of the mutual information where there
    is one) on in-distribution and OOD rows, a panel per method, per data set."""
    plt = _plt()
    paths = []
    for score in ("entropy", "mi"):
        inside, outside = _pooled(bins, f"{score}_in"), _pooled(bins, f"{score}_out")
        for dataset in sorted({d for d, _ in outside}):
            methods = _ordered([m for d, m in outside if d == dataset and (d, m) in inside],
                               order)
            if not methods:
                continue
            fig, axes = _grid(len(methods), plt)
            for ax, method in zip(axes, methods, strict=False):
                for pool, label, color in ((inside, "in", "C0"), (outside, "out", "C3")):
                    cells = pool[(dataset, method)]
                    edges = [cells[b][0] for b in sorted(cells)] + [cells[max(cells)][1]]
                    counts = np.array([cells[b][2] for b in sorted(cells)])
                    density = counts / max(counts.sum(), 1) / np.diff(edges)
                    ax.stairs(density, edges, label=label, color=color, fill=True, alpha=0.35)
                ax.set_title(method, fontsize=9)
            axes[0].legend(fontsize=7)
            name = "predictive entropy" if score == "entropy" else "mutual information"
            fig.supxlabel(f"{name} (nats)", fontsize=9)
            fig.supylabel("density", fontsize=9)
            fig.suptitle(f"{name}, {dataset}: in-distribution vs OOD", fontsize=10)
            fig.tight_layout()
            path = stem.with_name(f"{stem.name}_{score}_{dataset}.png")
            fig.savefig(path, dpi=110)
            plt.close(fig)
            paths.append(path)
    return paths


def shift_curves(records: Sequence[dict], stem: Path, order: Sequence[str] = ()) -> list[Path]:
    """Accuracy and ECE against the strength of the Gaussian-noise and shuffle shifts
    (strength 0: the clean rows), mean ± standard error over splits, per data set."""
    plt = _plt()
    paths = []
    for dataset in sorted({r["dataset"] for r in records if r["shift"] != "none"}):
        rows = [r for r in records if r["dataset"] == dataset]
        methods = _ordered([r["method"] for r in rows], order)
        kinds = [k for k in ("noise", "shuffle") if any(r["shift"] == k for r in rows)]
        fig, axes = plt.subplots(2, len(kinds), figsize=(4.2 * len(kinds), 6.2), squeeze=False)
        for j, kind in enumerate(kinds):
            for i, metric in enumerate(("accuracy", "ece")):
                ax = axes[i][j]
                for method in methods:
                    by = defaultdict(list)
                    for r in rows:
                        if r["method"] == method and r["shift"] in ("none", kind):
                            by[float(r["strength"])].append(float(r[metric]))
                    x = np.array(sorted(by))
                    mean = np.array([np.mean(by[s]) for s in x])
                    se = np.array([np.std(by[s], ddof=1) / np.sqrt(len(by[s]))
                                   if len(by[s]) > 1 else 0.0 for s in x])
                    ax.errorbar(x, mean, yerr=se, marker="o", markersize=3, capsize=2,
                                label=method, linewidth=1)
                ax.set_xlabel(f"{kind} strength", fontsize=9)
                ax.set_ylabel(metric, fontsize=9)
        axes[0][-1].legend(fontsize=7, ncol=2)
        fig.suptitle(f"{dataset}: accuracy and ECE under shift", fontsize=10)
        fig.tight_layout()
        path = stem.with_name(f"{stem.name}_shift_{dataset}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def regret_curves(curves: Sequence[dict], stem: Path, order: Sequence[str] = ()) -> list[Path]:
    """Cumulative regret against steps, mean ± standard error over seeds, one line per
    method (and warm-start setting), one figure per (p, horizon)."""
    plt = _plt()
    paths = []
    settings = sorted({(float(r["p"]), int(r["horizon"])) for r in curves})
    for p, horizon in settings:
        rows = [r for r in curves if float(r["p"]) == p and int(r["horizon"]) == horizon]
        labels = defaultdict(lambda: defaultdict(list))
        for r in rows:
            label = r["method"] if r["warm_start"] in ("n/a", "off") else (
                f"{r['method']} (warm)")
            labels[label][int(r["step"])].append(float(r["regret"]))
        fig, ax = plt.subplots(figsize=(8.0, 5.0))
        # One colour per method (20 distinct ones), the warm-started run of a method in its
        # colour with a dashed line and hollow markers: no two series look alike.
        ordered = _ordered(labels, order)
        methods = list(dict.fromkeys(label.removesuffix(" (warm)") for label in ordered))
        palette = plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")
        markers = "osD^v<>phX*"
        for label in ordered:
            steps = np.array(sorted(labels[label]))
            values = [labels[label][s] for s in steps]
            mean = np.array([np.mean(v) for v in values])
            se = np.array([np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
                           for v in values])
            k = methods.index(label.removesuffix(" (warm)"))
            warm = label.endswith(" (warm)")
            color = palette(k % palette.N)
            ax.plot(steps, mean, label=label, linewidth=1.6, color=color,
                    linestyle="--" if warm else "-", marker=markers[k % len(markers)],
                    markersize=5, markevery=max(1, len(steps) // 6),
                    markerfacecolor="none" if warm else color)
            ax.fill_between(steps, mean - se, mean + se, color=color, alpha=0.12)
        ax.set_xlabel("step", fontsize=11)
        ax.set_ylabel("cumulative regret", fontsize=11)
        ax.set_title(f"Mushroom bandit, p = {p:g}", fontsize=12)
        ax.legend(fontsize=9, ncol=2, loc="upper left")
        fig.tight_layout()
        path = stem.with_name(f"{stem.name}_regret_p{p:g}_h{horizon}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
