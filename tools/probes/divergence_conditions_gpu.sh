#!/usr/bin/env bash
# Issue 48: under which condition does a copy run diverge? Wave 7 of copy_full_scale (the stock path: kernels.liger=false)
# lost baseline seed 5 near step 650 and pre-linear seed 4 near step 1,550 while a process outside CUDA MPS shared the
# GPU with four runs under MPS; rerun without that neighbour, both passed those steps. Each repeat here trains the same
# four runs (baseline seed 5 twice, pre-linear seed 4 twice; 2,000 steps, no evaluation, trace_nonfinite=true so a
# divergence names the module and phase where the first NaN or inf arose) under MPS, once WITH a neighbour outside MPS
# (a copy run of vpad seed 0 started without the MPS pipe, as a sweep's stray process would be) and once WITHOUT.
# Writes $OUT/divergence_conditions.json: per condition and repeat, each run's status (finished / diverged with its
# first_nonfinite / failed with its log's tail) and training seconds; commit it as results/gpu/divergence_conditions_<gpu>.json.
# One call on a warm or fresh machine (carry .gpu; .gpu_cache if there is one). REPEATS (default 2) x 2 conditions:
# about 3 minutes a condition on an H200 (measure it). RUNS_PER_SEED=1 on an H100 (80 GB) if four and a neighbour
# do not fit (about 13-16 GiB a run without evaluation). STEPS sets max_steps, so past step 1,000 (where the cosine
# begins to decay) a repeat's learning rates are not its run's; tools/probes/divergence_repeats_gpu.sh repeats runs on
# their own 20,000-step schedule, stopped by a time limit.
set -uo pipefail
source tools/gpu_env.sh; source tools/probes/copy_probe_env.sh
W=/tmp/diverge; rm -rf $W; mkdir -p $W
REPEATS=${REPEATS:-2}; RUNS_PER_SEED=${RUNS_PER_SEED:-2}; STEPS=${STEPS:-2000}
ARGS="$COPY_PROBE_ARGS max_steps=$STEPS save_steps=$STEPS kernels.liger=false"
start_mps $W
train() {   # NAME EXPERIMENT SEED [env...]: one run in $W/<condition>/<repeat>/NAME
  local dir=$1 exp=$2 seed=$3; shift 3
  env "$@" python3 -m lengen.train.cli +experiment=$exp $ARGS seed=$seed output_dir=$dir > $dir.log 2>&1
}
for r in $(seq 1 $REPEATS); do
  for cond in with_neighbour without_neighbour; do
    D=$W/$cond/$r; mkdir -p $D; pids=()
    if [ $cond = with_neighbour ]; then   # outside MPS: no MPS pipe directory in its environment, so a CUDA context of its own
      train $D/neighbour copy_jelassi_mamba2_45m_vpad 0 & nb=$!
      sleep 20   # let it reach its training loop first, as the stray process of wave 7 was already running
    fi
    for k in $(seq 1 $RUNS_PER_SEED); do
      train $D/baseline-seed5-$k copy_jelassi_mamba2_45m_baseline 5 CUDA_MPS_PIPE_DIRECTORY=$PIPE & pids+=($!)
      train $D/pre_linear-seed4-$k copy_jelassi_mamba2_45m_pre_linear 4 CUDA_MPS_PIPE_DIRECTORY=$PIPE & pids+=($!)
    done
    wait "${pids[@]}"
    [ $cond = with_neighbour ] && { kill $nb 2>/dev/null; wait $nb 2>/dev/null; }
    echo "$(date +%T) repeat $r $cond: done"; grep -l '"diverged"' $D/*/train_summary.json 2>/dev/null
  done
done
stop_mps
python3 - <<'PY'
import json, os, pathlib, torch
W = pathlib.Path("/tmp/diverge")
def run(d):
    s = json.loads((d/"train_summary.json").read_text()) if (d/"train_summary.json").is_file() else None
    log = pathlib.Path(f"{d}.log").read_text(errors="replace") if pathlib.Path(f"{d}.log").is_file() else ""
    status = "diverged" if s and s.get("diverged") else "finished" if s else "failed"
    return {"status": status, "diverged": s.get("diverged") if s else None,
            "train_seconds": s.get("train_seconds") if s else None, "log_tail": log[-600:] if status == "failed" else None}
out = {"what": "copy runs of wave 7's diverged seeds (stock path, trace_nonfinite; steps: below) under MPS, with and without a neighbour outside MPS",
       "gpu": torch.cuda.get_device_name(), "commit": os.environ.get("LENGEN_SOURCE_COMMIT"), "steps": int(os.environ.get("STEPS", 2000)),
       "conditions": {c.name: {r.name: {d.name: run(d) for d in sorted(r.iterdir()) if d.is_dir()} for r in sorted(c.iterdir())}
                      for c in sorted(W.iterdir()) if c.is_dir() and c.name.endswith("neighbour")}}
out["rate"] = {c: f"{sum(v['status'] == 'diverged' for r in reps.values() for n, v in r.items() if n != 'neighbour')} of "
                  f"{sum(1 for r in reps.values() for n in r if n != 'neighbour')} runs diverged" for c, reps in out["conditions"].items()}
(pathlib.Path(os.environ["OUT"])/"divergence_conditions.json").write_text(json.dumps(out, indent=1))
print(json.dumps(out["rate"], indent=1))
PY
