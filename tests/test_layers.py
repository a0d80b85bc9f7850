"""lengen's modules depend one way, layer by layer, and never in a circle — function-level imports included.

Layers, bottom to top: config (with checks and compose, and features, the run-feature registry they read) → io, checkpoints → data (and the corpus builder: contamination, corpus_parts, corpus), models, ops → regularizers → eval → train → experiments.
A module may import its own layer or those below it; nothing imports a layer above it (`lengen` itself, the lazy
top-level API, sits above them all). The notebooks' prose and saved outputs name only modules that exist.
"""
import ast, json, re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "lengen"
LAYERS = [["config", "checks", "compose", "features", "showdoc"], ["io", "checkpoints"], ["data", "contamination", "corpus_parts", "corpus", "models", "ops"], ["regularizers"], ["eval"], ["train"], ["experiments"]]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py") if p.name != "_modidx.py"}


def imported(mod: str, source: str | None = None) -> set[str]:
    "lengen modules that `mod` imports anywhere in its body (top level, functions, methods)."
    path, out = MODULES[mod], set()
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "lengen"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "lengen": continue
            for a in node.names:   # `from lengen.models import scaling` imports the module lengen.models.scaling
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in out if m in MODULES and m != mod}


GRAPH = {m: imported(m) for m in MODULES}


def layer(mod: str) -> int | None:
    "A module's layer; `lengen` itself (the lazy top-level API) sits above them all."
    parts = mod.split(".")
    return RANK.get(parts[1]) if len(parts) > 1 else len(LAYERS)


def test_every_module_has_a_layer():
    assert sorted(m for m in MODULES if layer(m) is None) == []


def test_no_import_goes_up_a_layer():
    up = [f"{m} (layer {layer(m)}) imports {d} (layer {layer(d)})" for m, deps in GRAPH.items() for d in deps
          if layer(d) > layer(m)]
    assert up == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    "Every strongly connected component with more than one module (Tarjan)."
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: found.append(sorted(comp))
    for v in graph:
        if v not in index: visit(v)
    return found


def test_no_import_cycle():
    assert cycles(GRAPH) == []


