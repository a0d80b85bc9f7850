#!/usr/bin/env bash
# Several GPUs for real, on the 2-GPU machine (nbs/train/01_distributed.ipynb checks the same on CPU processes):
#  (a) data-parallel speed: `lengen_bench --train-loop mamba2_85m_lengen_pile_vpad` (lengen_train's whole loop) on the
#      local python_docs corpus, on 1 GPU and under `torchrun --nproc-per-node=2`; tokens/s of each and the ratio
#      (target >= 1.85x). The bench reports tokens/s per process; the 2-GPU total is that times the world size.
#  (b) FSDP: `smollm3_3b_swa_8K_vpad_scaled` (VPAD p=0.3, attention scaling, SWA, 8K rows) from a random-init model of
#      SmolLM3-3B's shape, `fsdp.enabled=true`, 3 steps on 2 GPUs through `python -m lengen.experiments.rowrecord` (lengen_train plus
#      a recorder of each rank's rows), then `lengen.load_model` on the run folder and on checkpoint-3 with one forward
#      pass each (same logits: the final save and the checkpoint are the same weights), the ranks' rows disjoint, and,
#      if time is left, a resume from checkpoint-3 to step 4.
# Run from the repository root with data/python_docs carried (lengen_build_corpus) and the dependency wheels:
#     bash tools/check_multigpu.sh
# Settings (environment): BENCH_STEPS=60 (steps of each bench run), FSDP_STEPS=3, SMOL_ATTN (e.g. sdpa, to override the
# experiment's window_sdpa), SMOL_EXTRA (more overrides for the FSDP run, e.g. "fsdp.activation_checkpointing=true"),
# CHECK_TIME_LIMIT=560 (seconds: each part gets at most its cap and what is left after the later parts' reserve; the
# resume runs only with over 150 s left).
# What comes back in $OUT (7 files): multigpu.json (every number below), bench_1gpu.log, bench_2gpu.log, build_3b.log,
# fsdp_train.log, fsdp_load.log, fsdp_resume.log.
set -uo pipefail
export OUT=${OUT:-$PWD/multigpu_out}; mkdir -p "$OUT"
source tools/gpu_env.sh   # carried wheels and kernels, offline environment
start=$(date +%s); left() { echo $(( ${CHECK_TIME_LIMIT:-560} - ($(date +%s) - start) )); }
budget() { local b=$(( $(left) - $2 )); [ $b -gt $1 ] && b=$1; [ $b -lt 10 ] && b=10; echo $b; }   # CAP seconds, RESERVE left for what follows
W=/tmp/multigpu; rm -rf $W; mkdir -p $W
TEXT="--set data.path=data/python_docs/train --set pretrained_tokenizer=data/python_docs/tokenizer"
TR="torchrun --standalone --nproc-per-node=2"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

# (a) tokens/s on 1 and 2 GPUs (the 1-GPU run goes first and pays the fresh machine's compiling and autotuning, ~80-110 s)
BENCH="-m lengen.experiments.bench --train-loop mamba2_85m_lengen_pile_vpad $TEXT --steps ${BENCH_STEPS:-60}"
CUDA_VISIBLE_DEVICES=0 timeout $(budget 220 240) python3 $BENCH --out $W/bench_1gpu.json > $OUT/bench_1gpu.log 2>&1; echo "bench 1 GPU: rc=$?"
timeout $(budget 120 180) $TR --local-ranks-filter=0 $BENCH > $OUT/bench_2gpu.log 2>&1; echo "bench 2 GPUs: rc=$?"   # rank 0's output: its JSON

# (b) FSDP on a random SmolLM3-3B-shaped model
timeout $(budget 90 150) python3 tools/random_checkpoint.py smollm3-3b $W/smollm3_3b_random > $OUT/build_3b.log 2>&1
echo "build 3B: rc=$?"
SMOL=(+experiment=smollm3_3b_swa_8K_vpad_scaled model_name_or_path=$W/smollm3_3b_random revision=null
      pretrained_tokenizer=data/python_docs/tokenizer tokenizer_revision=null data.path=data/python_docs/train
      output_dir=$W/smol3b fsdp.enabled=true gradient_accumulation_steps=2 save_steps=${FSDP_STEPS:-3}
      save_total_limit=null logging_steps=1 schedule.warmup_steps=1 wandb.enabled=false
      ${SMOL_ATTN:+attn_implementation=$SMOL_ATTN} ${SMOL_EXTRA:-})
