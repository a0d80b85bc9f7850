#!/usr/bin/env bash
# Issue 48: the 85M step's MFU at its shipped shape (131,072 tokens a step: 64 rows of 2,048; the GPT-NeoX vocabulary's
# 50,277 tokens; Liger's loss as the position sweeps train), and what moves it. Each variant is `lengen_bench --train-loop
# mamba2_85m_lengen_pile_baseline` (the real loop, then the bare step in the same process; mfu_steady, mfu_bare: 6 x matmul
# weights a token over lengen_bench's peak of 790 TFLOP/s) on random rows and a tokenizer of that size
# (tools/probes/m85_inputs.py), nothing else on the GPU. Variants (VARIANTS, names from the list below, space-separated;
# default: sweep graphs64 norm64 c128):
#   sweep     as failure_85m and position_85m train it: two micro-batches of 32 rows, kernels.liger=true, kernels.rms_norm=false
#   graphs    + compile.cuda_graphs=true (each Mamba2 block replayed from its CUDA graph)
#   graphs64  + one micro-batch of 64 rows (gradient_accumulation_steps=1)
#   norm64    graphs64 with Liger's RMSNorm for the 13 plain norms (kernels.rms_norm=true; the sweeps keep them stock)
#   c128      graphs64 with the scan's chunk_size=128 (the family's is 256)
#   compile   sweep + compile.torch_compile=true (each decoder block compiled; refused for Mamba2: see lengen.config)
#   norm      sweep with Liger's RMSNorm for the plain norms (kernels.rms_norm=true)
#   b64       sweep with one micro-batch of 64 rows, no CUDA graphs
#   c128s     sweep with the scan's chunk_size=128, no CUDA graphs
#   nb64      norm and b64 together
#   nb64c512  nb64 with the scan's chunk_size=512
# Writes $OUT/m85_mfu.json (each variant's report without its step clocks); commit it as results/gpu/m85_mfu_<gpu>.json.
# One call on a warm or fresh machine (carry .gpu; .gpu_cache if there is one): about a minute a variant once Triton's
# cache is warm, two for the first (STEPS, default 40; the first variant is stopped after LIMIT_FIRST seconds, default
# 200, each later one after LIMIT, default 115: four variants a call stay inside a call's 600 s).
set -uo pipefail
source tools/gpu_env.sh
python3 tools/probes/m85_inputs.py /tmp/m85 > /dev/null 2>&1 || { echo "m85_inputs.py failed"; exit 2; }
declare -A SETS=(
  [sweep]="kernels.liger=true kernels.rms_norm=false"
  [graphs]="kernels.liger=true kernels.rms_norm=false compile.cuda_graphs=true"
  [graphs64]="kernels.liger=true kernels.rms_norm=false compile.cuda_graphs=true per_device_train_batch_size=64 gradient_accumulation_steps=1"
  [norm64]="kernels.liger=true kernels.rms_norm=true compile.cuda_graphs=true per_device_train_batch_size=64 gradient_accumulation_steps=1"
  [c128]="kernels.liger=true kernels.rms_norm=false compile.cuda_graphs=true per_device_train_batch_size=64 gradient_accumulation_steps=1 arch.chunk_size=128"
  [compile]="kernels.liger=true kernels.rms_norm=false compile.torch_compile=true"
  [norm]="kernels.liger=true kernels.rms_norm=true"
  [b64]="kernels.liger=true kernels.rms_norm=false per_device_train_batch_size=64 gradient_accumulation_steps=1"
  [c128s]="kernels.liger=true kernels.rms_norm=false arch.chunk_size=128"
  [nb64]="kernels.liger=true kernels.rms_norm=true per_device_train_batch_size=64 gradient_accumulation_steps=1"
  [nb64c512]="kernels.liger=true kernels.rms_norm=true per_device_train_batch_size=64 gradient_accumulation_steps=1 arch.chunk_size=512")
mkdir -p "$OUT/m85"; limit=""
for v in ${VARIANTS:-sweep graphs64 norm64 c128}; do
  [ -n "${SETS[$v]:-}" ] || { echo "VARIANTS: no variant $v (${!SETS[*]})"; exit 2; }
  sets=""; for o in ${SETS[$v]}; do sets="$sets --set $o"; done
  limit=${limit:+${LIMIT:-115}}; limit=${limit:-${LIMIT_FIRST:-200}}   # the first variant compiles and autotunes the kernels
  echo "$(date +%H:%M:%S) $v"
  timeout -k 10 "$limit" python3 -m lengen.experiments.bench --train-loop mamba2_85m_lengen_pile_baseline --set pretrained_tokenizer=/tmp/m85/tokenizer \
    --set data.path=/tmp/m85/rows --set wandb.enabled=false $sets --steps "${STEPS:-40}" --out "$OUT/m85/$v.json" > "$OUT/m85/$v.log" 2>&1
  echo "  rc=$? $(grep -v -i warn "$OUT/m85/$v.log" | grep -E 'Error|error' | tail -n 2)"
done
python3 - <<'PY'
import json, os, pathlib, torch
out = pathlib.Path(os.environ["OUT"])
keep = ("overrides", "first_step_s", "steady_step_s", "bare_step_s", "train_tokens_per_s_steady", "bare_tokens_per_s", "ratio_steady",
        "model_flops_per_token", "peak_tflops", "mfu_steady", "mfu_bare", "peak_reserved_gib")
def portable(r): return {**r, "overrides": [o.replace("/tmp/m85", "$M85") for o in r["overrides"]]}   # no machine paths
runs = {p.stem: portable({k: json.loads(p.read_text()).get(k) for k in keep}) for p in sorted((out/"m85").glob("*.json"))}
commit = pathlib.Path(".gpu/source_commit").read_text().strip() if pathlib.Path(".gpu/source_commit").exists() else None
rep = {"what": "the 85M step at its shipped shape, lengen_bench --train-loop mamba2_85m_lengen_pile_baseline on random rows "
               "(tools/probes/m85_mfu_gpu.sh; $M85: the folder tools/probes/m85_inputs.py writes)", "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "commit": commit, "torch": torch.__version__, "variants": runs}
(out/"m85_mfu.json").write_text(json.dumps(rep, indent=1))
for k, r in runs.items(): print(k, {m: round(r[m], 3) if isinstance(r[m], float) else r[m] for m in ("steady_step_s", "mfu_steady", "mfu_bare", "peak_reserved_gib")})
PY
