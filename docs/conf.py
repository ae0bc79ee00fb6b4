"""Sphinx configuration of the skfbnn documentation.

Build from the repository root with::

    sphinx-build -W -b html docs docs/_build/html

The gallery (``examples/``) is executed by sphinx-gallery. Set the environment
variable ``SKFBNN_GALLERY`` to choose how much of it runs:

- ``full`` (default): every example is executed;
- ``quick``: only the examples listed in ``QUICK_EXAMPLES`` below are executed
  (about a minute and a half on two cores); the others are rendered as code, with the
  figures of a full run committed under ``docs/images/gallery/`` shown in place of their
  output (``python docs/gallery_figures.py`` copies them from a full build). CI builds the
  site this way;
- ``off``: no example is executed (sphinx-gallery's ``plot_gallery = False``); the pages
  show the committed figures, as a quick build does for the examples it skips.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
import types
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import skfbnn  # noqa: E402

# -- Project -----------------------------------------------------------------

project = "skfbnn"
author = "skfbnn developers"
copyright = "skfbnn developers, BSD-3-Clause"  # noqa: A001
version = skfbnn.__version__
release = skfbnn.__version__

# -- General -----------------------------------------------------------------

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "screenshots",
    "figures/README.md",
    # sphinx-gallery writes a list of the gallery's run times here; it is not a page.
    "sg_execution_times.rst",
]
templates_path = ["_templates"]

# Markdown through myst-parser: ``$...$`` and ``$$...$$`` are formulas (rendered by MathJax),
# ``:::{container} wide-table`` fences a table that may scroll sideways, headings get anchors so that
# ``[text](page.md#anchor)`` links resolve.
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "amsmath"]
myst_dmath_double_inline = True
# MathJax comes from Sphinx's default CDN; SKFBNN_MATHJAX_PATH points at a local copy instead
# (a site read offline: e.g. the tex-chtml.js of the npm package "mathjax", version 3).
if os.environ.get("SKFBNN_MATHJAX_PATH"):
    mathjax_path = os.environ["SKFBNN_MATHJAX_PATH"]
myst_heading_anchors = 3

# -- API reference (autosummary + numpydoc) ----------------------------------

autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False
autodoc_typehints = "none"
# The page's table of contents lists methods as "fit()", not "SGHMCRegressor.fit()".
toc_object_entries_show_parents = "hide"
numpydoc_show_class_members = True
numpydoc_show_inherited_class_members = True
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

# -- HTML --------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"skfbnn {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
# The repository's address, from pyproject.toml's [project.urls], for the icon in the top bar.
REPOSITORY_URL = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get(
    "urls", {}).get("Repository")

html_theme_options = {
    "navbar_align": "left",
    # The top bar: the user's pages, then benchmarks, experiments and the changelog; the
    # rest (FAQ, glossary, citing, contributing) in its "More" menu.
    "header_links_before_dropdown": 8,
    # the search as an icon, so that the eight links fit on one line at 1400 px
    "navbar_persistent": [],
    "navbar_end": ["search-button", "theme-switcher", "navbar-icon-links"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # "Choosing a method" is one wide decision table: it gets the whole width, and so does
    # the user guide's index, one wide table of the estimators.
    "secondary_sidebar_items": {"**": ["page-toc"], "choosing": [], "user_guide/index": []},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
if REPOSITORY_URL:
    html_theme_options["github_url"] = REPOSITORY_URL
# Pages without sub-pages get no (empty) section navigation on the left: the width goes to
# the tables.
html_sidebars = {page: [] for page in (
    "index", "changelog", "getting_started", "choosing", "benchmarks", "experiments", "bandit",
    "faq", "glossary", "citing")}
html_context = {"default_mode": "light"}

# -- Gallery -----------------------------------------------------------------

GALLERY_MODE = os.environ.get("SKFBNN_GALLERY", "full").strip().lower()
if GALLERY_MODE not in {"full", "quick", "off"}:
    raise ValueError(
        f"SKFBNN_GALLERY must be 'full', 'quick' or 'off', got {GALLERY_MODE!r}")

# Examples that fit nothing or only a few short fits: the subset CI executes.
QUICK_EXAMPLES = ("plot_quickstart", "plot_uci_comparison", "plot_device_selection")

# The order of the gallery (examples not listed follow, by file name).
GALLERY_ORDER = (
    "plot_quickstart",
    "plot_extrapolation_bands",
    "plot_uci_comparison",
    "plot_reliability_diagram",
    "plot_grid_search_prior",
    "plot_arviz_diagnostics",
    "plot_device_selection",
)


class _ExampleOrder:
    """Sort key of sphinx-gallery's ``within_subsection_order``: ``GALLERY_ORDER``."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        stem = Path(filename).stem
        rank = GALLERY_ORDER.index(stem) if stem in GALLERY_ORDER else len(GALLERY_ORDER)
        return rank, stem


