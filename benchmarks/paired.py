"""Two sets of ``skfbnn bench`` records, paired by data set and split.

Each side is ``LABEL=GLOB:METHOD`` (record files and the method whose rows to take). Prints
one markdown row per data set with both sides' test log-likelihood, RMSE and 95% coverage
(mean over the splits both sides have) and the paired difference of test log-likelihood,
``b - a``: mean ± standard error, its z and on how many splits ``b`` is ahead.

A side may list replicates of the same grid run with other seeds (``skfbnn bench --seed``),
joined by ``+``: the ``r``-th of one side is paired with the ``r``-th of the other. The
replicates of one split share its data, so their differences are not independent: each
split's differences are averaged over its replicates first, and the standard error, z and
``ahead`` are over splits (``pairs`` counts the pairs, ``splits`` the splits). Without
replicates the two are the same. ``per seed`` is each replicate's mean difference, and
``--plot FILE`` draws the differences with two standard errors and those means.

Usage: python benchmarks/paired.py \
           "deep ensemble=benchmarks/results/uci/ensemble.csv:ensemble" \
           "ifBDE=benchmarks/results/uci/ifbde.csv:ifbde" [--plot diff.png]
The seeds experiment (seeds 0 and 1000 of both ensembles): the second command at the top of
``benchmarks/results/seeds/comparison.md``.
"""

from __future__ import annotations

import argparse
import glob

import numpy as np

from skfbnn.bench.report import read_records


def load(spec: str) -> tuple[str, dict]:
    """``{(dataset, split, replicate): record}`` of ``LABEL=GLOB:METHOD[+GLOB:METHOD...]``
    (the ``r``-th ``GLOB:METHOD`` is replicate ``r``)."""
    label, _, rest = spec.partition("=")
    out = {}
    for replicate, part in enumerate(rest.split("+")):
        pattern, _, method = part.rpartition(":")
        for r in read_records(sorted(glob.glob(pattern))):
            if r["method"] == method:
                out[r["dataset"], int(r["split"]), replicate] = r
    return label, out


def group_means(diffs: dict, level: int) -> np.ndarray:
    """Means of ``diffs`` (keyed ``(dataset, split, replicate)``) grouped by key entry
    ``level`` (1: per split, over its replicates; 2: per replicate, over its splits), in
    order of that entry.

    Examples
    --------
    >>> d = {("d", 0, 0): 1.0, ("d", 0, 1): 3.0, ("d", 1, 0): -1.0}
    >>> group_means(d, 1), group_means(d, 2)
    (array([ 2., -1.]), array([0., 3.]))
    """
    groups = sorted({k[level] for k in diffs})
    return np.array([np.mean([v for k, v in diffs.items() if k[level] == g]) for g in groups])


def plot(rows: list[tuple], name_a: str, name_b: str, path: str) -> None:
    """A forest plot of ``rows`` ``(dataset, mean, se, per-replicate means)``: the mean
    difference with two standard errors, and each replicate's mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(rows) + 1.2))
    for i, (_, mean, se, reps) in enumerate(rows):
        y = len(rows) - 1 - i
        ax.errorbar(mean, y, xerr=2 * se, fmt="o", color="black", capsize=3,
                    label="mean over splits, ± 2 s.e." if i == 0 else None)
        if len(reps) > 1:
            ax.plot(reps, [y + 0.22] * len(reps), "|", color="tab:blue", markersize=9,
                    label="each seed's mean" if i == 0 else None)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows][::-1])
    ax.set_xlabel(f"test log-likelihood, {name_b} − {name_a} (nats per test row)")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--plot", help="also draw the differences into this image file")
    args = parser.parse_args()
    (name_a, a), (name_b, b) = load(args.a), load(args.b)
    print(f"| data set | pairs | splits | {name_a}: LL, RMSE, cov95 | "
          f"{name_b}: LL, RMSE, cov95 | {name_b} − {name_a} (LL) | z | splits ahead | "
          f"per seed |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for dataset in sorted({k[0] for k in a} & {k[0] for k in b}):
        keys = sorted(k for k in a.keys() & b.keys() if k[0] == dataset)
        cells = []
        for side in (a, b):
            records = [side[k] for k in keys]
            cells.append(f"{np.mean([r['test_ll'] for r in records]):.3f}, "
                         f"{np.mean([r['rmse'] for r in records]):.3g}, "
                         f"{np.mean([r['coverage95'] for r in records]):.3f}")
        diffs = {k: b[k]["test_ll"] - a[k]["test_ll"] for k in keys}
        diff, reps = group_means(diffs, 1), group_means(diffs, 2)
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan
        z = diff.mean() / se if se > 0 else np.nan
        rows.append((dataset, diff.mean(), se, reps))
        print(f"| {dataset} | {len(keys)} | {len(diff)} | {cells[0]} | {cells[1]} | "
              f"{diff.mean():+.3f} ± {se:.3f} | {z:+.1f} | {int((diff > 0).sum())} | "
              f"{', '.join(f'{r:+.3f}' for r in reps)} |")
    if args.plot:
        plot(rows, name_a, name_b, args.plot)


if __name__ == "__main__":
    main()
