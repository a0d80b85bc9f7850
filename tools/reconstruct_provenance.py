"""Give the results records written before lengen recorded provenance (results/<sweep>/*.json without a `provenance`
block) the code path they ran, reconstructed from the repository's history, with the evidence beside it.

A record's run took the code path of the tree it was launched from. The records arrived in commits that add only
results (this script refuses a record whose commit changed anything under lengen/), so the package at that commit
is the package that ran: its shipped experiment (lengen/conf/model/<family>.yaml) says whether Liger's kernels, CUDA
graphs and packed examples were on, and lengen/config.py gives the defaults of what the file leaves out. The sweep's
own overrides (the record's `overrides`) come on top. Whether mamba_ssm's fused kernels ran is read from the step
time: the PyTorch reference scan is more than ten times slower than the seconds the record reports.

    python tools/reconstruct_provenance.py results/copy_full_scale      # writes the records in place (atomically)
"""
import json, re, subprocess, sys
from pathlib import Path

from lengen.io import write_json

SWITCHES = {"kernels.liger": ("kernels", "liger"), "compile.cuda_graphs": ("compile", "cuda_graphs"),
            "compile.torch_compile": ("compile", "torch_compile"), "data.pack_examples": ("data", "pack_examples")}

def git(*args) -> str: return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout

def added_in(path:Path) -> str:
    "The commit that added `path`."
    return git("log", "--diff-filter=A", "--format=%H", "--", str(path)).split()[-1]

def yaml_switch(text:str, group:str, key:str):
    "The value of `group: ... key: value` in a shipped experiment's YAML text (None where the file leaves it out)."
    m = re.search(rf"^{group}:\n((?:[ ]+.*\n)+)", text, re.M)
    hit = m and re.search(rf"^\s+{key}:\s*(true|false)", m.group(1), re.M)
    return None if not hit else hit.group(1) == "true"

def default_switch(config_py:str, group:str, key:str) -> bool:
    "The schema default of `group.key` in lengen/config.py as it stood."
    cls = {"kernels": "KernelsConfig", "compile": "CompileConfig", "data": "DataConfig"}[group]
    body = re.search(rf"class {cls}:\n((?:    .*\n|\n)+)", config_py).group(1)
    return re.search(rf"^    {key}: bool = (True|False)", body, re.M).group(1) == "True"

def reconstruct(path:Path) -> dict|None:
    rec = json.loads(path.read_text())
    if "provenance" in rec: return None
    commit = added_in(path)
    changed = git("show", "--format=", "--name-only", commit).split()
    if any(f.startswith("lengen/") for f in changed): sys.exit(f"{path}: its commit {commit[:12]} also changed the package; reconstruct by hand")
    exp = git("show", f"{commit}:lengen/conf/experiment/{rec['experiment']}.yaml")
    family = re.search(r"^\s+- /model/(\S+)", exp, re.M).group(1)
    model_yaml, config_py = git("show", f"{commit}:lengen/conf/model/{family}.yaml"), git("show", f"{commit}:lengen/config.py")
    overrides = dict(o.split("=", 1) for o in rec["overrides"])
    path_ = {}
    for name, (group, key) in SWITCHES.items():
        v = next((x for x in (yaml_switch(exp, group, key), yaml_switch(model_yaml, group, key)) if x is not None), None)
        if name in overrides: v = overrides[name] == "true"
        path_[name] = default_switch(config_py, group, key) if v is None else v
    s_per_step = rec["train_seconds"] / rec["steps"]
    path_ |= {"bf16": bool(rec["bf16"]) and rec["device"] != "cpu", "mamba2_fused_kernels": s_per_step < 0.5}
    return {**rec, "provenance": {
        "commit": None, "dirty": None, "versions": None, "gpu": rec["device"], "code_path": path_,
        "from": (f"reconstructed from the repository: the record arrived in {commit[:12]}, a commit of results only; the "
                 f"package there ships {rec['experiment']} (family {family}) with these switches, after the sweep's "
                 f"overrides {rec['overrides']}; mamba_ssm's fused kernels from the step time ({s_per_step:.3f} s a step "
                 f"with {rec['concurrent_runs']} runs sharing the GPU; the PyTorch reference scan takes several seconds)"),
        "results_commit": commit}}

if __name__ == "__main__":
    for f in sorted(Path(sys.argv[1]).glob("*.json")):
        new = reconstruct(f)
        if new: write_json(new, f); print(f"{f}: {new['provenance']['code_path']}")
