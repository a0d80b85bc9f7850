"tools/run_full_sweep_gpu.sh's pack: a call brings back exactly the records its machine's sweep wrote, whichever SWEEPS the call was given."
import os, shutil, subprocess, tarfile, time
from pathlib import Path

ROOT = Path(__file__).parents[1]

def call(repo, work, out, tmp_path, mode="collect"):
    "The script's MODE run in `repo`, its machine's work folder `work`; python3 a stub (its progress reports need no package here)."
    stub = tmp_path/"bin"; stub.mkdir(exist_ok=True); (stub/"python3").write_text("#!/bin/sh\nexit 0\n"); (stub/"python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("SWEEPS", "SWEEP_ARGS")}   # as a 'wait' call is: not told the start's SWEEPS
    env |= {"SWEEP_WORK": str(work), "OUT": str(out), "HOME": str(tmp_path), "PATH": f"{stub}:{env['PATH']}"}
    return subprocess.run(["bash", "tools/run_full_sweep_gpu.sh", mode], cwd=repo, env=env, capture_output=True, text=True, timeout=60)

def machine(tmp_path, copied:dict, written:dict, started:bool=True):
    "A repository with the committed records `copied`, and a machine's work folder: those copied at its start, then `written` by its sweep."
    repo, work = tmp_path/"repo", tmp_path/"work"
    (repo/"tools").mkdir(parents=True); (work/"results").mkdir(parents=True)
    for f in ("tools/run_full_sweep_gpu.sh", "tools/gpu_env.sh", "settings.ini"): shutil.copy(ROOT/f, repo/f)
    now = time.time()
    for root, files, at in ((repo, copied, now - 100), (work, copied, now - 100), (work, written, now)):
        for name, text in files.items():
            (root/name).parent.mkdir(parents=True, exist_ok=True); (root/name).write_text(text); os.utime(root/name, (at, at))
    if started: (work/"started").write_text(f"{int(now - 50)}\n"); os.utime(work/"started", (now - 50, now - 50))   # between the two
    return repo, work

def packed(out) -> dict:
    with tarfile.open(out/"full_sweep_results.tgz") as tar: return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}

def test_pack_brings_back_the_sweeps_records_only(tmp_path):
    "A 'collect' call told no SWEEPS (as a 'wait' call is) packs what the sweep wrote in any sweep's folder, never a copied record."
    copied = {"results/copy_confirmatory/baseline-seed103.json": '{"seed": 103}', "results/copy_full_scale/vpad-seed0.json": '{"seed": 0}'}
    written = {"results/copy_confirmatory/baseline-seed104.json": '{"seed": 104}', "results/copy_noise_floor/baseline-seed106.json": '{"seed": 106}'}
    repo, work = machine(tmp_path, copied, written)
    (repo/"results/copy_confirmatory/baseline-seed103.json").write_text('{"seed": 103, "amended": true}')   # amended here since the start
    r = call(repo, work, tmp_path/"out", tmp_path)
    assert r.returncode == 0 and "packed 2 new results JSONs" in r.stdout, (r.stdout, r.stderr)
    assert packed(tmp_path/"out") == written   # the stale copy of the amended record stays on the machine

def test_pack_before_a_start(tmp_path):
    "No sweep started on the machine: an empty archive and a count of 0, not an error."
    repo, work = machine(tmp_path, {"results/copy_confirmatory/baseline-seed103.json": "{}"}, {}, started=False)
    r = call(repo, work, tmp_path/"out", tmp_path)
    assert r.returncode == 0 and "packed 0 new results JSONs" in r.stdout, (r.stdout, r.stderr)
    assert packed(tmp_path/"out") == {}