# sphinx-gallery takes the key by import path (a string keeps the configuration picklable).
_order_module = types.ModuleType("skfbnn_docs_gallery")
_order_module.ExampleOrder = _ExampleOrder
sys.modules[_order_module.__name__] = _order_module

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": (
        re.escape(os.sep) + "(" + "|".join(QUICK_EXAMPLES) + r")\.py$"
        if GALLERY_MODE == "quick" else re.escape(os.sep) + "plot_"),
    # examples/plot_extrapolation.py is the command-line script behind the benchmarks
    # page's figure (every model at its defaults, several minutes), not a gallery example.
    "ignore_pattern": r"(__init__|plot_extrapolation)\.py$",
    "plot_gallery": "False" if GALLERY_MODE == "off" else "True",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "skfbnn_docs_gallery.ExampleOrder",
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "min_reported_time": 1,
    "show_memory": False,
    "write_computation_times": False,
    "doc_module": ("skfbnn",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skfbnn": None},
}


# -- Docstring text that reStructuredText would misread ------------------------
#
# The package's docstrings are plain numpydoc and are also read with ``help()``. Two
# spellings in them mean something else to reStructuredText, and are quoted as literals
# here rather than in the docstrings: a norm such as ``|w - a|^2`` (``|...|`` is a
# substitution reference) and a star in a shape such as ``(n_chains, n_draws,
# *event_shape)`` (a star opens emphasis).

_LITERAL = re.compile(r"``.*?``|`[^`]*`")
_NORM = re.compile(r"\|([^\s|][^|]*?[^\s|]|[^\s|])\|(\^\d|_\w+)?")
_STARRED = re.compile(r"(?<![\w*`\\])\*(?=[A-Za-z_]\w*[,)])")


def _quote_plain(text: str) -> str:
    text = _NORM.sub(lambda m: f"``{m.group(0)}``", text)
    return _STARRED.sub(r"\\*", text)


def _quote_line(line: str) -> str:
    if line.lstrip().startswith(("|", "+", "..")):
        return line  # tables and directives are left alone
    out, last = [], 0
    for literal in _LITERAL.finditer(line):
        out.append(_quote_plain(line[last:literal.start()]))
        out.append(literal.group(0))
        last = literal.end()
    out.append(_quote_plain(line[last:]))
    return "".join(out)


_SKLEARN_REF = re.compile(r":ref:`([^`<]+?)\s*(?:<[^>`]*>)?`")


def _quote_docstring(app, what, name, obj, options, lines):
    if getattr(obj, "__module__", "").startswith("sklearn."):
        # Methods inherited from scikit-learn (score, get_params, ...) refer to labels of
        # scikit-learn's own site; keep their text, drop the link.
        lines[:] = [_SKLEARN_REF.sub(r"\1", line) for line in lines]
        return
    lines[:] = [_quote_line(line) for line in lines]


# -- Pages written elsewhere ---------------------------------------------------
#
# The benchmarks page, "Choosing a method" and the experiments and bandit pages are written with the
# benchmark suite. Where one does not exist, its toctree entry and the links to it are dropped
# (the link text stays), so that the site still builds with -W.

