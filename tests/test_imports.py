"""Importing lengen changes nothing in transformers: what a model family needs process-wide (Mamba2's ops made safe off
the GPU, `lengen.models.mamba2.model.prepare_mamba2`) is applied where lengen builds or loads a model, through the
family record's `prepare` hook (`lengen.models.architecture.prepare`), never as a side effect of an import.
"""
import json, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r'''
import importlib, json, pkgutil
from transformers.models.mamba2 import modeling_mamba2 as m2

def bound(implementation, torch_function, supported_devices=None):
    "A stand-in for transformers' kernel wrapper: a compiled kernel bound for every device (as 5.17-5.24 bind one)."
    def op(*args, **kwargs): return (implementation, torch_function, supported_devices)[0](*args, **kwargs)
    return op
def kernel(x, *args, **kwargs): raise RuntimeError("CUDA tensors only")
kernel.__module__ = "causal_conv1d"
def reference(x, *args, **kwargs): return x
m2.causal_conv1d_fn = bound(kernel, reference)   # what `prepare_mamba2` would wrap, were it called

def snapshot():
    classes = [v for v in vars(m2).values() if isinstance(v, type) and v.__module__ == m2.__name__]
    return {**{k: id(v) for k, v in vars(m2).items() if not k.startswith("__")},
            **{f"{c.__name__}.{k}": id(v) for c in classes for k, v in vars(c).items()}}

before = snapshot()
import lengen
imported, skipped = [], {}
for info in pkgutil.walk_packages(lengen.__path__, "lengen."):
    try: importlib.import_module(info.name); imported.append(info.name)
    except ImportError as e: skipped[info.name] = str(e)   # an optional extra this machine lacks
after = snapshot()
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
from lengen.models.fixtures import tiny_mamba2
tiny_mamba2(0)   # a model lengen builds: the family's `prepare` runs here
print(json.dumps({"imported": imported, "skipped": skipped, "changed": changed,
                  "prepared": hasattr(m2.causal_conv1d_fn, "kernel")}))   # lengen's wrapper keeps the kernel as `.kernel`
'''


def test_importing_lengen_patches_nothing_in_transformers():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert "lengen.models.mamba2.model" in res["imported"] and "lengen.ops.packed" in res["imported"], res
    assert res["changed"] == [], res["changed"]   # Mamba2's module globals and its classes' methods, as transformers left them
    assert res["prepared"], "building a Mamba2 no longer makes its ops safe: the test's stand-in op would not notice a patch"


DOCS_ONLY = {"lengen/showdoc.py": "renders the docs pages with nbdev (a dev requirement)"}


def undeclared_imports(root=ROOT) -> dict:
    "Each module's module-level imports of a third-party package that settings.ini's `requirements` do not declare (a `try` block: optional)."
    import ast, configparser, importlib.metadata, re
    cfg = configparser.ConfigParser(); cfg.read(root/"settings.ini")
    declared = {re.split(r"[<>=\[ ;!~]", r)[0].lower().replace("_", "-") for r in cfg["DEFAULT"]["requirements"].split()}
    dists, found = importlib.metadata.packages_distributions(), {}
    for f in sorted((root/"lengen").rglob("*.py")):
        rel = str(f.relative_to(root))
        if f.name == "_modidx.py" or rel in DOCS_ONLY: continue
        for node in ast.parse(f.read_text()).body:   # module level: what `import lengen.x` runs
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for top in {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - {"lengen", "__future__"}:
                if not {d.lower().replace("_", "-") for d in dists.get(top, [top])} & declared: found.setdefault(rel, []).append(top)
    return found


def test_modules_import_only_declared_requirements():
    "A user who installs lengen without its extras can import every module: none imports, at its top, a package only a dev or optional extra brings."
    assert undeclared_imports() == {}, undeclared_imports()
