"""Write README.md from nbs/index.ipynb without quarto (which `nbdev_readme` needs and these machines lack).

Runs the notebook in memory (execnb), keeps markdown cells, drops `#| hide` cells, shows only the output of
`#| echo: false` cells, and strips `#|` directive lines. `--check` exits 1 when README.md is out of date.
"""
import sys
from pathlib import Path
from execnb.nbio import read_nb
from execnb.shell import CaptureShell

ROOT = Path(__file__).resolve().parent.parent


def directives(src):
    return {l[3:].split(":")[0].strip(): l for l in src.splitlines() if l.startswith("#|")}


def output_text(outputs):
    parts = []
    for o in outputs:
        data = o.get("data", {})
        if "text/markdown" in data: parts.append("".join(data["text/markdown"]))
        elif "text/plain" in data: parts.append("```\n" + "".join(data["text/plain"]) + "\n```")
        elif o.get("output_type") == "stream": parts.append("```\n" + "".join(o["text"]).rstrip() + "\n```")
    return "\n\n".join(parts)


def render(nb_path=ROOT / "nbs" / "index.ipynb"):
    nb = read_nb(nb_path)
    CaptureShell(nb_path).run_all(nb, exc_stop=True)
    out = []
    for c in nb.cells:
        d = directives(c.source)
        if c.cell_type == "markdown": out.append(c.source.strip())
        elif "hide" in d: continue
        else:
            code = "\n".join(l for l in c.source.splitlines() if not l.startswith("#|")).strip()
            if "echo" not in d and code: out.append(f"```python\n{code}\n```")
            if c.get("outputs"): out.append(output_text(c.outputs))
    return "\n\n".join(p for p in out if p) + "\n"


if __name__ == "__main__":
    text, readme = render(), ROOT / "README.md"
    if "--check" in sys.argv:
        if readme.read_text() != text: sys.exit("README.md is out of date: run python tools/make_readme.py")
    else: readme.write_text(text)
