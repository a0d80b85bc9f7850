"tools/run_full_sweep_gpu.sh's pack: a call brings back exactly the records its machine wrote, whichever SWEEPS the call was given."
import os, shutil, subprocess, tarfile
from pathlib import Path

ROOT = Path(__file__).parents[1]

def call(repo, work, out, tmp_path, mode="collect"):
    "The script's MODE run in `repo`, its machine's work folder `work`; python3 a stub (its progress reports need no package here)."
    stub = tmp_path/"bin"; stub.mkdir(exist_ok=True); (stub/"python3").write_text("#!/bin/sh\nexit 0\n"); (stub/"python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("SWEEPS", "SWEEP_ARGS")}   # as a 'wait' call is: not told the start's SWEEPS
    env |= {"SWEEP_WORK": str(work), "OUT": str(out), "HOME": str(tmp_path), "PATH": f"{stub}:{env['PATH']}"}
    return subprocess.run(["bash", "tools/run_full_sweep_gpu.sh", mode], cwd=repo, env=env, capture_output=True, text=True, timeout=60)

def test_pack_brings_back_new_records_only(tmp_path):
    "A 'collect' call told no SWEEPS (as a 'wait' call is) packs the new and changed records of any sweep, never the committed ones."
    repo, work, out = tmp_path/"repo", tmp_path/"work", tmp_path/"out"
    (repo/"tools").mkdir(parents=True)
    for f in ("tools/run_full_sweep_gpu.sh", "tools/gpu_env.sh", "settings.ini"): shutil.copy(ROOT/f, repo/f)
    committed = {"results/copy_confirmatory/baseline-seed103.json": '{"seed": 103}',
                 "results/copy_full_scale/vpad-seed0.json": '{"seed": 0}',
                 "results/copy_confirmatory/vpad-seed103.json": '{"seed": 103, "old": true}'}
    on_machine = {**committed, "results/copy_confirmatory/vpad-seed103.json": '{"seed": 103, "old": false}',   # rewritten there
                  "results/copy_confirmatory/baseline-seed104.json": '{"seed": 104}',
                  "results/copy_noise_floor/baseline-seed106.json": '{"seed": 106}'}
    for root, files in ((repo, committed), (work, on_machine)):
        for name, text in files.items(): (root/name).parent.mkdir(parents=True, exist_ok=True); (root/name).write_text(text)
    r = call(repo, work, out, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "packed 3 new results JSONs" in r.stdout, r.stdout
    with tarfile.open(out/"full_sweep_results.tgz") as tar: packed = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}
    assert packed == {k: on_machine[k] for k in ("results/copy_confirmatory/vpad-seed103.json", "results/copy_confirmatory/baseline-seed104.json",
                                                  "results/copy_noise_floor/baseline-seed106.json")}

def test_pack_with_nothing_new(tmp_path):
    "No new record: an empty archive and a count of 0, not an error."
    repo, work, out = tmp_path/"repo", tmp_path/"work", tmp_path/"out"
    (repo/"tools").mkdir(parents=True); (work/"results").mkdir(parents=True)
    for f in ("tools/run_full_sweep_gpu.sh", "tools/gpu_env.sh", "settings.ini"): shutil.copy(ROOT/f, repo/f)
    r = call(repo, work, out, tmp_path)
    assert r.returncode == 0 and "packed 0 new results JSONs" in r.stdout, (r.stdout, r.stderr)
    with tarfile.open(out/"full_sweep_results.tgz") as tar: assert tar.getnames() == []
