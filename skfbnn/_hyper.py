"""Hyperparameter declarations: name, default, constraints and documentation.

Method files, run families and the estimator tables declare their parameters
with :func:`param`; the estimators' signatures, ``_parameter_constraints`` and
docstrings are generated from these declarations
when the classes are created, so a parameter is stated once.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, NamedTuple

from ._validation import Interval

__all__ = ["Param", "param", "count_param", "merge", "with_default"]


class Param(NamedTuple):
    """One hyperparameter: name, default, sklearn constraints and numpydoc text."""

    name: str
    default: Any
    constraints: list
    doc: str


def param(name: str, default: Any, constraints: list, type_: str, doc: str) -> Param:
    """Declare a parameter; ``doc`` becomes its numpydoc entry."""
    return Param(name, default, constraints, f"{name} : {type_}, default={default!r}\n    {doc}")


def count_param(name: str, default: int, doc: str, low: int = 1) -> Param:
    """An integer parameter of at least ``low``.

    Examples
    --------
    >>> count_param("n_chains", 4, "Chains.").doc.splitlines()[0]
    'n_chains : int, default=4'
    """
    return param(name, default, [Interval(Integral, low, None, closed="left")], "int", doc)


def with_default(p: Param, default: Any) -> Param:
    """``p`` with another default (its numpydoc header updated to match).

    Examples
    --------
    >>> with_default(param("n", 1, [int], "int", "Count."), 2).doc.splitlines()[0]
    'n : int, default=2'
    """
    header, _, text = p.doc.partition("\n")
    head, _, _ = header.rpartition(", default=")
    return Param(p.name, default, p.constraints, f"{head}, default={default!r}\n{text}")


def merge(*tables: tuple[Param, ...] | list[Param]) -> list[Param]:
    """Concatenate tables in order; a later entry with the same name replaces an earlier one
    in place (so a method can change, e.g., the default of its prior's ``prior_std``)."""
    out: dict[str, Param] = {}
    for table in tables:
        for p in table:
            out[p.name] = p
    return list(out.values())
