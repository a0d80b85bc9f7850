#!/usr/bin/env bash
# Issue 48, later GPU calls (carry .gpu and .gpu_probe):
#   STAGE=e2e    the stacked engine end to end (tools/probes/stack_run.py: K members, a short run with its evaluations)
#   STAGE=probe  the stacked model's training step with torch.compile's fused elementwise kernels (K members, chunk sizes),
#                the stacked greedy decoder
#   STAGE=m85    the 85M step with CUDA graphs and one micro-batch of 64 rows (no accumulation), through tools/profile_train.py
set -uo pipefail
source tools/gpu_env.sh
case ${STAGE:-e2e} in
  e2e) timeout ${E2E_LIMIT:-420} python tools/probes/stack_run.py ${K:-16} ${STEPS:-400} ${SETTING:-vpad} "$OUT/stack_run_k${K:-16}.json" 2>&1 | grep -v -i warn | grep -E "^\[|Error|error" | tail -n 30 ;;
  probe) python tools/probes/stack_probe.py --model --out "$OUT" 2>&1 | grep -v -i warn | tail -n 12 ;;
  m85)
    python3 - <<'PY'
import numpy as np, datasets
rows = np.random.default_rng(0).integers(0, 50277, size=(64 * 45, 2048), dtype=np.int64)
datasets.Dataset.from_dict({"input_ids": rows}).save_to_disk("/tmp/rows85")
PY
    for v in "graphs64:compile.cuda_graphs=true per_device_train_batch_size=64 gradient_accumulation_steps=1" \
             "graphs64c128:compile.cuda_graphs=true per_device_train_batch_size=64 gradient_accumulation_steps=1 arch.chunk_size=128"; do
      name=${v%%:*}; sets=""; for o in ${v#*:}; do sets="$sets --set $o"; done
      mkdir -p "$OUT/m85_$name"
      timeout 200 python tools/profile_train.py mamba2_85m_lengen_pile_baseline --set wandb.enabled=false --set pretrained_tokenizer=.gpu_probe/tok50277 \
        --set data.path=/tmp/rows85 --set max_steps=40 --set kernels.liger=true --set kernels.rms_norm=false $sets \
        --at 15 --steps 5 --out "$OUT/m85_$name" 2>&1 | grep -E "median_step_s|first_step|Error|error" | tail -n 5
    done ;;
esac
