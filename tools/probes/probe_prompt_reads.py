"""Is the slow prompt read of RULER's 64K `niah_single_2` rows in the prompts' tokens? (results/gpu/long_context_h200.json:
Mamba2-1.3B read its second prompt in 3.7 s against a 0.74 s floor, SmolLM3 in 1.6 s against 1.17 s; the other tasks'
prompts of the same length read at the floor.) Runs the RULER command as `measure_ruler` does, keeping each prompt that
`fast_generate` reads (its prefill timed apart from the rest of the read) and reading it once more on the spot, then
in a fresh load of the model reads each kept prompt and a random prompt of its length, twice each, alternating, with
the same prefill `fast_generate` uses; writes the seconds, and each prompt's token statistics.

    python tools/probes/probe_prompt_reads.py CKPT OUT.json HAYSTACK [TASK] [LENGTH] [SAMPLES]   # tools/long_context_gpu.sh reads
"""
import json, sys
from pathlib import Path
from unittest import mock
import torch
from lengen.eval.common import load_for_eval, measured
from lengen.experiments.long_context import measure_ruler, release_memory
from lengen.eval.position import final_hidden
from lengen.ops import generate as fast_generation

ckpt, out, haystack = sys.argv[1:4]
task, length, samples = (sys.argv[4:5] or ["niah_single_2"])[0], int((sys.argv[5:6] or [65536])[0]), int((sys.argv[6:7] or [4])[0])
prompts, inside, prefills, stock, stock_prefill = [], [], [], fast_generation.continue_after, fast_generation.prefill_cache
def timed_prefill(model, ids):
    "`prefill_cache`, its seconds kept: the read's prefill, apart from the rest of `continue_after` (the stepper's restart)."
    with measured(peak=False) as m: out = stock_prefill(model, ids)
    prefills.append(m["seconds"]); return out
def keep(model, prefix, *args, **kwargs):
    "The prompt kept; its read timed, then read once more on the spot (so the entry's read seconds count both)."
    prompts.append(prefix.detach().cpu())
    with measured(peak=False) as m: out = stock(model, prefix, *args, **kwargs)
    with torch.no_grad(), measured(peak=False) as again: stock_prefill(model, prefix)
    inside.append({"sample": len(inside), "tokens": prefix.shape[1], "read": round(m["seconds"], 3),
                   "prefill": round(prefills[-1], 3), "again": round(again["seconds"], 3)})
    print(inside[-1], flush=True)
    return out
with mock.patch.object(fast_generation, "continue_after", keep), mock.patch.object(fast_generation, "prefill_cache", timed_prefill):
    e = measure_ruler(ckpt, length, task, samples, haystack=haystack, label=Path(ckpt).name)
print(json.dumps(e), flush=True)
release_memory()   # the command's model, before the fresh load
model, _ = load_for_eval(ckpt, "bfloat16", None)
rows, stats = [], []
with torch.no_grad():
    for i, p in enumerate(prompts):
        ids = p.to(model.device)
        rnd = torch.randint(0, model.config.vocab_size, ids.shape, generator=torch.Generator().manual_seed(i)).to(model.device)
        stats.append({"sample": i, "tokens": ids.shape[1], "distinct": int(ids.unique().numel()), "max_id": int(ids.max()),
                      "finite": bool(final_hidden(model, ids).isfinite().all())})
        print(stats[-1], flush=True)
        for kind, x in (("prompt", ids), ("random", rnd), ("prompt", ids), ("random", rnd)):
            with measured() as m: fast_generation.prefill_cache(model, x)
            rows.append({"sample": i, "tokens": ids.shape[1], "ids": kind, "seconds": round(m["seconds"], 3)})
            print(rows[-1], flush=True)
json.dump({"model": Path(ckpt).name, "task": task, "length": length, "entry": e, "inside_command": inside, "prompts": stats, "reads": rows},
          open(out, "w"), indent=1)   # no machine path: the file is committed
