"""Write the estimators' explicit ``__init__`` and docstring Parameters sections.

The parameter tables (``skfbnn/estimators/_params.py``, the method modules'
``HYPER``, the families' tables) stay the single source; this script writes,
into the source of every public estimator class of :data:`MODULES`:

* the docstring's Parameters section: a ``{parameters}`` placeholder line, or
  the lines from the ``Parameters`` / ``----------`` heading up to the next
  numpydoc heading (or the closing quotes), trailing blank lines excluded, are
  replaced by ``format_params(cls._declared_params())``;
* an ``__init__`` storing its keyword-only arguments, between the :data:`BEGIN`
  and :data:`END` comment lines (appended to the class body the first time).

Both regions are found again on the next run and replaced whole, so running
twice changes nothing. ``--check`` writes nothing, names the classes whose
source is stale, and exits 1 if there are any.

Usage: ``python tools/generate_estimators.py [--check]``
"""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skfbnn.estimators._params import Param, format_params  # noqa: E402

MODULES = ["_sgld", "_sghmc", "_fsgld", "_fsghmc", "_variational", "_ensemble",
           "_pcn", "_pcnl", "_mala", "_fbnn", "_ifbnn", "_ifbde", "_generic"]
BEGIN = "# BEGIN GENERATED __init__ (tools/generate_estimators.py)"
END = "# END GENERATED __init__"
INDENT = "    "


def estimators(module_name: str) -> list[type]:
    """The public estimator classes of ``skfbnn.estimators.<module_name>``."""
    module = importlib.import_module(f"skfbnn.estimators.{module_name}")
    classes = [getattr(module, name) for name in module.__all__]
    return [c for c in classes if "_method" in c.__dict__ or "_generic" in c.__dict__]


def literal(value: Any) -> str:
    """``repr(value)``, checked to evaluate back to an equal value of the same type."""
    text = repr(value)
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"default {text} is not a Python literal") from exc
    if back != value or type(back) is not type(value):
        raise ValueError(f"default {text} does not round-trip through repr")
    return text


def init_lines(params: list[Param]) -> list[str]:
    """The marked ``__init__`` method, indented for a class body."""
    return [
        INDENT + BEGIN,
        f"{INDENT}def __init__(",
        f"{INDENT * 2}self,",
        f"{INDENT * 2}*,",
        *(f"{INDENT * 2}{p.name}={literal(p.default)}," for p in params),
        f"{INDENT}) -> None:",
        *(f"{INDENT * 2}self.{p.name} = {p.name}" for p in params),
        INDENT + END,
    ]


def _is_heading(lines: list[str], i: int) -> bool:
    under = lines[i + 1].strip()
    return bool(lines[i].strip()) and len(under) >= 3 and set(under) == {"-"}


def parameters_span(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """Lines ``[start, stop)`` of the Parameters section in docstring lines ``first..last``."""
    for i in range(first, last + 1):
        if lines[i].strip() == "{parameters}":
            return i, i + 1
        if lines[i].strip() == "Parameters" and i < last and _is_heading(lines, i):
            stop = next((j for j in range(i + 2, last) if _is_heading(lines, j)), last)
            while not lines[stop - 1].strip():
                stop -= 1
            return i, stop
    raise ValueError("no '{parameters}' placeholder or Parameters section in the docstring")


def rewrite_class(source: str, cls: type) -> str:
    """``source`` with the generated parts of class ``cls`` brought up to date."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    params = cls._declared_params()
    lines = source.split("\n")
    # The __init__ lies below the docstring: replace it first, so the
    # docstring's line numbers stay valid.
    marked = [i for i in range(node.lineno, node.end_lineno) if lines[i].strip() == BEGIN]
    if marked:
        stop = next(i for i in range(marked[0], len(lines)) if lines[i].strip() == END)
        lines[marked[0] : stop + 1] = init_lines(params)
    else:
        lines[node.end_lineno : node.end_lineno] = ["", *init_lines(params)]
    doc = node.body[0]
    if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)):
        raise ValueError(f"{cls.__name__} has no docstring")
    start, stop = parameters_span(lines, doc.lineno - 1, doc.end_lineno - 1)
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    lines[start:stop] = (indent + format_params(params, indent)).split("\n")
    return "\n".join(lines)


def generate(check: bool) -> list[str]:
    """Rewrite the estimator modules (unless ``check``); return the stale classes."""
    stale = []
    for name in MODULES:
        path = ROOT / "skfbnn" / "estimators" / f"{name}.py"
        old = text = path.read_text()
        for cls in estimators(name):
            new = rewrite_class(text, cls)
            if new != text:
                stale.append(f"{path.relative_to(ROOT)}: {cls.__name__}")
            text = new
        if text != old and not check:
            path.write_text(text)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if any generated source is stale")
    args = parser.parse_args(argv)
    stale = generate(args.check)
    if args.check and stale:
        print("Stale generated estimator source (run python tools/generate_estimators.py):")
        print("\n".join(f"  {s}" for s in stale))
        return 1
    print("\n".join(f"rewrote {s}" for s in stale) if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
