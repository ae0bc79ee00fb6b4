"""The options of ``skfbnn bench``: parsed and checked before anything is loaded or
fitted, each bad value a :class:`UsageError` whose message names the option."""

from __future__ import annotations

import argparse
import ast
import difflib
import math
from collections.abc import Sequence
from pathlib import Path

__all__ = ["UsageError", "parse_set", "check_bench_args", "check_scheduler", "methods_of",
           "datasets_of", "floats_of", "ints_of", "split_list", "DEFAULT_METHODS",
           "TASK_METHODS", "TASK_DATASETS"]


DEFAULT_METHODS = ("sgld", "fsgld", "sghmc", "fsghmc", "bbb", "ensemble")
"""What ``skfbnn bench`` compares by default: one of each family and prior."""

TASK_METHODS = {
    "regression": DEFAULT_METHODS,
    "csv": DEFAULT_METHODS,
    "classification": ("sgld", "fsgld", "sghmc", "fsghmc", "bbb", "fbnn", "ifbnn", "ensemble",
                       "ifbde", "mlp", "mlp_ensemble"),
    "bandit": ("uniform", "greedy", "oracle", "sgld", "fsgld", "bbb", "fbnn", "ifbnn",
               "ensemble", "ifbde"),
}
"""Default ``--methods`` of each task: the functional methods beside their weight-space
twins, and the plain baselines."""
TASK_DATASETS = {"regression": "diabetes", "classification": "mnist1d,digits",
                 "bandit": "mushroom", "csv": ""}



class UsageError(Exception):
    """A bad option or input: printed as one line, exit status 2."""


