"""lengen's modules depend one way, layer by layer, and never in a circle — function-level imports included.

Layers, bottom to top: config → io, checkpoints → data, models, ops → regularizers → eval → train → experiments.
A module may import its own layer or those below it; nothing imports a layer above it (`lengen` itself, the lazy
top-level API, sits above them all).
"""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "lengen"
LAYERS = [["config", "showdoc"], ["io", "checkpoints"], ["data", "models", "ops"], ["regularizers"], ["eval"], ["train"], ["experiments"]]
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
