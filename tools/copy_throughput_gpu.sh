#!/usr/bin/env bash
# Where the shipped copy run's GPU time goes, and how many copy runs one H200 trains at once (issue: paper-scale sweep).
# Run on the H200 from the repository root, carrying .gpu (wheels, kernels_slim.tar.gz):
#     run(carry=[".gpu"], command="STAGES='prof chunk evalt mps4 mps8' bash tools/copy_throughput_gpu.sh")
# Stages:
#   prof    tools/profile_train.py on copy_jelassi_mamba2_45m_vpad with eager blocks: CUDA time per kernel (and the
#           machine's first Mamba2 run: Triton's compilation and autotuning, cached on disk for the later stages)
#   chunk   lengen_bench --train-loop at chunk_size 256 (shipped), 128, 64
#   evalt   seconds of the shipped copy evaluation (10 lengths to 1000, 100 strings each) of a random-init 45M model
#   mpsN    N lengen_bench --train-loop processes at once under CUDA MPS (N = 2, 4, 6, 8, ...)
#   plainN  the same without MPS
#   cells   the `gpu` cells of nbs/models/mamba2/01_packed.ipynb (packed vs padded loss and gradients, graphed) and of
#           nbs/models/mamba2/03_step.ipynb nbs/ops/03_decode.ipynb (the graphed greedy decoder against HF generate) and nbs/eval/01_copy_task.ipynb (the
#           shipped copy evaluation timed with it and with generate) and nbs/models/mamba2/02_scan.ipynb nbs/regularizers/01_initial_state.ipynb (the fused
#           mixer from an initial state against the reference), through tools/run_cells.py
#   pack    one run each with data.pack_examples=true (shipped) and =false, same seed: speed, and the logged loss at
#           steps 50 and 500 of both (the loss curves must agree within bf16 noise)
# Out ($OUT): one log per stage, the kernel tables, throughput.json (every stage's reports).
set -uo pipefail
OUT=${OUT:-$PWD/tp_out}; mkdir -p "$OUT"; L=/tmp/tp_logs; mkdir -p $L   # logs packed into $OUT/tp_logs.tgz at the end (8 files come back)
source tools/gpu_env.sh
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
W=/tmp/tp; mkdir -p $W
EXP=copy_jelassi_mamba2_45m_vpad
STEPS=${STEPS:-600}
PROF_SET=${PROF_SET:-}
NOEVAL="--set eval_steps=null --set data.copy_task.eval_lengths=[10] --set data.copy_task.eval_samples=10"
bench() {   # NAME [lengen_bench options]: one train-loop bench
  local name=$1; shift
  timeout ${STAGE_LIMIT:-200} python3 -m lengen.experiments.bench --train-loop $EXP --steps $STEPS "$@" ${BENCH_SET:-} --out $W/$name.json > $L/$name.log 2>&1
  echo "$name: rc=$? $(python3 -c "import json; r=json.load(open('$W/$name.json')); print('steady', round(1/r['steady_step_s'],1), 'steps/s; bare', round(1/r['bare_step_s'],1), 'first', round(r['first_step_s'],1))" 2>/dev/null)"
}
together() {   # N MPS(0/1): N benches at once
  local n=$1 mps=$2 tag=$([ $2 = 1 ] && echo mps || echo plain)$1
  if [ $mps = 1 ]; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    nvidia-cuda-mps-control -d && echo "MPS started"
  fi
  local t0=$(date +%s)
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader -lms 500 > $L/${tag}_util.txt & local smi=$!
  local pids=""; for i in $(seq $n); do bench ${tag}_$i --set seed=$i & pids="$pids $!"; done; wait $pids   # (not the nvidia-smi logger)
  echo "$tag wall $(( $(date +%s) - t0 )) s"; kill $smi
  python3 -c "
import json, glob
rs = [json.load(open(f)) for f in sorted(glob.glob('$W/${tag}_*.json'))]
print('$tag', len(rs), 'runs, aggregate steady steps/s', round(sum(1/r['steady_step_s'] for r in rs), 1), [round(1/r['steady_step_s'], 1) for r in rs])"
  if [ $mps = 1 ]; then echo quit | nvidia-cuda-mps-control; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; fi
}
python3 -c "import torch; from lengen.models.mamba2.model import mamba2_kernel_path as k; print(torch.__version__, torch.cuda.get_device_name(), 'fused:', k()['fused'])"
for s in ${STAGES:-prof chunk evalt mps4 mps8}; do
  case $s in
    prof*) g=$([ $s = profg ] && echo true || echo false)   # prof: eager blocks; profg: CUDA-graphed blocks (as shipped)
           timeout 300 python3 tools/profile_train.py $EXP --set max_steps=200 $NOEVAL --set compile.cuda_graphs=$g $PROF_SET \
             --at 100 --steps 10 --out $W/$s > $L/$s.log 2>&1; echo "$s rc=$?"; for f in $W/$s/*; do cp $f $L/${s}_$(basename $f); done; cat $W/$s/summary.json
           python3 -c "print(open('$W/$s/torch_cuda.txt').read()[:6000])" 2>/dev/null ;;
    chunk) for c in 256 128 64; do bench chunk$c $NOEVAL --set arch.chunk_size=$c; done ;;
    evalt) timeout 300 python3 - > $L/evalt.log 2>&1 <<'PY'
import time, torch
from lengen.compose import compose_config
from lengen.data import build_tokenizer
from lengen.models.build import build_model
from lengen.eval.copy_task import evaluate_copy
cfg = compose_config("copy_jelassi_mamba2_45m_vpad", ["wandb.enabled=false"])
tok = build_tokenizer(cfg); model = build_model(cfg, tok).cuda().eval()
ct = cfg.data.copy_task
for bs in (64, 100):
    for dtype in (torch.float32, torch.bfloat16):
        torch.cuda.synchronize(); t0 = time.time()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
            rows = evaluate_copy(model, tok, ct.eval_lengths, ct.eval_samples, ct.alphabet_size, ct.eval_seed, bs, progress=False)
        torch.cuda.synchronize(); print("batch", bs, dtype, "seconds", round(time.time() - t0, 1), [round(r["exact_match_accuracy"], 2) for r in rows], flush=True)
PY
           echo "evalt rc=$?"; cat $L/evalt.log | tail -5 ;;
    cells) for nb in nbs/models/mamba2/01_packed.ipynb nbs/models/mamba2/03_step.ipynb nbs/ops/03_decode.ipynb nbs/eval/01_copy_task.ipynb nbs/models/mamba2/02_scan.ipynb nbs/regularizers/01_initial_state.ipynb; do
             [ -f $nb ] || continue; timeout 240 python3 tools/run_cells.py $nb > $L/cells_$(basename $nb .ipynb).txt 2>&1
             echo "$nb: rc=$?"; tail -12 $L/cells_$(basename $nb .ipynb).txt; done ;;
    pack)  for p in true false; do bench pack_$p $NOEVAL --set data.pack_examples=$p
             grep -o "'loss': '[0-9.]*'" $L/pack_$p.log | sed -n '1p;10p' | tr '\n' ' '; echo "(loss at steps 50, 500: pack_examples=$p)"; done ;;
    mps*)   together ${s#mps} 1 ;;
    plain*) together ${s#plain} 0 ;;
  esac
done
python3 -c "
import json, pathlib
print(json.dumps({p.stem: json.loads(p.read_text()) for p in sorted(pathlib.Path('$W').glob('*.json'))}, indent=1))" > $OUT/throughput.json
tar czf $OUT/tp_logs.tgz -C $L .
