"""Fail fast on notebook cells that `nbdev_docs` would execute by accident.

nbdev 2.4 runs, while rendering the docs, every cell whose syntax tree holds an import (even one inside a
function). A test or GPU cell that also imports therefore runs on the docs machine, with no GPU and no data.
Imports belong in the notebook's import cells; this check names each offending cell.
It also checks that the hand-written sidebar (`custom_sidebar = True`) is tracked by git: CI builds the docs from a
clean clone, where an ignored `nbs/sidebar.yml` is simply absent and every page drops out of the sidebar.
"""
import ast, json, re, subprocess, sys
from pathlib import Path

def _has(tree, types): return any(isinstance(n, types) for n in ast.walk(tree))

def offending_cells(nb_path):
    "Indices and first lines of cells with imports mixed into other code (what nbdev_docs would execute)."
    cells = json.loads(Path(nb_path).read_text())["cells"]
    for i, c in enumerate(cells):
        src = "".join(c["source"])
        if c["cell_type"] != "code" or "nbdev_export()" in src: continue
        if re.search(r"^#\|\s*(export|exports|exporti|exec_doc|eval:\s*false)\b", src, re.M): continue
        code = "\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!")))
        try: tree = ast.parse(code)
        except SyntaxError: continue
        if _has(tree, (ast.Import, ast.ImportFrom)) and _has(tree, (ast.Expr, ast.Assign)):
            yield i, src.splitlines()[0]

def untracked_sidebar():
    "Problems with `nbs/sidebar.yml` when settings.ini says the sidebar is hand-written."
    if not re.search(r"^custom_sidebar\s*=\s*True", Path("settings.ini").read_text(), re.M): return []
    tracked = subprocess.run(["git", "ls-files", "--error-unmatch", "nbs/sidebar.yml"], capture_output=True).returncode == 0
    return [] if tracked else ["nbs/sidebar.yml: custom_sidebar = True but the file is not tracked by git (check .gitignore)"]

if __name__ == "__main__":
    sidebar = untracked_sidebar()
    for line in sidebar: print(line, file=sys.stderr)
    bad = [(nb, i, line) for nb in sorted(Path("nbs").rglob("*.ipynb")) for i, line in offending_cells(nb)]
    for nb, i, line in bad: print(f"{nb} cell {i}: imports mixed with code ({line!r}); move the imports to an import cell", file=sys.stderr)
    sys.exit(1 if bad or sidebar else 0)