timeout $(budget 300 40) $TR -m lengen.experiments.rowrecord $W/smol3b/rows "${SMOL[@]}" max_steps=${FSDP_STEPS:-3} > $OUT/fsdp_train.log 2>&1
echo "FSDP train: rc=$?"
timeout $(budget 150 20) python3 - > $OUT/fsdp_load.log 2>&1 <<'EOF'
import json, os, torch
from lengen.models.build import load_model
run, steps = "/tmp/multigpu/smol3b", int(os.environ.get("FSDP_STEPS", 3))
ids = torch.randint(0, 4096, (1, 1024), generator=torch.Generator().manual_seed(0)).cuda()
out = {}
for name in ("", f"checkpoint-{steps}"):
    m = load_model(os.path.join(run, name), dtype=torch.bfloat16).cuda()
    with torch.no_grad(): out[name or "final"] = m(ids).logits.float().cpu()
    out[f"{name or 'final'}_class"] = type(m).__name__
    print(name or "final", type(m).__name__, "parameters:", sum(p.numel() for p in m.parameters()), flush=True)
    del m; torch.cuda.empty_cache()
files = sorted(os.listdir(run))
res = {"classes": [out["final_class"], out[f"checkpoint-{steps}_class"]], "logits_finite": bool(torch.isfinite(out["final"]).all()),
       "final_vs_checkpoint_max_abs_diff": (out["final"] - out[f"checkpoint-{steps}"]).abs().max().item(),
       "run_files": files, "checkpoint_files": sorted(os.listdir(os.path.join(run, f"checkpoint-{steps}"))),
       "auto_map": json.load(open(os.path.join(run, "config.json"))).get("auto_map")}
json.dump(res, open("/tmp/multigpu/load.json", "w"), indent=1); print(json.dumps(res, indent=1))
EOF
echo "load_model: rc=$?"
rm -f $W/smol3b/model*.safetensors   # checked above; the disk (128 GB) holds only so many 3B full-state checkpoints
if [ "$(left)" -gt 150 ]; then
  timeout $(budget 300 30) $TR -m lengen.experiments.rowrecord $W/smol3b/rows_resumed "${SMOL[@]}" max_steps=$(( ${FSDP_STEPS:-3} + 1 )) \
    resume_from_checkpoint=auto > $OUT/fsdp_resume.log 2>&1; echo "FSDP resume: rc=$?"
else echo "FSDP resume skipped: $(left) s left" | tee $OUT/fsdp_resume.log; fi

python3 - > $OUT/multigpu.json <<'EOF'
import json, os, re
from pathlib import Path
W, OUT = Path("/tmp/multigpu"), Path(os.environ["OUT"])
def bench(name):
    p = W/f"{name}.json"
    if p.exists(): return json.loads(p.read_text())
    log = (OUT/f"{name}.log").read_text()                      # torchrun: the JSON rank 0 printed
    i = log.find('{\n  "experiment"')
    return json.loads(log[i:log.index("\n}", i) + 2]) if i >= 0 else None
def losses(log):
    return [float(m) for m in re.findall(r"'loss': '([0-9.]+)'", (OUT/log).read_text())] if (OUT/log).exists() else []
b1, b2 = bench("bench_1gpu"), bench("bench_2gpu")
rep = {"bench_1gpu": b1, "bench_2gpu": b2}
if b1 and b2:
    for k in ("steady", "overall"):
        one, two = b1[f"train_tokens_per_s_{k}"], b2[f"train_tokens_per_s_{k}"] * b2["world_size"]
        rep[f"tokens_per_s_{k}"] = {"1gpu": one, "2gpu_total": two, "ratio": two / one}
rows = [json.loads(p.read_text()) for p in sorted((W/"smol3b"/"rows").glob("rows-rank*.json"))]
seen = [{tuple(r) for _, r in x["rows"]} for x in rows]
rep["fsdp"] = {"losses": losses("fsdp_train.log"), "resumed_losses": losses("fsdp_resume.log"),
               "fsdp_blocks_wrapped": [x["fsdp_blocks"] for x in rows], "rows_per_rank": [len(s) for s in seen],
               "ranks_rows_disjoint": len(seen) == 2 and not (seen[0] & seen[1]),
               "train_summary": json.loads((W/"smol3b"/"train_summary.json").read_text()) if (W/"smol3b"/"train_summary.json").exists() else None,
               "load": json.loads((W/"load.json").read_text()) if (W/"load.json").exists() else None}
print(json.dumps(rep, indent=1, default=str))
EOF
python3 -c "
import json; r = json.load(open('$OUT/multigpu.json')); f = r['fsdp']
print('tokens/s:', {k: {kk: round(vv, 3) for kk, vv in r[k].items()} for k in r if k.startswith('tokens_per_s')})
print('FSDP losses', f['losses'], 'resumed', f['resumed_losses'], 'blocks wrapped', f['fsdp_blocks_wrapped'], 'rows disjoint', f['ranks_rows_disjoint'])
print('load:', {k: v for k, v in (f['load'] or {}).items() if 'files' not in k})"
echo "check wall seconds: $(( $(date +%s) - start ))"
