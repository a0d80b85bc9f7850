"""A copy wave's progress JSON (results/gpu/copy_waveN_<gpu>_progress.json) from what tools/run_full_sweep_gpu.sh returns.

Reads the last call's files (progress_log.txt: every progress report of the wave; full_sweep_logs.tgz: the sweep's log and each
run's log) and the runs' records under results/, and writes the fields nbs/experiments/10_throughput.ipynb reads: each report's
minutes, steps and peaks (one entry per run, in `runs` order), the minute each run began, each run's first-step time, the final
peaks, and the sweep's window. Runs of a second round (begun after the first report) follow the first round's in `runs`, with
None for their steps and peaks in the reports before their first line.
Written so a wave's reports are copied by a program, not by hand from the calls' output.

    python tools/wave_progress.py <files_at> --out results/gpu/copy_wave8_h100_progress.json --what "..." --date 2026-12-07 \
        --min-left auto [--cache-carried] [--budget-left S] [--machine-seconds S] [--lease HELD WALL LEFT ...]
"""
import argparse, json, re, tarfile
from pathlib import Path

from lengen.experiments.launch import DONE_LINE   # a finished run's line in the sweep's log

REPORT = re.compile(r"^--- \d\d:\d\d:\d\d: ([\d.]+) min into the wave$")
RUN = re.compile(r"^(\w+)/([\w-]+): [\w ]+; ([\d.]+) min since it began[^;]*; step (\d+) of \d+,.*peak GPU memory ([\d.]+) GiB")   # lengen.train.progress.progress_line
RUN_NAME = re.compile(r"^(\w+)/([\w-]+): (not done|done|diverged); ")   # any run's line, to refuse one RUN does not read
GPU = re.compile(r"^GPU memory used, total; utilization: (\d+) MiB, (\d+) MiB")
WINDOW = re.compile(r"the sweep may run (\d+) s \(it began (\d+) s after this machine's first call\)")
FIRST_STEP = re.compile(r"the first step took ([\d.]+) s")

def reports(log:str) -> list[dict]:
    "One dict per progress report that names a run: minutes into the wave, and per run (sweep, run) its step, peak GiB and minutes since it began."
    out = []
    for line in log.splitlines():
        if m := REPORT.match(line): out.append({"minutes": float(m[1]), "runs": {}, "gpu": None})
        elif out and (m := RUN.match(line)): out[-1]["runs"][(m[1], m[2])] = (int(m[4]), float(m[5]), float(m[3]))
        elif out and RUN_NAME.match(line) and "no progress file yet" not in line:
            raise SystemExit(f"a run's progress line this script does not read (has progress_line changed?): {line}")
        elif out and (m := GPU.match(line)): out[-1]["gpu"] = (int(m[1]), int(m[2]))
    return [r for r in out if r["runs"]]

