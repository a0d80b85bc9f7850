#!/usr/bin/env bash
# Issue 48: catch a copy run's divergence with the tracer on. Three paper-scale copy runs have diverged, between steps
# 650 and 1,550 (the learning rate's warm-up ends at step 1,000; a pattern noticed after the fact), and none of their
# traced repeats did. Most of those repeats were short runs (max_steps=1000-2000), whose cosine decays from step 1,000,
# so past that step they did not repeat the runs' learning rates. Here every repeat trains on its run's own 20,000-step
# schedule and code path, with trace_nonfinite=true (a divergence names the module and phase where the first NaN or inf
# arose) and evaluation off, and is stopped by a time limit: RUNS of them at once under CUDA MPS, as a sweep runs them,
# for ROUNDS rounds, each round taking the next SPECS in turn.
# SPECS: space-separated EXPERIMENT:SEED:STEP[:OVERRIDE,OVERRIDE...], STEP being where the recorded run diverged (a
# repeat counts in `rate` only once it has logged a finite loss past it). The default: the three diverged runs, wave 7's
# two on the stock path they ran on (kernels.liger=false), the noise floor's seed 102 on the shipped path.
# Writes $OUT/divergence_repeats.json: per round and run its status (diverged: its `diverged` record, with the tracer's
# first_nonfinite / stopped: the time limit ended it, with the last step logged / failed: its exit status and log's tail)
# and whether it passed its STEP; commit it as results/gpu/divergence_repeats_<gpu>.json.
# One call (carry .gpu; .gpu_cache, or the first step takes ~95 s of each round): RUNS=3 on an H100, 5 on an H200
# (about 16 GiB a run without evaluation). SECONDS_PER_ROUND=150 reaches step ~3,000 traced with three at once on an
# H100 (185 s reached 3,900 on 2026-12-06); check `passed_step` in the output. A fresh machine's first runs spend most of
# their first two minutes before training (2026-12-06, ROUNDS=2 SECONDS_PER_ROUND=120 on a fresh H100: round 1 reached
# steps 650-700, round 2 2,200-2,350), so round 1 gets FIRST_ROUND_SECONDS (default SECONDS_PER_ROUND + 90).
set -uo pipefail
source tools/gpu_env.sh; source tools/probes/copy_probe_env.sh
W=/tmp/diverge_repeats; rm -rf $W; mkdir -p $W
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then RUNS=${RUNS:-5}; else RUNS=${RUNS:-3}; fi
ROUNDS=${ROUNDS:-2}; SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-150}; FIRST_ROUND_SECONDS=${FIRST_ROUND_SECONDS:-$((SECONDS_PER_ROUND + 90))}
SPECS=${SPECS:-"copy_jelassi_mamba2_45m_baseline:5:650:kernels.liger=false copy_jelassi_mamba2_45m_pre_linear:4:1550:kernels.liger=false copy_jelassi_mamba2_45m_baseline:102:1450"}
export RUNS ROUNDS SECONDS_PER_ROUND FIRST_ROUND_SECONDS SPECS   # the summary below records them
ARGS="$COPY_PROBE_ARGS save_steps=100000"
start_mps $W
read -ra specs <<< "$SPECS"; i=0
for r in $(seq 1 $ROUNDS); do
  mkdir -p $W/round$r; pids=(); dirs=()
  for k in $(seq 1 $RUNS); do
    IFS=: read -r exp seed step extra <<< "${specs[$((i % ${#specs[@]}))]}"; i=$((i + 1))
    d=$W/round$r/${exp#copy_jelassi_mamba2_45m_}-seed$seed-$k; echo "$step" > $d.step; echo "${extra:-}" > $d.overrides
    CUDA_MPS_PIPE_DIRECTORY=$PIPE timeout $([ $r = 1 ] && echo $FIRST_ROUND_SECONDS || echo $SECONDS_PER_ROUND) python3 -m lengen.train.cli +experiment=$exp $ARGS ${extra//,/ } \
      seed=$seed output_dir=$d > $d.log 2>&1 &
    pids+=($!); dirs+=($d)
  done
  for j in "${!pids[@]}"; do wait "${pids[$j]}"; echo $? > "${dirs[$j]}.rc"; done   # 124: the time limit; 3: diverged
  echo "$(date +%T) round $r: done"; grep -l '"diverged"' $W/round$r/*/train_summary.json 2>/dev/null
done
stop_mps
python3 - <<'PY'
import json, math, os, pathlib, re, torch
W = pathlib.Path("/tmp/diverge_repeats")
def run(log):
    d, text = log.with_suffix(""), log.read_text(errors="replace")
    rc, step = int(d.with_suffix(".rc").read_text()), int(d.with_suffix(".step").read_text())
    s = json.loads((d/"train_summary.json").read_text()) if (d/"train_summary.json").is_file() else None
    losses = [float(x) for x in re.findall(r"\{'loss': '([^']+)'", text)]   # one every 50 steps (logging_steps)
    finite = next((i for i, x in enumerate(losses) if not math.isfinite(x)), len(losses))   # those logged before any NaN
    out = {"rc": rc, "overrides": d.with_suffix(".overrides").read_text().strip(), "divergence_step": step,
           "last_finite_step": 50 * finite, "passed_step": 50 * finite > step}
    if s and s.get("diverged") or finite < len(losses): return {"status": "diverged", "diverged": s and s.get("diverged"), **out}
    if rc == 124: return {"status": "stopped", **out}
    return {"status": "failed", "log_tail": text[-600:], **out}
rounds = {r.name: {log.stem: run(log) for log in sorted(r.glob("*.log"))} for r in sorted(W.glob("round*"))}
runs = [v for rs in rounds.values() for v in rs.values()]
counted = [v for v in runs if v["status"] == "diverged" or v["passed_step"]]
out = {"what": "traced repeats of diverged copy runs on their own 20,000-step schedule and code path, several at once under MPS, each stopped by a time limit",
       "gpu": torch.cuda.get_device_name(), "commit": os.environ.get("LENGEN_SOURCE_COMMIT"),
       **{k.lower(): os.environ[k] for k in ("SPECS", "RUNS", "SECONDS_PER_ROUND", "FIRST_ROUND_SECONDS")}, "rounds": rounds,
       "rate": f"{sum(v['status'] == 'diverged' for v in counted)} of {len(counted)} runs diverged (those that diverged or passed their run's divergence step)"}
(pathlib.Path(os.environ["OUT"])/"divergence_repeats.json").write_text(json.dumps(out, indent=1))
print(json.dumps({"rate": out["rate"], "rounds": rounds}, indent=1)[:3000])
PY
