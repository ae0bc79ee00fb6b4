"""Warnings located at the user's line: outside skfbnn, scikit-learn and joblib.

A warning issued in ``fit`` is several frames deep in this package and, behind
scikit-learn's ``_fit_context`` or a ``Pipeline``, in scikit-learn's; a fixed ``stacklevel``
would point into one of them. :func:`warn_at_caller` skips every frame of those packages.
"""

from __future__ import annotations

import os
import sys
import warnings
from importlib.util import find_spec

__all__ = ["INTERNAL_PREFIXES", "warn_at_caller"]


def _package_dir(name: str) -> str | None:
    spec = find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(next(iter(spec.submodule_search_locations)), "")


INTERNAL_PREFIXES: tuple[str, ...] = tuple(
    d for d in (os.path.join(os.path.dirname(os.path.abspath(__file__)), ""),
                _package_dir("sklearn"), _package_dir("joblib")) if d)
"""The folders whose frames a warning's location skips (each ending in a separator)."""


def warn_at_caller(message: str, category: type[Warning],
                   prefixes: tuple[str, ...] = INTERNAL_PREFIXES) -> None:
    """``warnings.warn(message, category)`` located at the innermost frame outside
    ``prefixes``: the user's line that called ``fit`` (directly, through a ``Pipeline`` or
    a search), so that filters by module and the message's location point there.

    ``skip_file_prefixes`` on Python 3.12 and later; before, the same frames counted into
    ``stacklevel``.
    """
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=prefixes)
        return
    frame, level = sys._getframe(1), 2  # stacklevel 2: this function's caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            prefixes):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
