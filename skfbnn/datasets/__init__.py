"""Benchmark datasets: synthetic 1-D problems, the UCI regression splits, MNIST-1D and
Mushroom (local folders only; nothing is downloaded)."""

from __future__ import annotations

from skfbnn.datasets.mnist1d import load_mnist1d
from skfbnn.datasets.mushroom import MUSHROOM_FEATURES, load_mushroom
from skfbnn.datasets.synthetic import make_oscillation, oscillation_function
from skfbnn.datasets.uci import (
    UCI_ALIASES,
    UCI_DATASETS,
    UCISplits,
    load_uci,
    load_uci_split,
    resolve_data_home,
)

__all__ = [
    "oscillation_function",
    "make_oscillation",
    "UCI_DATASETS",
    "UCI_ALIASES",
    "resolve_data_home",
    "load_uci",
    "load_uci_split",
    "UCISplits",
    "load_mnist1d",
    "load_mushroom",
    "MUSHROOM_FEATURES",
]
