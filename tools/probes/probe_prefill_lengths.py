"""Is a prompt read slow the first time its length falls in a new alignment class? (the 64K `niah_single_2` rows of
results/gpu/long_context_h200.json and results/gpu/probe_prompt_reads_h200.json: inside the command, the prefill of the
65,280-token prompt took 3.5 s on Mamba2-1.3B against a 0.72 s floor, 2.2 s on SmolLM3-3B against 1.2 s; prompts of
65,278-65,286 tokens read at the floor once the process had read one.) Triton compiles a kernel anew for each pattern of
its integer arguments being divisible by 16 (or equal to 1), and 65,280 is the only multiple of 16 among those lengths.
Reads random prompts of lengths with different remainders mod 16, each twice, in one process; for each read counts the
Triton kernels compiled during it (entries new in a fresh TRITON_CACHE_DIR) and writes the seconds as JSON.

    python tools/probes/probe_prefill_lengths.py CKPT OUT.json [SDPA]   # SDPA: "default", or "no_cudnn" (cuDNN attention off)
"""
import json, os, sys, tempfile
from pathlib import Path
os.environ["TRITON_CACHE_DIR"] = cache = tempfile.mkdtemp(prefix="triton_")   # before triton is imported
import torch
from lengen.eval.common import load_for_eval, measured
from lengen.ops.generate import prefill_cache

ckpt, out = sys.argv[1:3]
sdpa = (sys.argv[3:4] or ["default"])[0]
if sdpa == "no_cudnn": torch.backends.cuda.enable_cudnn_sdp(False)
model, _ = load_for_eval(ckpt, "bfloat16", None)
kernels = lambda: len(os.listdir(cache))
rows = []
with torch.no_grad():
    for n in (65281, 65283, 65286, 65288, 65284, 65280, 65296, 65312, 65536, 65282):
        for read in ("first", "again"):
            ids, before = torch.randint(0, model.config.vocab_size, (1, n), device=model.device), kernels()
            with measured() as m: prefill_cache(model, ids)
            rows.append({"tokens": n, "mod_16": n % 16, "read": read, "seconds": round(m["seconds"], 3),
                         "triton_compiled": kernels() - before})
            print(rows[-1], flush=True)
json.dump({"model": Path(ckpt).name, "sdpa": sdpa, "rows": rows}, open(out, "w"), indent=1)   # no machine path: committed
