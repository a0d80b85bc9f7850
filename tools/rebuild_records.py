"""Copy-task records rebuilt from a wave's returned logs, for runs that finished on the machine but whose record never came back.

Wave 9 (2026-12-07) lost its three records this way: its 'wait' call packed the default sweep's folder, not the one its start
call ran (tools/run_full_sweep_gpu.sh now packs the records a machine wrote, whatever the call is told). Every number a record
holds is in what came back: each run's sweep.log (its in-training evaluations, one dict a line, and the final length table),
train_summary.json (steps, loss, seconds, peak memory and the run's provenance), lengen_progress.json (evaluation seconds) and
the sweep's log (wall seconds, runs at once, MPS). What a run's log does not print, the setting's shape (experiment, overrides,
parameters, architecture, regularizer, evaluation settings), comes from a committed record of the same sweep and setting, and
the record names which. Exact match, the protocol's metric, is exact (whole strings, 100 a length); token and teacher-forced
accuracy are at the log's precision (4 significant digits in training, 3 decimals at the end), and the record says so.

    python tools/rebuild_records.py results/gpu/copy_wave9_h100_logs.tgz --why "..." [--results results] [--write]
"""
import argparse, ast, json, os, re, tarfile
from pathlib import Path

from lengen.experiments.launch import AT_ONCE_LINE, DONE_LINE   # the sweep log's lines
from lengen.experiments.results import MEMORY_LAYOUT   # the tree's layout: a rebuild is refused where the setting's record differs
from lengen.experiments.sweep import write_result   # the records' own format, written atomically

EVAL_LINE = "{'copy/exact_match_accuracy@"   # one in-training evaluation (the Trainer's log of its metrics)
METRIC = re.compile(r"^copy/(\w+)@(\d+)$")
ROW = re.compile(r"^\s*(\d+)\*?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")   # lengen.eval.copy_task.format_length_table
METRICS = ("exact_match_accuracy", "token_accuracy", "teacher_forced_accuracy")

def in_run_curve(log:str, steps:list[int], n:int) -> list[dict]:
    "The run's in-training evaluations as a record's `copy.curve`: one line each, at `steps` in order, `n` strings a length."
    evals = [ast.literal_eval(line) for line in log.splitlines() if line.startswith(EVAL_LINE)]
    if len(evals) != len(steps): raise SystemExit(f"{len(evals)} in-training evaluations in the log, where the setting evaluates at {len(steps)} steps")
    per_step = float(evals[-1]["epoch"]) / steps[-1]   # each line's epoch (4 significant digits) says at which step it was logged
    if off := [f"{ev['epoch']} at step {st}" for st, ev in zip(steps, evals) if abs(float(ev["epoch"]) / (st * per_step) - 1) > 1e-3]:
        raise SystemExit(f"in-training evaluations whose epoch does not match their step, {per_step:.4g} epochs a step: {', '.join(off)}")
    curve = []
    for step, ev in zip(steps, evals):
        by_length = {}
        for key, value in ev.items():
            if m := METRIC.match(key): by_length.setdefault(int(m[2]), {})[m[1]] = float(value)
        curve += [{"step": step, "length": L, "n": n, **{k: v[k] for k in METRICS}} for L, v in by_length.items()]
    return curve

def final_results(log:str, n:int) -> list[dict]:
    "The final evaluation's length table as a record's `copy.results` (3 decimals, as printed)."
    rows = [m for line in log.splitlines() if (m := ROW.match(line))]
    return [{"length": int(m[1]), "n": n, **dict(zip(METRICS, map(float, m.groups()[1:])))} for m in rows]

def setting_record(results:Path, sweep:str, name:str,
                   path:Path|None=None, # this record (as a rebuilt record names it), not the highest seed's
                  ) -> tuple[Path, dict]:
    "A committed record of the same sweep and setting that its run wrote (the highest seed that finished, not rebuilt): the setting's shape."
    paths = [path] if path else (results/sweep).glob(f"{name}-seed*.json")
    found = sorted(((json.loads(p.read_text()), p) for p in paths), key=lambda x: x[0]["seed"], reverse=True)
    for rec, p in found:
        if "copy" in rec and rec.get("name") == name and "rebuilt" not in rec: return p, rec
    raise SystemExit(f"no finished record of {sweep}/{name} {f'at {path}' if path else f'under {results}'} to take the setting's shape from")