OPTIONAL_PAGES = ("benchmarks", "choosing", "experiments", "bandit", "user_guide/datasets")

# Pages that moved into the user guide: links to their old names keep working.
MOVED_PAGES = {"user_guide.md": "user_guide/index.md", "mh.md": "user_guide/mh.md"}


def _adjust_links(app, docname, source):
    text = source[0]
    if "/" not in docname:
        for old, new in MOVED_PAGES.items():
            if not (DOCS / old).exists():
                text = re.sub(rf"\]\({re.escape(old)}(?=[)#])", f"]({new}", text)
    for page in OPTIONAL_PAGES:
        if (DOCS / f"{page}.md").exists():
            continue
        # the page as the current document names it: "benchmarks", "../benchmarks", "datasets"
        rel = re.escape(os.path.relpath(page, os.path.dirname(docname) or ".").replace(
            os.sep, "/"))
        text = re.sub(rf"^{rel}[ \t]*\n", "", text, flags=re.M)
        text = re.sub(rf"\[([^\]]*)\]\({rel}\.md(#[^)]*)?\)", r"\1", text)
    source[0] = text


# -- Figures of a full gallery run in builds that skip examples ------------------------
#
# docs/gallery_figures.py copies the figures of a full build to docs/images/gallery/ with a
# manifest; a build that does not run an example shows those instead of sphinx-gallery's
# placeholder thumbnail and of an empty output.

GALLERY_FIGURES = DOCS / "images" / "gallery"


def _executed(stem: str) -> bool:
    return GALLERY_MODE == "full" or (GALLERY_MODE == "quick" and stem in QUICK_EXAMPLES)


def _gallery_manifest() -> dict:
    import json

    path = GALLERY_FIGURES / "figures.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _committed_thumbnails(app):
    """After sphinx-gallery has written its pages: the thumbnails of a full run."""
    import shutil

    thumbs = DOCS / "auto_examples" / "images" / "thumb"
    for stem, entry in _gallery_manifest().items():
        target = thumbs / entry["thumbnail"]
        if not _executed(stem) and target.parent.exists():
            shutil.copyfile(GALLERY_FIGURES / entry["thumbnail"], target)


def _committed_figures(app, docname, source):
    """An example page that was not run gets each figure after the code block that drew it."""
    if not docname.startswith("auto_examples/"):
        return
    stem = docname.split("/", 1)[1]
    entry = _gallery_manifest().get(stem)
    if entry is None or _executed(stem):
        return
    # re-read the page in an incremental build when the committed figures change
    app.env.note_dependency(str(GALLERY_FIGURES / "figures.json"))
    lines = source[0].split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(".. code-block:: Python")]
    inserts: dict[int, list[str]] = {}
    for blocks, name in entry["figures"]:
        if not 0 < blocks <= len(starts):
            continue
        end = starts[blocks - 1] + 1  # past the code block's indented body
        while end < len(lines) and (not lines[end].strip() or lines[end][:1].isspace()):
            end += 1
        inserts.setdefault(end, []).extend([
            f".. figure:: /images/gallery/{name}",
            "   :class: sphx-glr-single-img",
            "",
            "   Output of a full build of this documentation.",
            "",
        ])
    for at in sorted(inserts, reverse=True):
        lines[at:at] = inserts[at]
    source[0] = "\n".join(lines)


def setup(app):
    # Which examples run decides what their pages show: a change of SKFBNN_GALLERY rereads them.
    app.add_config_value("skfbnn_gallery_mode", GALLERY_MODE, "env")
    app.connect("autodoc-process-docstring", _quote_docstring)
    app.connect("source-read", _adjust_links)
    # after sphinx-gallery's own builder-inited handler, which writes the placeholders
    app.connect("builder-inited", _committed_thumbnails, priority=900)
    app.connect("source-read", _committed_figures)
