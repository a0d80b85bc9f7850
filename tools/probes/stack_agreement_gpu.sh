#!/usr/bin/env bash
# Issue 48: is a stacked member a faithful run of its seed on the GPU? The first 2,000 steps of $EXPERIMENT (its loss
# logged every 50 steps): seed 0 trained twice alone, side by side under CUDA MPS (the run-to-run spread of one seed), and
# seeds 0-7 as one stack (lengen.train.stacked). Writes $OUT/stack_agreement.json: each run's logged losses; compare
# member 0's curve with the two standalone ones (median relative difference) against the standalone pair's.
# EXPERIMENT defaults to the baseline (no dropout): a stack draws its members' dropout masks over its (K, ...) tensors,
# so with a dropout experiment member 0's masks are not its standalone run's and the curves part from step 1 (measured
# with copy_jelassi_mamba2_45m_vpad on 2026-12-06: results/gpu/stack_agreement_h100.json, nbs/train/03_stacked.ipynb).
# The baseline, measured on 2026-12-06 (results/gpu/stack_agreement_baseline_h100.json): member 0 equals its standalone runs
# to 3e-5 (relative 1e-5) at steps 50 and 100, as the two standalone runs equal each other; from step 150 nondeterminism parts all three.
# One call on a warm or fresh machine (carry .gpu; .gpu_cache if there is one): about 8 minutes on an H200, 6 on an H100
# with nothing else on the GPU. Nothing else may share the GPU while it runs: its training seconds are then a timing too.
set -uo pipefail
export EXPERIMENT=${EXPERIMENT:-copy_jelassi_mamba2_45m_baseline}
source tools/gpu_env.sh
W=/tmp/agree; rm -rf $W; mkdir -p $W
ARGS="wandb.enabled=false max_steps=2000 eval_steps=null save_steps=2000 logging_steps=50 data.copy_task.eval_lengths=[10] data.copy_task.end_only_lengths=[] data.copy_task.eval_samples=10"
export CUDA_MPS_PIPE_DIRECTORY=$W/mps_pipe CUDA_MPS_LOG_DIRECTORY=$W/mps_log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
for r in a b; do python -m lengen.train.cli +experiment=$EXPERIMENT $ARGS seed=0 output_dir=$W/alone_$r > $W/alone_$r.log 2>&1 & done
python -m lengen.train.cli +experiment=$EXPERIMENT $ARGS 'stack.seeds=[0,1,2,3,4,5,6,7]' output_dir=$W/stack > $W/stack.log 2>&1
wait
echo quit | nvidia-cuda-mps-control
python3 - <<'PY'
import json, os, pathlib
W = pathlib.Path("/tmp/agree")
def losses(d):
    f = d/"checkpoint-2000"/"trainer_state.json"
    return [[h["step"], h["loss"]] for h in json.loads(f.read_text())["log_history"] if "loss" in h] if f.is_file() else None
out = {"experiment": os.environ["EXPERIMENT"], "alone_a": losses(W/"alone_a"), "alone_b": losses(W/"alone_b"), **{f"stack_seed{s}": losses(W/"stack"/f"seed{s}") for s in range(8)},
       "summaries": {str(p.relative_to(W)): {k: v for k, v in json.loads(p.read_text()).items() if k not in ("json", "html")}   # (machine paths)
                     for p in sorted(W.rglob("train_summary.json"))}}   # training seconds, peak memory
(pathlib.Path(os.environ["OUT"])/"stack_agreement_logs.txt").write_text(   # the logs' tails, to read: not for the repository (machine paths)
    "".join(f"== {n}\n" + (W/f"{n}.log").read_text(errors="replace")[-1500:] for n in ("alone_a", "alone_b", "stack")))
(pathlib.Path(os.environ["OUT"])/"stack_agreement.json").write_text(json.dumps(out, indent=1))
print({k: (v[:2], v[-1]) if isinstance(v, list) else None for k, v in out.items() if k != "experiment"})
PY
