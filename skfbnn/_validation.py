"""The single shim over scikit-learn's private validation API."""

from __future__ import annotations

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_fit_context",
    "validate_parameter_constraints",
]
