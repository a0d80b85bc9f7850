#!/usr/bin/env bash
# GPU checks of lengen.ops.kernels (nbs/ops/04_kernels.ipynb) and lengen_bench numbers for Liger's kernels, in one call.
#
# Before (on the CPU machine), put the wheels the GPU machine lacks into .gpu/wheels and carry .gpu:
#     pip download --no-deps liger-kernel==0.8.5 fastcore==1.12.4 -d .gpu/wheels
# Then, from the repository root on the GPU machine, in calls of at most 10 minutes each (stage limits: nb 480 s,
# b2 240 s, b4 150 s, 8k 250 s, m2 480 s):
#     STAGES="nb" bash tools/check_kernels_gpu.sh
#     STAGES="m2" bash tools/check_kernels_gpu.sh
#     STAGES="b2 b4" bash tools/check_kernels_gpu.sh
#     STAGES="8k" bash tools/check_kernels_gpu.sh
# Stages (environment STAGES, default "nb b2 b4 8k m2"; each has its own time limit and may fail alone, e.g. out of memory):
#   nb  every code cell of nbs/ops/04_kernels.ipynb through tools/run_cells.py: the CPU tests, now on CUDA with the compiled
#       kernels, and the `#| gpu` cells (bf16 loss and gradients against stock, with and without torch.compile, logits
#       after save/load, a tiny lengen_bench run; then for Mamba2 with mamba_ssm: loss and gradients against stock,
#       with VPAD, with CUDA graphs, the refusal of torch.compile, logits after save/load, tiny-mamba2 bench); each cell's
#       last expression and every failure go to kernels_notebook.txt
#   b2  smollm3-3b, 4096 x batch 2: stock, Liger, Liger without fused linear CE, and the smollm3_3b_swa_cpt_vpad setting
#       (SWA 1024 through window_sdpa, packed documents, VPAD at the norms) without and with Liger
#   b4  smollm3-3b, 4096 x batch 4: the swa_cpt_vpad setting with Liger, with and without fused linear CE
#   8k  smollm3-3b, 8192 tokens: the smollm3_3b_swa_8K_vpad_scaled setting (SWA 2048, packed documents, VPAD, attention
#       scaling) stock at batch 1, with Liger at batches 1 and 2
#   m2  mamba2-1.3b (needs mamba_ssm and causal_conv1d, e.g. from .gpu/kernels_slim.tar.gz), 4096 tokens, batches 4 and 8:
#       stock, Liger (its RMSNorms and fused linear CE), each of the two alone, and the mamba2_1_3b_cpt_vpad setting
#       (VPAD p=0.2 at the norms) without and with Liger; the first variant of a run pays mamba_ssm's autotuning
#   b4c  the b4 setting with Liger and compile.torch_compile=true (its own run: a failing compile stops only it;
#       Mamba2 is not compiled where mamba_ssm's kernels run, see check_compile in lengen.train.trainer)
# What comes back in $OUT: kernels_notebook.txt, bench_*.json (lengen_bench's report: tokens/s, MFU, peak GiB
# per variant) and check_kernels.log.
set -uo pipefail
OUT=${OUT:-$PWD/kernels_out}; mkdir -p "$OUT"
STAGES=${STAGES:-nb b2 b4 8k m2}
source tools/gpu_env.sh   # carried wheels and kernels, offline environment
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}   # one GPU: a process that sees several is refused (DataParallel)
exec > >(tee -a "$OUT/check_kernels.log") 2>&1
python3 -c "import torch, transformers, triton, liger_kernel, importlib.metadata as m; print('torch', torch.__version__, 'transformers', transformers.__version__, 'triton', triton.__version__, 'liger-kernel', m.version('liger-kernel'), torch.cuda.get_device_name())" || exit 1
has() { [[ " $STAGES " == *" $1 "* ]]; }

if has nb; then   # tools/run_cells.py: nbdev's test runner for a machine without nbdev; reports every failing cell
  echo "== nbs/ops/04_kernels.ipynb, gpu cells included"
  timeout 480 python3 tools/run_cells.py nbs/ops/04_kernels.ipynb > "$OUT/kernels_notebook.txt" 2>&1
  echo "notebook: exit status $? (0: every cell passed)"; tail -25 "$OUT/kernels_notebook.txt"
fi

bench() {  # name, time limit, lengen_bench arguments (the shape first)
  local name=$1 limit=$2; shift 2
  echo "== bench $name: $*"
  timeout "$limit" python3 -m lengen.experiments.bench "$@" --steps 8 --warmup 3 --out "$OUT/bench_$name.json" > "$OUT/bench_$name.stdout" 2>&1 \
    || { echo "bench $name failed or timed out:"; tail -5 "$OUT/bench_$name.stdout"; }
  [ -f "$OUT/bench_$name.json" ] && python3 -c "import json; r=json.load(open('$OUT/bench_$name.json')); print({k: dict(tok_s=round(v['tokens_per_s']), mfu=round(100*v['mfu'], 1), gib=round(v['peak_mem_gib'], 1)) for k, v in r['results'].items()})"
}
CPT=swa_window_docs+vpad
K8="swa.enabled=true+swa.window=2048+attn_implementation=window_sdpa+data.use_doc_masking=true+vpad+scaled"
has b4 && bench b4 150 smollm3-3b --batch 4 --variants "liger+$CPT,liger_no_flce+$CPT"
has 8k && bench 8k_b1 150 smollm3-3b --seq-len 8192 --batch 1 --variants "$K8,liger+$K8"
has 8k && bench 8k_b2 100 smollm3-3b --seq-len 8192 --batch 2 --variants "liger+$K8"
has b2 && bench b2 240 smollm3-3b --batch 2 --variants "baseline,liger,liger_no_flce,$CPT,liger+$CPT"   # after b4 and 8k: the shipped settings first
M2="vpad+dropout.rate=0.2"   # mamba2_1_3b_cpt_vpad's regularizer
has m2 && bench m2_b4 300 mamba2-1.3b --batch 4 --variants "baseline,liger,liger_no_flce,liger_flce,$M2,liger+$M2"
has m2 && bench m2_b8 180 mamba2-1.3b --batch 8 --variants "baseline,liger,liger+$M2"
C=compile.torch_compile=true   # each decoder block compiled (a model of its own: variants after it stay eager)
has b4c && bench b4c 200 smollm3-3b --batch 4 --variants "liger+$CPT+$C"
ls -la "$OUT"
