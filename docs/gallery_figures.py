"""Keep the figures of a full gallery run for the builds that do not run every example.

A full build (``SKFBNN_GALLERY=full``, the README's command) runs every example of
``examples/`` and draws its figures. A quick build runs only ``QUICK_EXAMPLES`` (``conf.py``);
for the others it shows the figures this script copied from a full build, so that no page
shows a placeholder under text that describes a figure.

Usage, after a build of the site (a full one copies every example's figures; a quick one
those of the examples it ran, keeping the others)::

    python docs/gallery_figures.py

It copies each example's figures and thumbnail from ``docs/auto_examples/images/`` to
``docs/images/gallery/`` and writes ``docs/images/gallery/figures.json``: for each example,
its thumbnail and each figure with the number of blocks of the example's code before it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parent
GALLERY = DOCS / "auto_examples"
OUT = DOCS / "images" / "gallery"

_IMAGE = re.compile(r"image-sg:: /auto_examples/images/(sphx_glr_\w+?_\d{3}\.png)")


def figures_of(rst: str) -> list[tuple[int, str]]:
    """``(code blocks before it, file name)`` for every figure of a generated page."""
    found = []
    for match in _IMAGE.finditer(rst):
        blocks = rst.count(".. code-block:: Python", 0, match.start())  # not outputs
        found.append((blocks, match.group(1)))
    return found


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    # Examples the build did not run keep their entry (a quick build runs a few).
    path = OUT / "figures.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    for page in sorted(GALLERY.glob("plot_*.rst")):
        stem = page.stem
        figures = figures_of(page.read_text(encoding="utf-8"))
        if not figures:
            continue
        for _, name in figures:
            shutil.copyfile(GALLERY / "images" / name, OUT / name)
        thumb = f"sphx_glr_{stem}_thumb.png"
        shutil.copyfile(GALLERY / "images" / "thumb" / thumb, OUT / thumb)
        manifest[stem] = {"thumbnail": thumb, "figures": figures}
        print(f"{stem}: {len(figures)} figure(s)")
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
