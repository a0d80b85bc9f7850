#!/usr/bin/env bash
# Issue 42 on the H200: lengen's Mamba2 GPU paths under transformers 5.25 against the image's 5.17, on one machine.
#
# Before (on the CPU machine, in the repository root): build .gpu as usual (tools/gpu_bundle.sh: wheels and
# kernels_slim.tar.gz), then put transformers 5.25 and what it needs beyond the image into .gpu_tf525
# (a folder of its own, carried only by these calls: every other GPU script keeps the image's 5.17):
#     mkdir -p .gpu_tf525 && python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#       --platform any -d .gpu_tf525 transformers==5.25.0 kernels==0.19.1 tomlkit huggingface_hub==2.4.0 \
#       httpx2==2.16.2 httpcore2==2.16.2 truststore anyio idna h11 click typing_extensions
# (transformers 5.25 requires kernels>=0.19.1,<0.20 and huggingface_hub>=2.4, whose httpx2 the image lacks; the image's
# 5.17 needs huggingface_hub<2, so these stay in their own folder, /tmp/tf525, ahead on PYTHONPATH only for the 5.25 runs.)
# That is about 18 MB; with .gpu (36 MB) and the tree (12.5 MB) the call carries ~66 of its 67 MB (64 MiB): carry .gpu and .gpu_tf525, nothing else (.gpu_cache stays behind).
# Then, from the repository root on the GPU machine, one call a stage (each well inside 10 minutes):
#     run(carry=[".gpu", ".gpu_tf525"], command="STAGES='probe' bash tools/probes/tf525_gpu.sh")      # ~6 min on a warm Triton cache
#   on a machine's first call the 5.17 dump autotunes Triton's kernels first (too slow for one call), so there take the
#   probe in two calls back to back, the dumps kept in /tmp/tf525_probe between them:
#     run(..., command="STAGES='probe' PROBE_VERSIONS=517 bash tools/probes/tf525_gpu.sh")
#     run(..., command="STAGES='probe' PROBE_VERSIONS=525 bash tools/probes/tf525_gpu.sh")              # then compared
#     run(carry=[".gpu", ".gpu_tf525"], command="STAGES='copy' bash tools/probes/tf525_gpu.sh")       # ~5 min (first steps autotune)
#     run(carry=[".gpu", ".gpu_tf525"], command="STAGES='mfu' bash tools/probes/tf525_gpu.sh")        # ~6 min
#     run(carry=[".gpu", ".gpu_tf525"], command="STAGES='cells' bash tools/probes/tf525_gpu.sh")      # ~8 min
#     run(carry=[".gpu", ".gpu_tf525"], command="STAGES='kernels' bash tools/probes/tf525_gpu.sh")    # ~8 min
# The probe beside a sweep wave (tools/run_full_sweep_gpu.sh start, detached, on the same GPU): only the probe shares the
# GPU (the copy and mfu stages time steps and need it alone); its dumps then take longer, so give each PROBE_LIMIT seconds
# (default 280), e.g. PROBE_LIMIT=540 with one version a call. .gpu stays on the machine from the wave's first call, so
# these calls carry only .gpu_tf525.
# Stages (environment STAGES, default "probe copy mfu"):
#   probe    tools/probes/tf525_probe.py under 5.17, then 5.25, then compared: fused (mamba_ssm) vs torch-reference logits, loss
#            and gradients in each version; the same checkpoint's evaluation logits through load_model and from_pretrained
#            in both (stock-identical, across versions); the saved layout; one lengen_train step a variant (stock, Liger,
#            VPAD routed around the fused op, initial states, CUDA graphs) with loss, gradients and what each path did
#   copy     the 45M copy run's step (copy_jelassi_mamba2_45m_vpad, lengen_bench --train-loop, CUDA-graphed blocks) under
#            5.17 and then 5.25, same machine; the issue's bar: 5.25's steady step within 3% of 5.17's
#   mfu      Mamba2-1.3B at 4096 tokens, lengen_bench batch 4 (baseline, liger) and batch 8 (liger, the shipped setting),
#            under 5.17 and 5.25; the bar: the same MFU (results/gpu/kernels_mfu_h200.json has today's: 36.6/40.2/42.1%)
#   cells    under 5.25, every code cell (`gpu` ones included) of the Mamba2 notebooks of models/ops/regularizers through
#            tools/run_cells.py: models/mamba2/00_model, ops/01_cuda_graphs, models/mamba2/01_packed, regularizers/00_dropout,
#            regularizers/01_initial_state, ops/03_decode, ops/05_generate
#   kernels  under 5.25, every code cell of nbs/ops/04_kernels.ipynb (Liger and mamba_ssm against stock, CUDA graphs,
#            the torch.compile refusal, save/load logits, tiny benches)
# What comes back in $OUT: tf525_gpu.log (everything printed), probe_compare.txt (the dumps stay in /tmp/tf525_probe), copy_*.json,
# mfu_*.json, cells_*.txt and a summary line per stage in summary.txt.
set -uo pipefail
OUT=${OUT:-$PWD/tf525_out}; mkdir -p "$OUT"
STAGES=${STAGES:-probe copy mfu}
source tools/gpu_env.sh   # the image's 5.17 plus .gpu/wheels and the fused kernels in /tmp/site; offline
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
exec > >(tee -a "$OUT/tf525_gpu.log") 2>&1
[ -d .gpu_tf525 ] || { echo "no .gpu_tf525: see the steps at the top of tools/probes/tf525_gpu.sh"; exit 1; }
once tf525 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/tf525 .gpu_tf525/*.whl
pp() { if [ "$1" = 525 ]; then echo "PYTHONPATH=/tmp/tf525:$PYTHONPATH"; else echo "PYTHONPATH=$PYTHONPATH"; fi; }   # 5.25 ahead of the image's 5.17
versions() { env "$(pp $1)" python3 -c "import torch, transformers, huggingface_hub; from lengen.models.mamba2.model import mamba2_kernel_path as k; print('transformers', transformers.__version__, 'hub', huggingface_hub.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(), 'fused:', k()['fused'])"; }
versions 517 && versions 525 || { echo "an environment does not import: see above"; exit 1; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }

if has probe; then   # the dumps stay on the machine (each > 16 MiB, more than a file that comes back), so two calls can share them
  PROBE_VERSIONS=${PROBE_VERSIONS:-517 525}; mkdir -p /tmp/tf525_probe
  [[ " $PROBE_VERSIONS " == *" 517 "* ]] && rm -rf /tmp/tf525_probe_ckpt   # the 5.17 dump writes the checkpoint the 5.25 dump reads
  for v in $PROBE_VERSIONS; do timeout "${PROBE_LIMIT:-280}" env "$(pp $v)" python3 tools/probes/tf525_probe.py dump "/tmp/tf525_probe/probe_$v.pt" || echo "probe under $v failed"; done
  if [ -f /tmp/tf525_probe/probe_517.pt ] && [ -f /tmp/tf525_probe/probe_525.pt ]; then
    python3 tools/probes/tf525_probe.py compare /tmp/tf525_probe/probe_517.pt /tmp/tf525_probe/probe_525.pt | tee "$OUT/probe_compare.txt"
    summary "probe: $(tail -1 "$OUT/probe_compare.txt")"
  fi
fi

step_s() { python3 -c "import json; print(json.load(open('$1'))['steady_step_s'])" 2>/dev/null; }
if has copy; then   # the copy run as shipped (CUDA graphs), no evaluations in the loop
  NOEVAL="--set eval_steps=null --set data.copy_task.eval_lengths=[10] --set data.copy_task.eval_samples=10"
  for v in 517 525; do
    timeout 240 env "$(pp $v)" python3 -m lengen.experiments.bench --train-loop copy_jelassi_mamba2_45m_vpad --steps 400 $NOEVAL \
      --out "$OUT/copy_$v.json" > "$OUT/copy_$v.stdout" 2>&1 || { echo "copy bench under $v failed:"; tail -5 "$OUT/copy_$v.stdout"; }
  done
  a=$(step_s "$OUT/copy_517.json"); b=$(step_s "$OUT/copy_525.json")
  summary "copy 45M steady step: 5.17 ${a:-?} s, 5.25 ${b:-?} s, ratio $(python3 -c "print(round($b/$a, 3))" 2>/dev/null) (bar: <= 1.03)"
fi

mfu() { python3 -c "import json; r=json.load(open('$1'))['results']; print({k: round(100*v['mfu'], 1) for k, v in r.items()})" 2>/dev/null; }
if has mfu; then
  for v in 517 525; do
    timeout 150 env "$(pp $v)" python3 -m lengen.experiments.bench mamba2-1.3b --batch 4 --variants baseline,liger --steps 8 --warmup 3 \
      --out "$OUT/mfu_b4_$v.json" > "$OUT/mfu_b4_$v.stdout" 2>&1 || { echo "mfu b4 under $v failed:"; tail -5 "$OUT/mfu_b4_$v.stdout"; }
    timeout 110 env "$(pp $v)" python3 -m lengen.experiments.bench mamba2-1.3b --batch 8 --variants liger --steps 8 --warmup 3 \
      --out "$OUT/mfu_b8_$v.json" > "$OUT/mfu_b8_$v.stdout" 2>&1 || { echo "mfu b8 under $v failed:"; tail -5 "$OUT/mfu_b8_$v.stdout"; }
    summary "mfu 1.3B under $v: batch 4 $(mfu "$OUT/mfu_b4_$v.json"), batch 8 $(mfu "$OUT/mfu_b8_$v.json") (today: 36.6 / 40.2 / 42.1)"
  done
fi

cells() {   # NAME TIMEOUT NOTEBOOK...: every cell of each notebook under 5.25
  local name=$1 limit=$2; shift 2
  for nb in "$@"; do
    local f="$OUT/cells_${name}_$(basename "$nb" .ipynb).txt"
    timeout "$limit" env "$(pp 525)" python3 tools/run_cells.py "$nb" > "$f" 2>&1
    summary "cells $nb under 5.25: exit $? ($(tail -1 "$f"))"
  done
}
has cells && cells m 120 nbs/models/mamba2/00_model.ipynb nbs/ops/01_cuda_graphs.ipynb nbs/models/mamba2/01_packed.ipynb \
  nbs/regularizers/00_dropout.ipynb nbs/models/mamba2/02_scan.ipynb nbs/regularizers/01_initial_state.ipynb nbs/models/mamba2/03_step.ipynb nbs/ops/03_decode.ipynb nbs/ops/05_generate.ipynb
has kernels && cells k 480 nbs/ops/04_kernels.ipynb
ls -la "$OUT"
