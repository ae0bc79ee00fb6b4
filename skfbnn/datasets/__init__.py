"""Benchmark datasets: synthetic 1-D problems, the UCI regression splits, MNIST-1D and
Mushroom.

The ``fetch_*`` functions download a data set once from its public source (checked against
a SHA-256 recorded in the package) into the data home (:func:`get_data_home`) and load it
offline afterwards; the ``load_*`` functions read a local folder and never download.
"""

from __future__ import annotations

from skfbnn.datasets._download import ChecksumError, DownloadError, get_data_home
from skfbnn.datasets._fetch import fetch_mnist1d, fetch_mushroom, fetch_uci
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
    "get_data_home",
    "fetch_uci",
    "fetch_mnist1d",
    "fetch_mushroom",
    "DownloadError",
    "ChecksumError",
    "resolve_data_home",
    "load_uci",
    "load_uci_split",
    "UCISplits",
    "load_mnist1d",
    "load_mushroom",
    "MUSHROOM_FEATURES",
]