def parse_set(items: Sequence[str]) -> dict:
    """``key=value`` pairs of ``--set``, the values read as Python literals where they are one."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set expects key=value, got {item!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            params[key] = value
    return params


def split_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _probabilities(value: str | float) -> list[float]:
    """``--p``: one probability or several, comma-separated, each in [0, 1], no repeats.

    Examples
    --------
    >>> _probabilities("0.4, 0.5,0.6"), _probabilities(0.5)
    ([0.4, 0.5, 0.6], [0.5])
    """
    items = split_list(value) if isinstance(value, str) else [value]
    out = []
    for item in items:
        try:
            p = float(item)
        except ValueError:
            p = float("nan")
        if not 0 <= p <= 1:
            raise UsageError(f"--p must lie in [0, 1]. Got {item}.")
        out.append(p)
    if not out:
        raise UsageError(f"--p must lie in [0, 1]. Got {value!r}.")
    if len(set(out)) != len(out):
        raise UsageError(f"--p lists a probability twice. Got {value}.")
    return out


def _unknown(option: str, name: str, valid: Sequence[str]) -> UsageError:
    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else "."
    return UsageError(f"{option}: unknown name {name!r}{hint} Valid: {', '.join(valid)}.")


TASK_BASELINES = {"classification": ("mlp", "mlp_ensemble", "cnn_ensemble"),
                  "bandit": ("uniform", "greedy", "oracle")}


CNN_ONLY = ("cnn_ensemble",)
"""Baselines that need ``--network cnn``."""


def methods_of(value: str | None, task: str, network: str | None = None) -> list[str]:
    """The ``--methods`` of ``task``: the defaults (with ``--network cnn``, and the plain CNN
    ensemble), or the names given, ``all`` expanding to every method and baseline."""
    from ..inference.registry import METHODS

    cnn = task == "classification" and network == "cnn"
    if value is None:
        return [*TASK_METHODS[task], *(CNN_ONLY if cnn else ())]
    extra = [m for m in TASK_BASELINES.get(task, ()) if cnn or m not in CNN_ONLY]
    valid = [*METHODS, *extra]
    methods = []
    for name in split_list(value):
        if name == "all":
            methods += valid
        elif name in valid:
            methods.append(name)
        elif name in CNN_ONLY and task == "classification":
            raise UsageError(f"--methods {name}: a baseline of --network cnn only.")
        else:
            raise _unknown("--methods", name, [*valid, "all"])
    if not methods:
        raise UsageError(f"--methods names no method (got {value!r}); see `skfbnn methods`.")
    return list(dict.fromkeys(methods))


def datasets_of(value: str | None, task: str, data_home: str | None) -> list[str]:
    from ..datasets import UCI_DATASETS
    from ..datasets.uci import UCI_ALIASES

    names = []
    for name in split_list(value) or split_list(TASK_DATASETS[task]):
        names += list(UCI_DATASETS) if name == "uci" and task == "regression" else [name]
    if not names:
        raise UsageError(f"--dataset names no data set (got {value!r}).")
    valid = {"regression": ["diabetes", "uci", *UCI_DATASETS, *UCI_ALIASES],
             "classification": ["mnist1d", "digits"], "bandit": ["mushroom"]}[task]
    for name in names:
        if name not in valid and not (task == "regression" and _uci_folder(name, data_home)):
            raise _unknown("--dataset", name, valid)
    return list(dict.fromkeys(names))


def _uci_folder(name: str, data_home: str | None) -> bool:
    """Whether the data folder holds a data set of this name in the UCI format."""
    from ..datasets import resolve_data_home

    try:
        home = resolve_data_home(data_home)
    except ValueError:
        return False
    return Path(name).name == name and any(
        (folder / "data.txt").is_file() for folder in (home / name, home / "uci" / name))


def floats_of(value: str, name: str) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in split_list(value))
    except ValueError:
        raise UsageError(f"{name} expects comma-separated numbers, got {value!r}") from None
    if not all(math.isfinite(v) for v in out):
        raise UsageError(f"{name} expects finite numbers, got {value!r}")
    return out


def ints_of(value: str, name: str) -> list[int]:
    try:
        return [int(v) for v in split_list(value)]
    except ValueError:
        raise UsageError(f"{name} expects comma-separated integers, got {value!r}") from None


def check_bench_args(args: argparse.Namespace) -> None:
    """Refuse a bad ``bench`` option before anything is loaded or fitted."""
    task = args.task
    n = args.n_splits
    what = "--n-seeds" if task == "bandit" else "--n-splits"
    if n is not None and n < 1:
        raise UsageError(f"{what} must be a positive int. Got {n}.")
    kfold = task == "csv" or (task == "regression" and "diabetes" in (
        split_list(args.dataset) or ["diabetes"]))
    if n == 1 and kfold:
        raise UsageError("--n-splits must be at least 2 for k-fold cross-validation "
                         "(diabetes and CSV files). Got 1.")
    if args.seed < 0:
        raise UsageError(f"--seed must be a non-negative int. Got {args.seed}.")
    if not (args.n_jobs >= 1 or args.n_jobs == -1):
        raise UsageError(f"--n-jobs must be a positive int or -1. Got {args.n_jobs}.")
    if args.threads < 1:
        raise UsageError(f"--threads must be a positive int. Got {args.threads}.")
    for option in ("horizon", "buffer_size", "update_every", "curve_every"):
        if getattr(args, option) < 1:
            raise UsageError(f"--{option.replace('_', '-')} must be a positive int. Got "
                             f"{getattr(args, option)}.")
    args.p = _probabilities(args.p)
    if task != "csv":
        for option in ("data", "target"):
            if getattr(args, option) is not None:
                raise UsageError(
                    f"--{option} is read by --task csv only (--task {task} would ignore it); "
                    "use --task csv --data FILE --target COLUMN [--target-kind "
                    "classification].")
    elif args.dataset is not None:
        raise UsageError("--task csv reads --data FILE; --dataset would be ignored.")
    if task != "classification" and getattr(args, "network", None) is not None:
        raise UsageError(f"--network is read by --task classification only (--task {task} "
                         "would ignore it).")
    _check_device(args.device)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)


def _check_device(device: str) -> None:
    from ..device import resolve_device

    try:
        resolve_device(device)
    except (ValueError, RuntimeError) as exc:
        raise UsageError(f"--device: {exc}") from None


def check_scheduler(address: str, timeout: float = 3.0) -> None:
    """Refuse a ``--scheduler`` that is neither ``local`` nor a reachable address, within
    ``timeout`` seconds (instead of Dask's own 30)."""
    import importlib.util
    import socket
    from urllib.parse import urlsplit

    needs = UsageError("--scheduler needs dask.distributed: pip install 'skfbnn[dask]'.")
    if address == "local":
        if importlib.util.find_spec("distributed") is None:
            raise needs
        return
    url = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = url.port
    except ValueError:
        port = None
    if url.scheme not in ("tcp", "tls") or not url.hostname or port is None:
        raise UsageError(f"--scheduler must be 'local' or a scheduler address such as "
                         f"tcp://host:8786. Got {address!r}.")
    try:
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(f"--scheduler {address}: cannot reach the scheduler "
                         f"({exc.strerror or exc}).") from None
    if importlib.util.find_spec("distributed") is None:
        raise needs
