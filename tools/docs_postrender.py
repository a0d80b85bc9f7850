"""Quarto post-render step of the docs site (nbs/_quarto.yml `project: post-render`): a self-contained site, and
show_doc signatures as Python shows them.

Quarto puts require.js and jQuery from a CDN (plus `define('jquery', ...)`) into the <head> of every page whose notebook
has an HTML output, for Jupyter "javascript widgets". lengen's pages need neither (plotly.js is served by the site
itself, see nbs/plotly_local.lua), and offline the failed loads leave a JavaScript error. This removes the three tags.

nbdev's show_doc writes an unannotated parameter whose default is None as `x:NoneType=None`, `*args` and `**kwargs` as
`args:VAR_POSITIONAL` and `kwargs:VAR_KEYWORD`, and links the names in a parameter's comment as markdown, which a code
block shows raw. This writes them `x=None`, `*args`, `**kwargs` and real links, in the signature blocks only.

It works on the pages just rendered (QUARTO_PROJECT_OUTPUT_FILES), or on every page of the output folder.
"""
import os, re, sys
from pathlib import Path

WIDGET_TAGS = re.compile(r'<script src="https://cdn\.jsdelivr\.net/npm/(?:requirejs|jquery)@[^"]*"[^>]*></script>\n?'
                         r"|<script type=\"application/javascript\">define\('jquery', \[\],function\(\) \{return window\.jQuery;\}\)</script>\n?")
SIGNATURE = re.compile(r'(<h[2-6] class="anchored"[^>]*>(?:(?!</h[2-6]>).)*</h[2-6]>\s*<div class="code-copy-outer-scaffold">'
                       r'<div class="sourceCode"[^>]*><pre[^>]*><code[^>]*>)(.*?)(</code></pre>)', re.S)   # a show_doc signature
SIGNATURE_FIXES = [
    (re.compile(r':NoneType(<span class="op">=</span>)'), r"\1"),
    (re.compile(r"\b(\w+):VAR_POSITIONAL\b"), r'<span class="op">*</span>\1'),
    (re.compile(r"\b(\w+):VAR_KEYWORD\b"), r'<span class="op">**</span>\1'),
    (re.compile(r"\[`?([^\]`\n<]+)`?\]\(([^)\s<]+)\)"), r'<a href="\2">\1</a>'),
]


def pages() -> list[Path]:
    files = os.environ.get("QUARTO_PROJECT_OUTPUT_FILES", "").split("\n")
    out = Path(os.environ.get("QUARTO_PROJECT_OUTPUT_DIR", "_docs"))
    return [Path(f) for f in files if f.endswith(".html")] or sorted(out.rglob("*.html"))


def fix_signatures(html:str) -> tuple[str, int]:
    "`html` with SIGNATURE_FIXES applied inside its show_doc signatures; the number of fixes."
    n = 0
    def fix(m:re.Match) -> str:
        nonlocal n
        code = m.group(2)
        for pat, repl in SIGNATURE_FIXES:
            code, k = pat.subn(repl, code); n += k
        return m.group(1) + code + m.group(3)
    return SIGNATURE.sub(fix, html), n


def process(path:Path) -> tuple[int, int]:
    "Remove the widget tags from one page and fix its show_doc signatures; the numbers of tags removed and fixes."
    html = path.read_text(encoding="utf-8")
    new, tags = WIDGET_TAGS.subn("", html)
    new, fixes = fix_signatures(new)
    if new != html: path.write_text(new, encoding="utf-8")
    return tags, fixes


if __name__ == "__main__":
    done = [process(p) for p in pages() if p.is_file()]
    tags, fixes = sum(t for t, _ in done), sum(f for _, f in done)
    if tags: print(f"docs_postrender: removed {tags} CDN widget tags (require.js, jQuery)", file=sys.stderr)
    if fixes: print(f"docs_postrender: {fixes} fixes in show_doc signatures (NoneType, VAR_*, markdown links)", file=sys.stderr)
