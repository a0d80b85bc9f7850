#!/usr/bin/env bash
# Issue 48: catch a copy run's divergence with the tracer on. Three paper-scale copy runs have diverged, each a sudden NaN
# between steps 650 and 1,550 (near the peak of the learning rate), and none of their traced repeats did. Those repeats
# were short runs (max_steps=1000-2000), whose cosine decays from step 1,000, so past that step they did not repeat the
# runs' learning rates. Here every repeat trains on its run's own 20,000-step schedule, with trace_nonfinite=true (a
# divergence names the module and phase where the first NaN or inf arose) and evaluation off, and is stopped by a time
# limit once past the divergence steps: RUNS of them at once under CUDA MPS, as a sweep runs them, for ROUNDS rounds.
# Each round cycles through SPECS (experiment:seed, the diverged runs by default). Writes $OUT/divergence_repeats.json:
# per round and run its status (diverged with its first_nonfinite and step / finite to the last logged step / failed
# with its log's tail); commit it as results/gpu/divergence_repeats_<gpu>.json, or fold it into the divergence JSON.
# One call (carry .gpu; .gpu_cache if there is one): RUNS=3 on an H100, 5 on an H200 (about 16 GiB a run without
# evaluation), SECONDS_PER_ROUND=150 reaches step ~3,000 traced with three at once on an H100 (185 s reached 3,900 on 2026-12-06).
# OVERRIDES adds to each run (e.g. kernels.liger=false: the stock path of wave 7's two runs).
set -uo pipefail
source tools/gpu_env.sh
W=/tmp/diverge_repeats; rm -rf $W; mkdir -p $W
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then RUNS=${RUNS:-5}; else RUNS=${RUNS:-3}; fi
ROUNDS=${ROUNDS:-2}; SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-150}; OVERRIDES=${OVERRIDES:-}
SPECS=${SPECS:-"copy_jelassi_mamba2_45m_baseline:5 copy_jelassi_mamba2_45m_pre_linear:4 copy_jelassi_mamba2_45m_baseline:102"}
export SECONDS_PER_ROUND OVERRIDES SPECS   # the summary below records them
ARGS="wandb.enabled=false eval_steps=null save_steps=100000 logging_steps=50 trace_nonfinite=true"
ARGS="$ARGS data.copy_task.eval_lengths=[10] data.copy_task.end_only_lengths=[] data.copy_task.eval_samples=10 $OVERRIDES"
PIPE=$W/mps_pipe; mkdir -p $PIPE $W/mps_log
CUDA_MPS_PIPE_DIRECTORY=$PIPE CUDA_MPS_LOG_DIRECTORY=$W/mps_log nvidia-cuda-mps-control -d
read -ra specs <<< "$SPECS"; i=0
for r in $(seq 1 $ROUNDS); do
  mkdir -p $W/round$r; pids=()
  for k in $(seq 1 $RUNS); do
    spec=${specs[$((i % ${#specs[@]}))]}; i=$((i + 1)); exp=${spec%%:*}; seed=${spec##*:}
    d=$W/round$r/${exp#copy_jelassi_mamba2_45m_}-seed$seed-$k
    CUDA_MPS_PIPE_DIRECTORY=$PIPE timeout $SECONDS_PER_ROUND python3 -m lengen.train.cli +experiment=$exp $ARGS seed=$seed output_dir=$d > $d.log 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"; echo "$(date +%T) round $r: done"; grep -l '"diverged"' $W/round$r/*/train_summary.json 2>/dev/null
done
echo quit | CUDA_MPS_PIPE_DIRECTORY=$PIPE nvidia-cuda-mps-control
python3 - <<'PY'
import json, os, pathlib, re, torch
W = pathlib.Path("/tmp/diverge_repeats")
def run(log):
    d, text = log.with_suffix(""), log.read_text(errors="replace")
    s = json.loads((d/"train_summary.json").read_text()) if (d/"train_summary.json").is_file() else None
    losses = re.findall(r"\{'loss': '([^']+)'", text)
    if s and s.get("diverged"): return {"status": "diverged", "diverged": s["diverged"]}   # with first_nonfinite: the tracer's latch
    if losses: return {"status": "finite", "steps_reached": 50 * len(losses), "last_logged_loss": float(losses[-1])}
    return {"status": "failed", "log_tail": text[-600:]}
rounds = {r.name: {log.stem: run(log) for log in sorted(r.glob("*.log"))} for r in sorted(W.glob("round*"))}
runs = [v for rs in rounds.values() for v in rs.values()]
out = {"what": "traced repeats of diverged copy runs on their own 20,000-step schedule, several at once under MPS, each stopped by a time limit",
       "gpu": torch.cuda.get_device_name(), "commit": os.environ.get("LENGEN_SOURCE_COMMIT"), "specs": os.environ.get("SPECS"),
       "overrides": os.environ.get("OVERRIDES", ""), "seconds_per_round": int(os.environ.get("SECONDS_PER_ROUND", 150)), "rounds": rounds,
       "rate": f"{sum(v['status'] == 'diverged' for v in runs)} of {len(runs)} runs diverged"}
(pathlib.Path(os.environ["OUT"])/"divergence_repeats.json").write_text(json.dumps(out, indent=1))
print(json.dumps({"rate": out["rate"], "rounds": rounds}, indent=1)[:3000])
PY
