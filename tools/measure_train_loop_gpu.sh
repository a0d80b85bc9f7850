#!/usr/bin/env bash
# The single-GPU figures of the training-speed work: `lengen_bench --train-loop` (lengen_train's whole loop against the
# bare step of the same model and batch, in one process) for the shipped families, on local data. Run on the H200 from
# the repository root, carrying data/python_docs (lengen_build_corpus) and .gpu (wheels, kernels_slim.tar.gz):
#     run(carry=["data/python_docs", ".gpu"], command="STAGES='m85 m85g' bash tools/measure_train_loop_gpu.sh")
#     run(carry=["data/python_docs", ".gpu"], command="STAGES='m13 s3' bash tools/measure_train_loop_gpu.sh")
# Stages (each under ~4 min on an H200, the first Mamba2 one including mamba_ssm's autotuning):
#   m85   mamba2_85m_lengen_pile_vpad as shipped, 200 steps (targets: >= 0.95x steady, >= 0.8x overall)
#   m85w  the same again, a later run on the machine (Triton's compiled kernels and autotuning results on disk)
#   m85g  the same with compile.cuda_graphs=true
#   m13   mamba2_1_3b_cpt_vpad as shipped, 12 steps, from a random checkpoint of the 1.3B shape (no Hub there)
#   s3    smollm3_3b_swa_cpt_vpad as shipped, 10 steps, from a random checkpoint of the 3B shape (target >= 0.97x)
# Out ($OUT): train_loop.json (every stage's report and its ratios) and one log per stage.
set -uo pipefail
OUT=${OUT:-$PWD/loop_out}; mkdir -p "$OUT"
source tools/gpu_env.sh   # carried wheels and kernels, offline environment
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}   # one GPU: a process that sees several is refused (DataParallel)
W=/tmp/train_loop; mkdir -p $W
TEXT="--set data.path=data/python_docs/train --set pretrained_tokenizer=data/python_docs/tokenizer --set tokenizer_revision=null"
random_checkpoint() {   # SHAPE DIR: a random model of a lengen_bench shape, saved once
  [ -f "$2/config.json" ] || python3 tools/random_checkpoint.py "$1" "$2"
}
stage() {   # NAME EXPERIMENT [lengen_bench options...]
  local name=$1; shift
  timeout ${STAGE_LIMIT:-280} python3 -m lengen.experiments.bench --train-loop "$@" --out $W/$name.json > $OUT/$name.log 2>&1
  echo "$name: rc=$?"; python3 -c "import json; r=json.load(open('$W/$name.json')); print({k: round(r[k], 3) for k in ('ratio_steady', 'ratio_overall', 'first_step_s', 'steady_step_s', 'bare_step_s')})" 2>/dev/null
}
for s in ${STAGES:-m85 m85g}; do
  case $s in
    m85)  stage m85 mamba2_85m_lengen_pile_vpad $TEXT --steps 200 ;;
    m85w) stage m85w mamba2_85m_lengen_pile_vpad $TEXT --steps 200 ;;   # again: Triton's kernels and autotuning cached
    m85g) stage m85g mamba2_85m_lengen_pile_vpad $TEXT --set compile.cuda_graphs=true --steps 200 ;;
    m13)  random_checkpoint mamba2-1.3b $W/mamba2_1_3b && stage m13 mamba2_1_3b_cpt_vpad $TEXT --set model_name_or_path=$W/mamba2_1_3b --steps 12 ;;
    s3)   random_checkpoint smollm3-3b $W/smollm3_3b && stage s3 smollm3_3b_swa_cpt_vpad $TEXT --set model_name_or_path=$W/smollm3_3b --set revision=null --steps 10 ;;
    *)    echo "unknown stage $s (m85 m85w m85g m13 s3)" ;;
  esac
done
python3 -c "
import json, pathlib
print(json.dumps({p.stem: json.loads(p.read_text()) for p in sorted(pathlib.Path('$W').glob('*.json'))}, indent=1))" > $OUT/train_loop.json
