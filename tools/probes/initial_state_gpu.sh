#!/usr/bin/env bash
# Issue 23 on the H200: what non-zero initial states cost a Mamba2 training step (goal: at most 1.05x the baseline step,
# the fused path kept), and the notebook's fused-vs-reference agreement cell. Run from the repository root, carrying .gpu:
#     run(carry=[".gpu"], command="SHAPES=mamba2-130m bash tools/probes/initial_state_gpu.sh")
#     run(command="SHAPES=mamba2-1.3b CELLS=0 bash tools/probes/initial_state_gpu.sh")   # three rounds of 1.3B: a call of its own
# Out ($OUT): initial_state_bench_<shape>.json (lengen_bench reports: step time of each variant and its ratio to the
# baseline) and initial_state_cells.txt (tools/run_cells.py on nbs/regularizers/01_initial_state.ipynb).
set -uo pipefail
OUT=${OUT:-$PWD/is_out}; mkdir -p "$OUT"
source tools/gpu_env.sh
# --repeats: the variants are timed in turn, REPEATS rounds, each keeping its fastest round. Timed once each, one after
# another, a 130M step (~0.1 s) drifted by 7.5% between two identical baselines (results/gpu/initial_state_bench_order_h200.json).
TEXT="data.synthetic=''+data.padded_examples=false+data.dataset_name=x"   # passing needs packed text rows (the bench feeds its own)
VARIANTS="baseline,initial_state.mode=noise+$TEXT,initial_state.mode=noise+initial_state.noise=fitted+$TEXT,initial_state.mode=passing+$TEXT"
for shape in ${SHAPES:-mamba2-130m mamba2-1.3b}; do
  timeout ${BENCH_LIMIT:-540} python3 -m lengen.experiments.bench $shape --variants "$VARIANTS" --seq-len 2048 --batch ${BATCH:-8} --steps 20 \
    --warmup 5 --repeats ${REPEATS:-3} --out $OUT/initial_state_bench_$shape.json > $OUT/initial_state_bench_$shape.log 2>&1
  echo "$shape: rc=$? $(python3 -c "import json; r=json.load(open('$OUT/initial_state_bench_$shape.json'))['results']; print({k.split('+')[0] + ('/fitted' if 'fitted' in k else ''): round(v['ratio'], 3) for k, v in r.items()})" 2>/dev/null)"
done
[ "${CELLS:-1}" = 0 ] && exit 0
timeout 200 python3 tools/run_cells.py nbs/regularizers/01_initial_state.ipynb > $OUT/initial_state_cells.txt 2>&1
echo "cells: rc=$?"; tail -5 $OUT/initial_state_cells.txt
