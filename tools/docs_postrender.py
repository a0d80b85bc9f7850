"""Quarto post-render step of the docs site (nbs/_quarto.yml `project: post-render`): a self-contained site.

Quarto puts require.js and jQuery from a CDN (plus `define('jquery', ...)`) into the <head> of every page whose notebook
has an HTML output, for Jupyter "javascript widgets". lengen's pages need neither (plotly.js is served by the site
itself, see nbs/plotly_local.lua), and offline the failed loads leave a JavaScript error. This removes the three tags
from the pages just rendered (QUARTO_PROJECT_OUTPUT_FILES), or from every page of the output folder.
"""
import os, re, sys
from pathlib import Path

WIDGET_TAGS = re.compile(r'<script src="https://cdn\.jsdelivr\.net/npm/(?:requirejs|jquery)@[^"]*"[^>]*></script>\n?'
                         r"|<script type=\"application/javascript\">define\('jquery', \[\],function\(\) \{return window\.jQuery;\}\)</script>\n?")


def pages() -> list[Path]:
    files = os.environ.get("QUARTO_PROJECT_OUTPUT_FILES", "").split("\n")
    out = Path(os.environ.get("QUARTO_PROJECT_OUTPUT_DIR", "_docs"))
    return [Path(f) for f in files if f.endswith(".html")] or sorted(out.rglob("*.html"))


def strip(path:Path) -> int:
    "Remove the widget tags from one page; the number removed."
    html = path.read_text(encoding="utf-8")
    new, n = WIDGET_TAGS.subn("", html)
    if n: path.write_text(new, encoding="utf-8")
    return n


if __name__ == "__main__":
    n = sum(strip(p) for p in pages() if p.is_file())
    if n: print(f"docs_postrender: removed {n} CDN widget tags (require.js, jQuery)", file=sys.stderr)
