"""Fail fast on notebook cells that `nbdev_docs` would execute by accident.

nbdev 2.4 runs, while rendering the docs, every cell whose syntax tree holds an import (even one inside a
function). A test or GPU cell that also imports therefore runs on the docs machine, with no GPU and no data.
Imports belong in the notebook's import cells; this check names each offending cell.
A cell option (`#| hide`, `#| export`, ...) after the first line of code is no option for nbdev or quarto: the cell
shows (or does not export) as if it were not there; such cells are named too.
It also checks that the hand-written sidebar (`custom_sidebar = True`) is tracked by git: CI builds the docs from a
clean clone, where an ignored `nbs/sidebar.yml` is simply absent and every page drops out of the sidebar.
And that papermill reads every parameter of a notebook's `parameters` cell: its parser skips a line holding more than one
`=` (a comment such as `# 0 = the default`) with an "Unable to parse line" warning, and `-p NAME` then warns
"Passed unknown parameter" although the value is applied.
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

def late_options(nb_path):
    "Indices and lines of cell options (`#| ...`) that come after code in their cell, where nbdev and quarto ignore them."
    for i, c in enumerate(json.loads(Path(nb_path).read_text())["cells"]):
        if c["cell_type"] != "code": continue
        lines = "".join(c["source"]).splitlines()
        first_code = next((k for k, l in enumerate(lines) if l.strip() and not l.startswith("#|")), len(lines))
        yield from ((i, l) for l in lines[first_code:] if re.match(r"#\|\s*\w", l))

def unread_parameters(nb_path):
    "Indices and names of a `parameters` cell's assignments that papermill's parser does not read."
    from papermill.translators import PythonTranslator   # only where a notebook has a parameters cell
    for i, c in enumerate(json.loads(Path(nb_path).read_text())["cells"]):
        if "parameters" not in c.get("metadata", {}).get("tags", []): continue
        assigned = {t.id for n in ast.parse("".join(c["source"])).body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        read = {p.name for p in PythonTranslator.inspect({"source": "".join(c["source"])})}
        yield from ((i, name) for name in sorted(assigned - read))

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
    late = [(nb, i, line) for nb in sorted(Path("nbs").rglob("*.ipynb")) for i, line in late_options(nb)]
    for nb, i, line in late: print(f"{nb} cell {i}: cell option {line!r} after code; options go first in the cell", file=sys.stderr)
    unread = [(nb, i, name) for nb in sorted(Path("nbs").rglob("*.ipynb")) for i, name in unread_parameters(nb)]
    for nb, i, name in unread: print(f"{nb} cell {i}: papermill cannot read the parameter {name!r} (one `=` a line: none in its comment)", file=sys.stderr)
    sys.exit(1 if bad or sidebar or late or unread else 0)
