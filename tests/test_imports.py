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