def rebuild(files:dict[str, str], sweep:str, run:str, results:Path,
            source:str, # where `files` came from, as the record names it (a path in the repository)
            why:str, # why the record did not come back, as the record says it
            setting_from:Path|None=None, # the setting record to take the shape from (default: `setting_record`'s choice)
           ) -> dict:
    "The record of `sweep/run` from the returned `files` (name -> text, as in full_sweep_logs.tgz)."
    name, seed = run.rsplit("-seed", 1)
    shape_path, shape = setting_record(results, sweep, name, setting_from)
    folder = f"runs/{sweep}/{run}"
    log, summ = files[f"{folder}/sweep.log"], json.loads(files[f"{folder}/train_summary.json"])
    progress = json.loads(files[f"{folder}/lengen_progress.json"])
    sweep_log = files["sweep.log"].splitlines()
    wall = [float(m[3]) for line in sweep_log if (m := DONE_LINE.match(line)) and (m[1], m[2]) == (sweep, run)]
    at_once = [m for line in sweep_log if (m := AT_ONCE_LINE.match(line))]
    if len(wall) != 1 or len(at_once) != 1: raise SystemExit(f"the sweep's log names {sweep}/{run} done {len(wall)} times and its runs at once {len(at_once)} times")
    n = {r["n"] for r in shape["copy"]["curve"] + shape["copy"]["results"]}
    if len(n) != 1: raise SystemExit(f"{shape_path} evaluates {sorted(n)} strings a length: one count expected")
    (n,) = n
    if shape.get("memory_layout") != MEMORY_LAYOUT:
        raise SystemExit(f"{shape_path} has memory layout {shape.get('memory_layout')}, this tree's code {MEMORY_LAYOUT}: rebuild with a record of the same layout")
    steps = sorted({r["step"] for r in shape["copy"]["curve"]})
    copy = {k: shape["copy"][k] for k in ("train_range", "samples", "alphabet_size", "eval_seed")}
    copy |= {"results": final_results(log, n), "curve": in_run_curve(log, steps, n)}
    last = {r["length"]: r["exact_match_accuracy"] for r in copy["curve"] if r["step"] == steps[-1]}
    if [r["length"] for r in copy["results"]] != [r["length"] for r in shape["copy"]["results"]] or \
       any(round(last[r["length"]], 3) != r["exact_match_accuracy"] for r in copy["results"] if r["length"] in last):
        raise SystemExit(f"{sweep}/{run}: the final table's lengths or exact match disagree with the setting's and the last in-training evaluation's")
    prov = summ["provenance"]
    of_setting = lambda *keys: {k: shape[k] for k in keys}   # what the setting fixes; the rest is the run's
    return {**of_setting("sweep", "name", "experiment", "overrides"), "seed": int(seed), "max_steps": shape["max_steps"], "steps": summ["global_step"],
            "rows_per_step": summ["rows_per_step"], "train_tokens": summ["train_tokens"], "train_loss": summ["train_loss"],
            **of_setting("parameters", "arch", "corpus", "regularizer"), "train_seconds": round(summ["train_seconds"], 1), "wall_seconds": wall[0],
            "concurrent_runs": int(at_once[0][1]), "devices": shape["devices"], "mps": bool(at_once[0][2]), "launcher": shape["launcher"],
            "bf16": shape["bf16"], "device": prov["gpu"], "peak_gpu_gib": summ["peak_gpu_gib"], "memory_layout": shape["memory_layout"],
            "evaluation_seconds": progress.get("evaluation_seconds"), "copy": copy, "provenance": prov,
            "rebuilt": {"from": f"{source}: the run's sweep.log (in-training evaluations, final table), train_summary.json (steps, "
                                "loss, seconds, peak, provenance), lengen_progress.json (evaluation seconds); the sweep's log (wall "
                                "seconds, runs at once, MPS)",
                        "setting_from": f"results/{sweep}/{shape_path.name}", "by": "tools/rebuild_records.py",
                        "precision": "exact match exact (whole strings); token and teacher-forced accuracy as logged: 4 significant "
                                     "digits in training, 3 decimals at the end",
                        "why": why}}

def finished_runs(files:dict[str, str]) -> list[tuple[str, str]]:
    "(sweep, run) of every run the sweep's log names done."
    return [(m[1], m[2]) for line in files["sweep.log"].splitlines() if (m := DONE_LINE.match(line))]

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("logs", type=Path, help="a call's full_sweep_logs.tgz (committed beside the records it rebuilds)")
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--why", required=True, help="why the records did not come back, as each record says it")
    p.add_argument("--write", action="store_true", help="write the records that are missing (default: list them)")
    a = p.parse_args()
    with tarfile.open(a.logs) as tar: files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    for sweep, run in finished_runs(files):
        dest = a.results/sweep/f"{run}.json"
        if dest.exists(): print(f"{dest}: recorded already"); continue
        rec = rebuild(files, sweep, run, a.results, os.path.relpath(a.logs), a.why)
        if a.write: write_result(rec, a.results)
        print(f"{dest}: {'written' if a.write else 'would be written'} ({rec['steps']} steps, {rec['wall_seconds']} s)")

if __name__ == "__main__": main()