@pytest.mark.parametrize("graph,expected", [({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
                                            ({"a": {"b"}, "b": set()}, [])])
def test_cycle_finder(graph, expected):
    assert cycles(graph) == expected


def test_function_level_and_relative_imports_count():
    src = "def f():\n    from ..train.trainer import run_training\n    from lengen.models import scaling\n"
    assert imported("lengen.eval.position", src) == {"lengen.train.trainer", "lengen.models.scaling"}


def test_readme_lists_every_module():
    "The README's module table (from nbs/index.ipynb) names every module, so a reader finds each notebook from it."
    readme = (PKG.parent / "README.md").read_text()
    assert [m for m, path in MODULES.items() if path.name != "__init__.py" and f"`{m}`" not in readme] == []


# A module named in prose or output: `lengen.eval.copy_task`, `lengen.eval.copy_task.main` (an attribute of it),
# `lengen.train.cli:main` (an entry point); not `.lengen.lock` (a file) or `lengen_train` (a command).
DOTTED = re.compile(r"(?<![\w./-])lengen(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")
# A module's file: `lengen/eval/copy_task.py`, also at the end of a source link (`.../blob/main/lengen/io.py#L10`).
FILE = re.compile(r"(?<![\w.-])lengen/(?:(?!lengen/)\w+/)*\w+\.py\b")
# A module run as a script: `python -m lengen.train.cli`, also an argv list's `'-m', 'lengen.train.cli'`.
RUN = re.compile(r"""-m["']?(?:,\s*["']|\s+)(lengen(?:\.\w+)*)""")


def _top_level(body):
    "A module's statements outside functions and classes, those inside `if`, `try`, `with` and loops included."
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): continue
        for field in ("body", "orelse", "finalbody", "handlers"): yield from _top_level(getattr(node, field, []))


def defined_names(mod: str) -> set[str]:
    "What `mod`'s source defines at module level: functions, classes, assigned and imported names, and the names its lazy `__getattr__` answers."
    names = set()
    for node in _top_level(ast.parse(MODULES[mod].read_text()).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if node.name == "__getattr__":   # `lengen.load_model`: `if name == "load_model": ...`
                names |= {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.isidentifier()}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def runnable(mod: str) -> bool:
    "Whether `python -m mod` runs: a module that checks `__name__ == \"__main__\"`, or a package with a `__main__.py`."
    path = MODULES.get(mod)
    if path is None: return False
    if path.name == "__init__.py": return (path.parent / "__main__.py").is_file()
    return re.search(r"""^if __name__ == ["']__main__["']""", path.read_text(), re.M) is not None


def missing(name: str) -> bool:
    "Whether `name` (dotted, `module:function`, `-m module` or a `lengen/...py` path) names no existing module or attribute of one."
    if name.startswith("-m "): return not runnable(name[3:])
    if "/" in name: return not (PKG.parent / name).is_file()
    mod, _, entry = name.partition(":")
    parts = mod.split(".")
    k = max(i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES)   # the longest module prefix (`lengen` at least)
    rest = parts[k:] + ([entry] if entry else [])
    if entry and k < len(parts): return True   # an entry point names a module, then a function in it
    return bool(rest) and rest[0] not in defined_names(".".join(parts[:k]))


def lengen_names(text: str) -> list[str]:
    "Every module, attribute, entry point or module file of lengen that `text` names."
    return [m.group() for rx in (DOTTED, FILE) for m in rx.finditer(text)] + [f"-m {m.group(1)}" for m in RUN.finditer(text)]


def notebook_texts(nb: Path):
    "(cell index, 'markdown' or 'output', text) for every markdown cell and every saved text output of `nb`."
    for i, c in enumerate(json.loads(nb.read_text())["cells"]):
        if c["cell_type"] == "markdown": yield i, "markdown", "".join(c["source"])
        for o in c.get("outputs", []):
            texts = [o.get("text", "")] + [v for k, v in o.get("data", {}).items() if k.startswith("text/")]
            yield from ((i, "output", "".join(t) if isinstance(t, list) else t) for t in texts)


def test_stale_name_finder():
    text = ("`lengen.eval.copy_task`, `lengen.eval.copy_task.main`, `lengen.train.cli:main`, `lengen.load_model`, "
            "lengen/io.py, [source](https://github.com/deep-spin/lengen/blob/main/lengen/eval_io.py#L3), `lengen.scaling`, "
            "`lengen.train:main`, `lengen.eval.copy_task.nothing`, `lengen.bench:main`; not tmp/.lengen.lock, lengen_train, "
            "https://deep-spin.github.io/lengen/cli.html or `lengen/*.py`. torchrun -m lengen.train.cli, ['-m', 'lengen.train'].")
    found = lengen_names(text)
    assert found == ["lengen.eval.copy_task", "lengen.eval.copy_task.main", "lengen.train.cli:main", "lengen.load_model",
                     "lengen.scaling", "lengen.train:main", "lengen.eval.copy_task.nothing", "lengen.bench:main",
                     "lengen.train.cli", "lengen.train", "lengen/io.py", "lengen/eval_io.py",
                     "-m lengen.train.cli", "-m lengen.train"]
    assert [n for n in found if missing(n)] == ["lengen.scaling", "lengen.train:main", "lengen.eval.copy_task.nothing",
                                                "lengen.bench:main", "lengen/eval_io.py", "-m lengen.train"]   # a package without __main__.py


def test_notebooks_name_only_existing_modules():
    "Markdown and saved outputs name no module that was moved or removed (`lengen.bench:main`, `lengen/eval_io.py`, ...)."
    stale = [f"{nb.relative_to(PKG.parent)} cell {i} ({kind}): {name}" for nb in sorted((PKG.parent / "nbs").rglob("*.ipynb"))
             if ".ipynb_checkpoints" not in nb.parts for i, kind, text in notebook_texts(nb) for name in lengen_names(text) if missing(name)]
    assert list(dict.fromkeys(stale)) == []
