"""Tables of the Mushroom bandit's records: cumulative regret, regret relative to the
uniform policy, and warm-started updates against refits from scratch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .tables import format_cell, format_summary, summarize

__all__ = ["relative_to_uniform", "summary_markdown", "warm_start_table"]


def relative_to_uniform(records: Sequence[dict]) -> list[dict]:
    """Records with ``relative_regret``: 100 x regret / the uniform policy's regret of
    the same seed, p and horizon (NaN without a uniform run)."""
    uniform = {(r["p"], r["horizon"], r["seed"]): r["regret"] for r in records
               if r["method"] == "uniform"}
    out = []
    for r in records:
        base = uniform.get((r["p"], r["horizon"], r["seed"]))
        rel = 100.0 * r["regret"] / base if base else np.nan
        out.append({**r, "relative_regret": rel})
    return out


def summary_markdown(records: Sequence[dict], order: Sequence[str] = ()) -> str:
    """Cumulative regret (realised and expected), regret relative to uniform (%) and fit
    time per (p, horizon, method, warm start); mean ± standard error over seeds."""

    rows = relative_to_uniform(records)
    columns = ("regret", "expected_regret", "relative_regret", "poisonous_eaten", "fit_time")
    by = ("p", "horizon", "warm_start", "method")
    table = format_summary(summarize(rows, by, columns), by, columns, count="seeds",
                           digits=1, order=order)
    warm = warm_start_table(records)
    return table if warm is None else f"{table}\n\n{warm}"


def warm_start_table(records: Sequence[dict]) -> str | None:
    """Paired differences warm-started minus refitted from scratch, per method with both
    (regret and fit time, matched on p, horizon and seed); None without such pairs.

    Examples
    --------
    >>> rows = [{"p": 0.5, "horizon": 8, "seed": s, "method": "sgld", "warm_start": w,
    ...          "regret": r, "fit_time": t}
    ...         for s, w, r, t in [(0, "on", 10.0, 1.0), (0, "off", 12.0, 3.0),
    ...                            (1, "on", 9.0, 1.0), (1, "off", 13.0, 4.0)]]
    >>> print(warm_start_table(rows))
    | p | horizon | method | pairs | regret, warm - scratch | fit_time, warm - scratch |
    |---|---|---|---|---|---|
    | 0.5 | 8 | sgld | 2 | -3.0 ± 1.0 | -2.5 ± 0.5 |
    """

    index = {(r["p"], r["horizon"], r["method"], r["seed"], r["warm_start"]): r
             for r in records}
    groups: dict[tuple, list[tuple[dict, dict]]] = {}
    for (p, h, m, seed, w), r in index.items():
        other = index.get((p, h, m, seed, "off"))
        if w == "on" and other is not None:
            groups.setdefault((p, h, m), []).append((r, other))
    if not groups:
        return None
    lines = ["| p | horizon | method | pairs | regret, warm - scratch | "
             "fit_time, warm - scratch |", "|" + "---|" * 6]
    for (p, h, m), pairs in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        cells = []
        for col in ("regret", "fit_time"):
            d = np.array([a[col] - b[col] for a, b in pairs], dtype=float)
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
            cells.append(format_cell(d.mean(), se, digits=1))
        lines.append(f"| {p:g} | {int(h)} | {m} | {len(pairs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
