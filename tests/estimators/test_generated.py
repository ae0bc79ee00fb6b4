"""The generated estimator source equals the parameter tables.

``__init__`` and the docstrings' Parameters sections are written into the
estimator modules by ``tools/generate_estimators.py``; after changing a table
or a default, run it again (these tests fail otherwise).
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import skfbnn
from skfbnn.estimators._params import format_params

ROOT = Path(__file__).resolve().parents[2]
ESTIMATORS = [
    cls
    for cls in (getattr(skfbnn, name) for name in skfbnn.__all__)
    if isinstance(cls, type) and (getattr(cls, "_method", None) or getattr(cls, "_generic", False))
]
by_name = pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)


def _parameters_section(doc: str) -> str:
    """The Parameters section of a docstring, dedented, up to the next heading."""
    lines = inspect.cleandoc(doc).splitlines()
    start = lines.index("Parameters")
    assert set(lines[start + 1]) == {"-"}
    stop = next(
        (i for i in range(start + 2, len(lines) - 1)
         if lines[i] and lines[i + 1] and set(lines[i + 1]) == {"-"}),
        len(lines),
    )
    return "\n".join(lines[start:stop]).rstrip()


def test_every_estimator_is_covered():
    # the ten named method estimators, as regressor and classifier, and the two generic ones
    assert len(ESTIMATORS) >= 14


@by_name
def test_signature_equals_table(cls):
    table = cls._declared_params()
    parameters = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in parameters] == [p.name for p in table]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters)
    for p, declared in zip(parameters, table, strict=True):
        assert p.default == declared.default and type(p.default) is type(declared.default), p.name


@by_name
def test_parameter_constraints_equal_table(cls):
    table = cls._declared_params()
    assert list(cls._parameter_constraints) == [p.name for p in table]
    assert cls._parameter_constraints == {p.name: p.constraints for p in table}


@by_name
def test_docstring_parameters_equal_table(cls):
    expected = inspect.cleandoc(format_params(cls._declared_params()))
    assert _parameters_section(cls.__doc__) == expected
    assert "{parameters}" not in cls.__doc__


@by_name
def test_init_is_written_in_the_module(cls):
    assert "__init__" in cls.__dict__
    init = cls.__init__
    assert init.__module__ == cls.__module__
    assert inspect.getsourcefile(init) == inspect.getsourcefile(cls)
    source = inspect.getsource(init)
    for p in cls._declared_params():
        assert f"self.{p.name} = {p.name}\n" in source, p.name


def test_generated_source_is_current():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "generate_estimators.py"), "--check"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