def wave_progress(files:Path, results:Path, what:str, date:str, cache_carried:bool, min_left, start_line:str|None=None,
                  budget_left:int|None=None, machine_seconds:int|None=None, machine_start:int|None=None, leases:list[dict]|None=None) -> dict:
    "The progress JSON of the wave whose last call returned `files` (`start_line`: the start call's 'the sweep may run' line, where the log lacks it; `leases`: each call's lease, in order)."
    if machine_start is None and leases: machine_start = round(leases[0]["held_s"] - leases[0]["wall_s"])   # the first call's held time less its wall time
    log = (files/"progress_log.txt").read_text()
    reps = reports(log)
    if not reps: raise SystemExit(f"no progress report in {files/'progress_log.txt'} names a run")
    seen = {k for p in reps for k in p["runs"]}   # (sweep, run)
    began = {k: next(round(p["minutes"] - p["runs"][k][2], 1) for p in reps if k in p["runs"]) for k in seen}   # minutes into the wave
    first_round = sorted(k for k in seen if began[k] <= reps[0]["minutes"])   # begun by the first report (a line there or not)
    keys = first_round + sorted(seen - set(first_round))   # then a second round's: the order of every list below
    with tarfile.open(files/"full_sweep_logs.tgz") as tar:
        text = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.name.endswith("sweep.log")}
    first = [float(FIRST_STEP.search(text[f"runs/{s}/{r}/sweep.log"])[1]) for s, r in keys]
    records = [json.loads((results/s/f"{r}.json").read_text()) for s, r in keys]
    prov = {(x["provenance"]["commit"], x["provenance"]["gpu"]) for x in records}
    if len(prov) != 1: raise SystemExit(f"the wave's records name several commits or GPUs: {sorted(prov)}")
    (commit, gpu), = prov
    out = {"what": what, "date": date, "commit": commit, "device": gpu,
           "runs": [r for _, r in keys], "sweeps": [s for s, _ in keys], "triton_cache_carried": cache_carried,
           "began_minutes": [began[k] for k in keys], "first_step_seconds": first,
           "reports": [{"minutes": p["minutes"], "step": [p["runs"].get(k, (None,))[0] for k in keys],
                        "peak_gpu_gib": [p["runs"].get(k, (None, None))[1] for k in keys], "gpu_memory_used_mib": p["gpu"][0]}
                       for p in reps if set(first_round) <= set(p["runs"])],   # a later run's values are None before it began
           "final_peak_gpu_gib": [x["peak_gpu_gib"] for x in records], "gpu_memory_total_mib": (reps[0]["gpu"] or (None, None))[1]}
    if w := WINDOW.search(log) or WINDOW.search(start_line or ""):   # the start call's line (the script writes it into the log)
        done = [float(m[3]) for line in text["sweep.log"].splitlines() if (m := DONE_LINE.match(line))]
        if not done: raise SystemExit("the sweep's log names no run done: no window to record")
        out["window"] = {"sweep_may_run_s": int(w[1]), "began_after_first_call_s": int(w[2]), "first_run_ended_s": done[0],   # the log's first: a second round's runs end sooner
                         "min_left_s": min_left, "budget_left_s": budget_left, "machine_seconds": machine_seconds,
                         **({"machine_start_s": machine_start} if machine_start is not None else {}), **({"leases": leases} if leases else {}),
                         "note": "the start call's line ('the sweep may run ...') and the sweep's log (its first 'done after'); budget_left_s: the session's device time `status` showed before the machine's first call; machine_seconds: the sweep's MACHINE_SECONDS"
                                 + ("; machine_start_s: held seconds the machine took to start (the first call's lease held_s less its wall_s; the budget may count held time in part)" if machine_start is not None else "")
                                 + ("; leases: each call's reply, in order (held_s: the machine's hold so far; wall_s: the call's command; budget_left_s: device time left after it)" if leases else "")}
    return out

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", type=Path, help="the folder the last call's files came back to (files_at)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--what", required=True, help="one sentence: which wave, machine and runs")
    p.add_argument("--date", required=True, help="the wave's day, YYYY-MM-DD")
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--start-line", default=None, help="the start call's 'the sweep may run N s (it began M s after ...)' line, for a log "
                   "written before the script kept it")
    p.add_argument("--cache-carried", action="store_true", help="the calls carried .gpu_cache/triton_cache.tar.xz")
    p.add_argument("--budget-left", type=int, default=None, help="the device seconds `status` showed before the first call")
    p.add_argument("--machine-seconds", type=int, default=None, help="the sweep's MACHINE_SECONDS")
    p.add_argument("--machine-start", type=int, default=None, help="held seconds the machine took to start (default: from the first --lease)")
    p.add_argument("--lease", nargs=3, type=float, action="append", metavar=("HELD", "WALL", "LEFT"),
                   help="one per call, in order: the reply's lease held_s, its wall_s, and the lease's budget_left_s")
    p.add_argument("--min-left", required=True, help="the sweep's MIN_LEFT (seconds, or auto; the script's default is 1200)")
    a = p.parse_args()
    min_left = a.min_left if a.min_left == "auto" else int(a.min_left)
    a.out.write_text(json.dumps(wave_progress(a.files, a.results, a.what, a.date, a.cache_carried, min_left, a.start_line, a.budget_left, a.machine_seconds, a.machine_start,
                                           [{"held_s": h, "wall_s": w, "budget_left_s": int(b)} for h, w, b in a.lease or []]), indent=1) + "\n")
    print(f"wrote {a.out}")

if __name__ == "__main__": main()
