"""The user-facing text (README.md, docs/, examples/) reads as documentation of the product.

Three checks, on the Markdown and Python sources and on every file a page includes:

- no work-log words: the pages describe the package as it is; how it got there belongs in the
  changelog (``docs/changelog.md`` is exempt);
- no table wider than a page: a Markdown table of more than ``MAX_COLUMNS`` columns fails
  unless it sits in a ``:::{container} wide-table`` container, which scrolls sideways;
- no path into the workspace around the repository (``../shared``): a user does not have it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

MAX_COLUMNS = 9

WORK_WORDS = (
    r"\blent\b",
    r"\bsessions?\b",
    r"\bformerly\b",
    r"\bpredates?\b",
    r"\bissue #?\d+",
    r"#\d{2,}\b(?!-)",
    r"\bgoals?\b",
    r"\bearlier version\b",
    r"\bno longer\b",
    r"\bat hand\b",
    r"\bone-script-each\b",
    r"\bbusy cores\b",
    r"\bbefore the [\w -]+ (?:was|were) added\b",
    r"\bwork(?:-| )log\b",
    r"\bwas not rerun since\b",
    r"\bto rerun it since\b",
    r"\bthe old figures\b",
    r"\bthe repository's history\b",
)
"""Phrases of a work log: who did what when, rather than what the package does."""

EXEMPT = {DOCS / "changelog.md"}
"""The changelog records history by design."""

_INCLUDE = re.compile(r"^```\{include\}\s+(\S+)", re.M)
_BUILD = {"_build", "auto_examples", "generated", "screenshots"}


def _pages() -> list[Path]:
    pages = [ROOT / "README.md"]
    pages += [p for p in sorted(DOCS.rglob("*.md"))
              if not _BUILD.intersection(p.relative_to(DOCS).parts)]
    pages += [p for p in sorted(DOCS.rglob("*.rst"))
              if not _BUILD.intersection(p.relative_to(DOCS).parts)]
    pages += sorted((ROOT / "examples").glob("*.py"))
    pages += sorted((ROOT / "examples").glob("*.rst"))
    included = []
    for page in pages:
        if page.suffix == ".md":
            for target in _INCLUDE.findall(page.read_text(encoding="utf-8")):
                path = (page.parent / target).resolve()
                if path.exists() and path not in included:
                    included.append(path)
    return [p for p in pages + included if p not in EXEMPT]


PAGES = _pages()


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_pages_found():
    names = {_id(p) for p in PAGES}
    assert "README.md" in names and "docs/index.md" in names
    assert "benchmarks/results/uci/summary.md" in names  # included by the benchmarks page


def work_words(text: str) -> list[str]:
    """Every work-log phrase in ``text``, with its line."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for pattern in WORK_WORDS:
            match = re.search(pattern, line, flags=re.I)
            if match:
                found.append(f"line {number}: {match.group(0)!r}: {line.strip()[:100]}")
    return found


def wide_tables(text: str, max_columns: int = MAX_COLUMNS) -> list[str]:
    """Markdown tables of more than ``max_columns`` columns outside a wide-table container."""
    found, depth_wide, in_code = [], [], False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            # a fence opens with ``` (and a language or directive) and closes with ``` alone
            in_code = not (in_code and stripped.strip("`") == "")
            continue
        if in_code:
            continue
        fence = re.match(r"^(:{3,})\s*(\{[\w-]+\})?\s*(.*)$", stripped)
        if fence and fence.group(2):
            depth_wide.append("wide-table" in fence.group(3))
            continue
        if fence and not fence.group(2) and depth_wide:
            depth_wide.pop()
            continue
        if re.match(r"^\|(\s*:?-+:?\s*\|)+\s*$", stripped):
            columns = stripped.count("|") - 1
            if columns > max_columns and not any(depth_wide):
                found.append(f"line {number}: a table of {columns} columns")
    return found


@pytest.mark.parametrize("path", PAGES, ids=_id)
def test_no_work_log_words(path):
    found = work_words(path.read_text(encoding="utf-8"))
    assert not found, f"{_id(path)} reads as a work log:\n" + "\n".join(found)


@pytest.mark.parametrize("path", [p for p in PAGES if p.suffix == ".md"], ids=_id)
def test_tables_fit_the_page(path):
    found = wide_tables(path.read_text(encoding="utf-8"))
    assert not found, (f"{_id(path)}: split the table or put it in a ':::{{container}} wide-table' "
                       "container:\n" + "\n".join(found))


@pytest.mark.parametrize("path", PAGES + [DOCS / "changelog.md"], ids=_id)
def test_no_paths_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    lines = [f"line {n}: {line.strip()[:100]}"
             for n, line in enumerate(text.splitlines(), 1) if "../shared" in line]
    assert not lines, f"{_id(path)} names a folder users do not have:\n" + "\n".join(lines)


def test_the_checks_catch_what_they_are_for():
    assert work_words("Measured on a lent H100.")
    assert work_words("the records predate two speed-ups")
    assert not work_words("SGHMC is the sampler to start with, since it is calibrated.")
    row = "|" + "---|" * 10
    assert wide_tables(f"| a |\n{row}\n")
    assert not wide_tables(f":::{{container}} wide-table\n| a |\n{row}\n:::\n")
    assert not wide_tables("|" + "---|" * 9 + "\n")
    assert not wide_tables(f"```text\n{row}\n```\n")


def test_every_gallery_example_has_committed_figures():
    """A build that skips an example shows the figures of a full run instead (docs/conf.py);
    every example of the gallery has them, so no page shows a placeholder."""
    import json

    gallery = DOCS / "images" / "gallery"
    manifest = json.loads((gallery / "figures.json").read_text())
    examples = {p.stem for p in (ROOT / "examples").glob("plot_*.py")}
    examples.discard("plot_extrapolation")  # a command-line script, not a gallery example
    missing = sorted(examples - set(manifest))
    assert not missing, f"run a full build, then python docs/gallery_figures.py: {missing}"
    for entry in manifest.values():
        for _, name in entry["figures"]:
            assert (gallery / name).exists(), name
        assert (gallery / entry["thumbnail"]).exists(), entry["thumbnail"]
