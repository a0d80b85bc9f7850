#!/usr/bin/env bash
# Issue 48's profile of the two training steps on the GPU machine (run from the repository root; carry .gpu and .gpu_probe):
#   STAGE=copy  tools/probes/stack_probe.py (K copy models as one batched model, per member) and the shipped copy step
#               (copy_jelassi_mamba2_45m_vpad) through tools/profile_train.py
#   STAGE=m85   the 85M step at its shipped shape (131,072 tokens a step, T = 2048, the corpus's 50,277-token vocabulary,
#               Liger's fused loss as the sweeps run it) on random token rows, through tools/profile_train.py
# Everything lands in $OUT (copy/, m85/, stack_probe.json).
set -uo pipefail
source tools/gpu_env.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
case ${STAGE:-copy} in
  copy)
    python tools/probes/stack_probe.py --model --out "$OUT" --ks "${KS:-1,4,8,16}" 2>&1 | grep -v Warning | tail -n 20
    python tools/probes/stack_probe.py --out "$OUT" --ks "${KS:-1,4,8,16}" 2>&1 | grep -v Warning | tail -n 20
    mkdir -p "$OUT/copy"
    python tools/profile_train.py copy_jelassi_mamba2_45m_vpad --set max_steps=260 --set eval_steps=null --set wandb.enabled=false \
      --set 'data.copy_task.eval_lengths=[10]' --set 'data.copy_task.end_only_lengths=[]' --set data.copy_task.eval_samples=10 \
      --at 150 --steps 20 --out "$OUT/copy" 2>&1 | grep -v -i warn | tail -n 25 ;;
  m85)
    python3 - <<'PY'
import numpy as np, datasets
rows = np.random.default_rng(0).integers(0, 50277, size=(64 * 45, 2048), dtype=np.int64)
datasets.Dataset.from_dict({"input_ids": rows}).save_to_disk("/tmp/rows85")
PY
    mkdir -p "$OUT/m85"
    python tools/profile_train.py mamba2_85m_lengen_pile_baseline --set wandb.enabled=false --set pretrained_tokenizer=.gpu_probe/tok50277 \
      --set data.path=/tmp/rows85 --set max_steps=40 --set kernels.liger=true --set kernels.rms_norm=false \
      --at 15 --steps 5 --out "$OUT/m85" 2>&1 | grep -v -i warn | tail -n 25 ;;
esac
