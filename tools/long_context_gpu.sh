#!/usr/bin/env bash
# Long-context evaluation on one H200 (issue: RULER to 128K, HELMET ICL at 256K/512K, per-position loss to 512K):
# python -m lengen.experiments.long_context on random-weight checkpoints of the shipped shapes, saved as lengen saves them
# (tools/random_checkpoint.py): SmolLM3-3B with 2K sliding windows and attention scaling (smollm3_3b_swa_8K_vpad_scaled)
# and Mamba2-1.3B. Run from the repository root, carrying the base bundle and the evaluation one (tools/gpu_bundle.sh):
#     run(carry=[".gpu", ".gpu_eval"], command="STAGES='ckpt ruler' bash tools/long_context_gpu.sh")
# Stages (a call of the device tool holds up to ~10 minutes; a machine keeps the checkpoints for the later calls):
#   ckpt      build both checkpoints in /tmp/lc (once a machine, ~1 minute)
#   ruler     lengen_eval_lm niah_single_1/2/3 at 32K, 64K, 128K, 2 prompts each, both models. No Hub and no nltk data
#             here: the essay tasks (2, 3) read the Python documentation's text as their haystack, split into sentences
#             by an empty stand-in for nltk's punkt_tab (the cost is the same; the haystack's sentences are not)
#   helmet    lengen_eval_helmet icl_256k and icl_512k, 1 prompt a dataset, synthetic ICL data, both models
#   position  lengen_eval_position at 131072 and 524288 tokens, 1 document, both models
#   probe     tools/probes/probe_prefill_lengths.py per model: prefill seconds and Triton compiles at lengths new to the process,
#             by remainder mod 16 ($OUT/probe_prefill_lengths_MODEL_default.json; SmolLM3 also _no_cudnn, cuDNN attention off)
#   reads     tools/probes/probe_prompt_reads.py: the RULER command's own prompts read again against random ones of their length
#             (TASKS and LENGTHS: one of each; default niah_single_2 at 65536), per model: $OUT/probe_prompt_reads_MODEL.json
#   cells     the gpu cells of nbs/ops/05_generate.ipynb (fast_generate against transformers' generate on CUDA, tiny
#             models; tools/run_cells.py, ~1 minute, once whatever MODELS says): $OUT/cells_long_generate.txt
# MODELS (default "smollm3 mamba2") picks the models; LENGTHS, TASKS, CONFIGS override a stage's list; GEN sets RULER's
# answer tokens a prompt (--max-gen-toks; default the task's 128, all of which a random-weight model generates).
# Out ($OUT): long_context_h200.json (the entries the call measured) and one log per stage and model. Merge them here:
#   python -c "import json, sys; from lengen.experiments.long_context import merge_entries as m; \
#              m('results/gpu/long_context_h200.json', json.load(open(sys.argv[1]))['entries'])" <files_at>/long_context_h200.json
set -uo pipefail
OUT=${OUT:-$PWD/lc_out}; mkdir -p "$OUT"
source tools/gpu_env.sh
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} LENGEN_HELMET_SRC=$PWD/.gpu_eval/helmet-src
W=/tmp/lc; mkdir -p $W
declare -A CKPT=([smollm3]=$W/smollm3_3b_swa_8K_vpad_scaled [mamba2]=$W/mamba2_1_3b)
export NLTK_DATA=$W/nltk_data; P=$NLTK_DATA/tokenizers/punkt_tab/english; mkdir -p $P
for f in collocations.tab sent_starters.txt abbrev_types.txt ortho_context.tab; do touch $P/$f; done
haystack() {   # the Python documentation's text (the image's pydoc topics), twice, for RULER's essay tasks: once is
               # 65,501 words, about 105K tokens, which lengen_eval_lm refuses for 128K (lm-eval would build 105K prompts)
  [ -f $W/haystack2.txt ] || python3 -c "import pydoc_data.topics as t; open('$W/haystack2.txt', 'w').write('\n\n'.join(2 * list(t.topics.values())))"
  echo $W/haystack2.txt
}
measure() {   # KIND MODEL [options]: one python -m lengen.experiments.long_context call, its log kept
  local kind=$1 model=$2; shift 2
  timeout ${STAGE_LIMIT:-560} python3 -m lengen.experiments.long_context $kind ${CKPT[$model]} --label $(basename ${CKPT[$model]}) \
    --out $OUT/long_context_h200.json "$@" > $OUT/${kind}_$model.log 2>&1
  echo "$kind $model: rc=$?"; grep -A20 "^ *command" $OUT/${kind}_$model.log | head -20
}
for s in ${STAGES:-ckpt ruler}; do
  if [ $s = cells ]; then
    timeout 300 python3 tools/run_cells.py nbs/ops/05_generate.ipynb > $OUT/cells_long_generate.txt 2>&1
    echo "cells: rc=$?"; tail -5 $OUT/cells_long_generate.txt; continue
  fi
  for m in ${MODELS:-smollm3 mamba2}; do
    case $s in
      ckpt)     [ -f ${CKPT[$m]}/config.json ] || case $m in
                  smollm3) python3 tools/random_checkpoint.py smollm3-3b ${CKPT[$m]} smollm3_3b_swa_8K_vpad_scaled ;;
                  mamba2)  python3 tools/random_checkpoint.py mamba2-1.3b ${CKPT[$m]} mamba2_1_3b_cpt_vpad ;;
                esac > $OUT/ckpt_$m.log 2>&1; echo "ckpt $m: $(tail -1 $OUT/ckpt_$m.log)" ;;
      ruler)    measure ruler $m --lengths ${LENGTHS:-32768,65536,131072} --tasks ${TASKS:-niah_single_1,niah_single_2,niah_single_3} \
                  --samples 2 --haystack-file $(haystack) ${GEN:+--max-gen-toks $GEN} ;;
      helmet)   measure helmet $m --configs ${CONFIGS:-icl_256k,icl_512k} --samples 1 ;;
      probe)    for v in default $([ $m = smollm3 ] && echo no_cudnn); do
                  timeout ${STAGE_LIMIT:-300} python3 tools/probes/probe_prefill_lengths.py ${CKPT[$m]} $OUT/probe_prefill_lengths_${m}_$v.json $v \
                    > $OUT/probe_${m}_$v.log 2>&1; echo "probe $m $v: rc=$?"; grep "^{" $OUT/probe_${m}_$v.log | cut -c1-200
                done ;;
      reads)    timeout ${STAGE_LIMIT:-560} python3 tools/probes/probe_prompt_reads.py ${CKPT[$m]} $OUT/probe_prompt_reads_$m.json $(haystack) \
                  ${TASKS:-niah_single_2} ${LENGTHS:-65536} > $OUT/reads_$m.log 2>&1; echo "reads $m: rc=$?"; tail -25 $OUT/reads_$m.log | cut -c1-300 ;;
      position) measure position $m --lengths ${LENGTHS:-131072,524288} --samples 1 ;;
    esac
  done
done
