#!/usr/bin/env bash
# GPU checks of lengen.kernels (nbs/16_kernels.ipynb) and lengen_bench numbers for Liger's kernels, in one call.
#
# Before (on the CPU machine), put the wheels the GPU machine lacks into .gpu/wheels and carry .gpu:
#     pip download --no-deps liger-kernel==0.8.5 fastcore==1.12.4 -d .gpu/wheels
# Then, from the repository root on the GPU machine:
#     bash tools/check_kernels_gpu.sh
# Stages (environment STAGES, default "nb b2 b4 8k"; each has its own time limit and may fail alone, e.g. out of memory):
#   nb  every code cell of nbs/16_kernels.ipynb (the CPU tests, now on CUDA with compiled kernels, and the `#| gpu`
#       cells: bf16 loss and gradients against stock, torch.compile, save/load logits, a tiny bench), in order, in one
#       namespace; each cell's status, time, error and last expression go to kernels_notebook.json
#   b2  smollm3-3b, 4096 x batch 2: stock, Liger, Liger without fused linear CE, and the smollm3_3b_swa_cpt_vpad setting
#       (SWA 1024 through window_sdpa, packed documents, VPAD at the norms) without and with Liger
#   b4  smollm3-3b, 4096 x batch 4: the swa_cpt_vpad setting with Liger, with and without fused linear CE
#   8k  smollm3-3b, 8192 tokens: the smollm3_3b_swa_8K_vpad_scaled setting (SWA 2048, packed documents, VPAD, attention
#       scaling) stock at batch 1, with Liger at batches 1 and 2
# What comes back in $OUT: kernels_notebook.json and .log, bench_*.json (lengen_bench's report: tokens/s, MFU, peak GiB
# per variant) and check_kernels.log.
set -uo pipefail
OUT=${OUT:-$PWD/kernels_out}; mkdir -p "$OUT"
STAGES=${STAGES:-nb b2 b4 8k}
if [ -d .gpu/wheels ]; then                      # the project's wheels for the GPU machine, where they were carried
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/wheels/*.whl 2>&1 | grep -v "already exists"
  [ -f .gpu/kernels_slim.tar.gz ] && tar -xzf .gpu/kernels_slim.tar.gz -C /tmp/site
fi
export PYTHONPATH=$PWD:/tmp/site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TQDM_DISABLE=1
exec > >(tee -a "$OUT/check_kernels.log") 2>&1
python3 -c "import torch, transformers, triton, liger_kernel, importlib.metadata as m; print('torch', torch.__version__, 'transformers', transformers.__version__, 'triton', triton.__version__, 'liger-kernel', m.version('liger-kernel'), torch.cuda.get_device_name())" || exit 1
has() { [[ " $STAGES " == *" $1 "* ]]; }

if has nb; then
  echo "== nbs/16_kernels.ipynb on $(python3 -c 'import torch; print(torch.cuda.get_device_name())')"
  timeout 300 python3 - "$OUT/kernels_notebook.json" <<'PY' 2>&1 | tee "$OUT/kernels_notebook.log"
import ast, json, os, sys, time, traceback
from pathlib import Path
out = Path(sys.argv[1]).resolve()
nb = json.loads(Path("nbs/16_kernels.ipynb").read_text())
os.chdir("nbs")
ns, cells = {"__name__": "__main__"}, []
for i, c in enumerate(nb["cells"]):
    src = "".join(c["source"])
    if c["cell_type"] != "code" or "nbdev_export" in src: continue
    tree, shown = ast.parse(src), None
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    t0, status, err = time.time(), "ok", None
    try:
        exec(compile(tree, f"<cell {i}>", "exec"), ns)
        if last is not None: shown = repr(eval(compile(ast.Expression(last.value), f"<cell {i}>", "eval"), ns))[:2000]
    except Exception: status, err = "failed", traceback.format_exc(limit=4)
    rec = {"cell": i, "gpu": src.startswith("#| gpu"), "first_line": src.splitlines()[0][:100], "status": status,
           "seconds": round(time.time() - t0, 2), "shown": shown, "error": err}
    cells.append(rec)
    print(f"[cell {i:2d}] {status:6s} {rec['seconds']:7.2f}s {rec['first_line']}" + (f"\n  -> {shown[:300]}" if shown else "") + (f"\n{err}" if err else ""), flush=True)
failed = [r["cell"] for r in cells if r["status"] != "ok"]
out.write_text(json.dumps({"cells_run": len(cells), "failed": failed, "cells": cells}, indent=1))
print(f"== notebook: {len(cells)} cells, failed: {failed or 'none'}")
PY
fi

bench() {  # name, time limit, lengen_bench arguments
  local name=$1 limit=$2; shift 2
  echo "== bench $name: $*"
  timeout "$limit" python3 -m lengen.bench smollm3-3b --steps 8 --warmup 3 "$@" --out "$OUT/bench_$name.json" > "$OUT/bench_$name.stdout" 2>&1 \
    || { echo "bench $name failed or timed out:"; tail -5 "$OUT/bench_$name.stdout"; }
  [ -f "$OUT/bench_$name.json" ] && python3 -c "import json; r=json.load(open('$OUT/bench_$name.json')); print({k: dict(tok_s=round(v['tokens_per_s']), mfu=round(100*v['mfu'], 1), gib=round(v['peak_mem_gib'], 1)) for k, v in r['results'].items()})"
}
CPT=swa_window_docs+vpad_norm
K8="swa.enabled=true+swa.window=2048+attn_implementation=window_sdpa+data.use_doc_masking=true+vpad_norm+scaling"
has b2 && bench b2 240 --batch 2 --variants "baseline,liger,liger_no_flce,$CPT,liger+$CPT"
has b4 && bench b4 150 --batch 4 --variants "liger+$CPT,liger_no_flce+$CPT"
has 8k && bench 8k_b1 150 --seq-len 8192 --batch 1 --variants "$K8,liger+$K8"
has 8k && bench 8k_b2 100 --seq-len 8192 --batch 2 --variants "liger+$K8"
ls -la "$OUT"
