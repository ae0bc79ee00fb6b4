"""The settings a record was made with, so that no two settings are ever mixed.

Every record holds, beside the columns of its cell (data set, method, split or
seed), the options that change its result: its *settings* (:data:`SETTINGS`). They
are part of the cell's key, so a rerun with another option adds new cells to the
same file instead of reusing old ones, and the tables keep them apart
(:func:`setting_groups`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

__all__ = ["SETTINGS", "SETTING_DEFAULTS", "REQUIRED", "RECORD_KEYS", "DETAIL_KEYS", "deduplicate",
           "format_params", "file_digest", "label_params",
           "setting_groups", "mixed_settings", "select_where"]

SETTINGS = {
    "regression": ("seed", "folds", "data", "params"),
    "classification": ("seed", "folds", "data", "id_classes", "shifts", "network", "params"),
    "bandit": ("buffer_size", "update_every", "curve_every", "params"),
}
"""The setting columns of each task's records. ``seed``: the base seed (split ``k``
is fitted with ``seed + k``; the bandit's seed is a cell column); ``folds``: how the
rows were split (``"5-fold"``, ``"standard"`` UCI splits, ``"protocol"``);
``data``: ``"builtin"`` or a CSV file's ``target@sha256`` prefix; ``params``: the
``--set`` overrides that apply to the method; ``id_classes``, ``shifts``: the
classification protocol's classes and shifts; ``network``: the classifiers' network
(``mlp`` or ``cnn``); the bandit's buffer and update intervals."""

SETTING_DEFAULTS = {"network": "mlp"}
"""The value of a setting column in records written before the column existed."""

REQUIRED = {
    "regression": ("dataset", "method", "rmse", "test_ll", "test_ll_gauss", "crps",
                   "coverage95", "fit_time"),
    "classification": ("dataset", "method", "split", "shift", "strength", "accuracy",
                       "log_loss", "brier", "ece", "auroc_entropy", "auroc_mi", "fit_time"),
    "bandit": ("p", "horizon", "warm_start", "method", "seed", "regret",
               "expected_regret", "poisonous_eaten", "fit_time"),
}
"""Columns every record of a task has (what ``skfbnn report`` checks a file for)."""


RECORD_KEYS = {
    "regression": ("dataset", "method", "split"),
    "classification": ("dataset", "method", "split", "shift", "strength"),
    "bandit": ("dataset", "p", "horizon", "method", "warm_start", "seed"),
}
"""Columns that, with the settings, identify one record of a task."""
DETAIL_KEYS = {"bins": ("kind", "bin"), "curves": ("step",)}
"""Columns that, with the cell's, identify one row of a side file."""


def deduplicate(task: str, records: Sequence[dict], extra: Sequence[str] = ()
                ) -> tuple[list[dict], int]:
    """The records with every repeated one (same cell, settings and ``extra`` columns, as
    files written by appending a cell twice hold) kept once, the last; and how many went.

    Examples
    --------
    >>> rows = [{"dataset": "d", "method": "m", "split": 0, "rmse": v} for v in (1.0, 2.0)]
    >>> deduplicate("regression", rows)
    ([{'dataset': 'd', 'method': 'm', 'split': 0, 'rmse': 2.0}], 1)
    """
    columns = (*RECORD_KEYS.get(task, ()), *SETTINGS.get(task, ()), *extra)
    last = {tuple(_setting(r, c) for c in columns): i for i, r in enumerate(records)}
    keep = sorted(last.values())
    return [records[i] for i in keep], len(records) - len(keep)


def format_params(params: dict) -> str:
    """The overrides of a cell as one canonical string (``"default"`` for none).

    Examples
    --------
    >>> format_params({"step_size": 0.1, "n_burnin": 20}), format_params({})
    ('n_burnin=20;step_size=0.1', 'default')
    """
    if not params:
        return "default"
    return ";".join(f"{k}={params[k]!r}" for k in sorted(params))


def file_digest(path: str | Path, n: int = 12) -> str:
    """The first ``n`` hex digits of a file's SHA-256 (a CSV file's identity in a record)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:n]


def _plain(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _setting(record: dict, column: str) -> str:
    return _plain(record.get(column, SETTING_DEFAULTS.get(column, "")))


def label_params(records: Sequence[dict]) -> list[dict]:
    """The records, a method run with several ``params`` named ``"method (params)"``.

    Methods have their own overrides (``--set METHOD.KEY=VALUE``), so ``params``
    differing between methods is one comparison; one method with two sets of
    overrides is two rows of a table.

    Examples
    --------
    >>> rows = [{"method": "sgld", "params": p} for p in ("default", "step_size=0.1")]
    >>> rows.append({"method": "bbb", "params": "n_iter=5"})
    >>> [r["method"] for r in label_params(rows)]
    ['sgld (default)', 'sgld (step_size=0.1)', 'bbb']
    """
    seen: dict[str, set] = {}
    for r in records:
        seen.setdefault(r.get("method"), set()).add(r.get("params"))
    several = {m for m, values in seen.items() if len(values) > 1}
    return [{**r, "method": f"{r['method']} ({r.get('params')})"} if r.get("method") in several
            else r for r in records]


def setting_groups(task: str, records: Sequence[dict]) -> list[tuple[str, list[dict]]]:
    """The records split by their settings other than ``params`` (:func:`label_params`):
    ``[(label, records), ...]``.

    The label names the settings that differ between the groups (``""`` when all
    records share one setting, or were written before records held settings).

    Examples
    --------
    >>> rows = [{"seed": s, "folds": "5-fold", "split": k} for s in (0, 7) for k in (0, 1)]
    >>> [(label, len(group)) for label, group in setting_groups("regression", rows)]
    [('seed=0', 2), ('seed=7', 2)]
    """
    columns = [c for c in SETTINGS.get(task, ()) if c != "params"
               and any(c in r for r in records)]
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(_setting(r, c) for c in columns), []).append(r)
    if len(groups) <= 1:
        return [("", list(records))]
    varying = [i for i, _ in enumerate(columns) if len({key[i] for key in groups}) > 1]
    return [(", ".join(f"{columns[i]}={key[i]}" for i in varying), rows)
            for key, rows in sorted(groups.items())]


def mixed_settings(task: str, records: Sequence[dict]) -> list[str]:
    """What a figure of ``records`` would pool: labels of the setting groups, and the
    methods run with several ``params`` (empty when nothing is mixed)."""
    groups = setting_groups(task, records)
    mixed = [label for label, _ in groups] if len(groups) > 1 else []
    names = {r["method"] for r in label_params(records) if "method" in r}
    mixed += sorted(m for m in names if m.endswith(")") and " (" in m)
    return mixed


def select_where(records: Sequence[dict], conditions: Sequence[str]) -> list[dict]:
    """The records whose columns have the values ``KEY=VALUE`` of every condition
    (values compared as written in a table: ``seed=7`` matches 7.0).

    Examples
    --------
    >>> rows = [{"seed": 0.0, "m": "a"}, {"seed": 7.0, "m": "b"}]
    >>> select_where(rows, ["seed=7"])
    [{'seed': 7.0, 'm': 'b'}]
    """
    wanted = []
    for item in conditions:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--where expects KEY=VALUE, got {item!r}.")
        if records and not any(key in r for r in records):
            raise ValueError(f"--where {item}: the records have no column {key!r}.")
        wanted.append((key, value))
    return [r for r in records if all(_plain(r.get(k, "")) == v for k, v in wanted)]
