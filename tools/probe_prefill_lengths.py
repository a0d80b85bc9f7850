"""Does a prompt length new to the process make SmolLM3's prefill slow? (the 64K `niah_single_2` row of
results/gpu/long_context_h200.json: its second prompt read in 1.5-1.9 s against a 1.16 s floor). Reads random prompts
of lengths near L, each twice, in one process, with PyTorch choosing the full-attention layers' SDPA kernel (cuDNN on
Hopper, which plans per shape) and with FlashAttention-2 forced; prints and writes the seconds of each read as JSON.
The first read of all also starts the kernels up; a new length's first read against its second is the question.

    python tools/probe_prefill_lengths.py CKPT OUT.json [L]      # on the GPU machine (tools/long_context_gpu.sh probe)
"""
import contextlib, json, sys
from pathlib import Path
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from lengen.eval.common import load_for_eval, measured
from lengen.eval.position import final_hidden

ckpt, out = sys.argv[1:3]
L = int(sys.argv[3]) if len(sys.argv) > 3 else 65282
model, _ = load_for_eval(ckpt, "bfloat16", None)
ids = lambda n: torch.randint(0, model.config.vocab_size, (1, n), device=model.device)
rows = []
for kernel, ctx in (("pytorch's choice", contextlib.nullcontext), ("flash forced", lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION))):
    with ctx(), torch.no_grad():
        for n in (L, L - 1, L - 37, L + 64, L):
            for read in ("first", "again"):
                try:
                    with measured() as m: final_hidden(model, ids(n))
                    rows.append({"kernel": kernel, "tokens": n, "read": read, "seconds": round(m["seconds"], 3)})
                except RuntimeError as e: rows.append({"kernel": kernel, "tokens": n, "read": read, "error": str(e)[:200]})
                print(rows[-1], flush=True)
json.dump({"model": Path(ckpt).name, "rows": rows}, open(out, "w"), indent=1)   # no machine path: the file is committed
