#!/usr/bin/env bash
# The reduced-scale GPU sweep behind nbs/paper/fig1_copy_task.ipynb (5 settings x 3 seeds of the copy task) and
# fig2_position_loss.ipynb (3 settings x 2 seeds on text), through `python -m lengen.experiments.launch`: each run a
# `python -m lengen.train.cli` process, MAX_PARALLEL at a time, each writing results/<sweep>/<setting>-seed<S>.json when it
# ends. Runs go seed by seed, so a call that ends early leaves every setting with fewer seeds; the next call skips the
# finished runs (commit their JSONs in between). Measured on one H200: the first runs on a fresh machine autotune
# mamba_ssm's kernels (~90 s each, also when several start together); later runs find the results in Triton's cache
# and start in 8-13 s. 12 copy runs without CUDA graphs took 400 s at 3 at once; with `compile.cuda_graphs=true` (the
# copy family's default, and set by fig2's scale) 3 copy runs and the 6 text runs took 176 s at 5 at once (the
# first wave ~125 s with autotuning, a text run ~38 s after it, evaluation included). So one call with MAX_PARALLEL=5
# does all of fig1 and fig2.
#
# Before (on the CPU machine): build the text corpus, which the GPU machine cannot download:
#     apt-get update && apt-get download python3.11-doc && dpkg -x python3.11-doc_*.deb /tmp/pydoc
#     lengen_build_corpus --source /tmp/pydoc/usr/share/doc/python3.11/html/_sources   # -> data/python_docs
# Then, from the repository root on the GPU machine (carry data/python_docs and the dependency wheels):
#     bash tools/run_sweep_gpu.sh
# Settings (environment): SWEEPS (default: both), MAX_PARALLEL=5, SWEEP_TIME_LIMIT=500 (seconds; runs still going
# are stopped and leave no JSON), MIN_LEFT=170 (seconds; no run starts with less left), SWEEP_RESULTS=results,
# SWEEP_ARGS (more lengen_sweep options, e.g. "--only baseline,vpad" or "--set max_steps=800").
# What comes back in $OUT: sweep_results.tgz (the results folder: untar at the repository root and commit the JSONs),
# sweep_logs.tgz (each run's log and training summary) and sweep.log.
set -euo pipefail
OUT=${OUT:-$PWD/sweep_out}; mkdir -p "$OUT"
source tools/gpu_env.sh   # carried wheels and kernels, offline environment
python3 -c "import torch; from lengen.models.mamba2.model import mamba2_kernel_path as k; print(torch.__version__, torch.cuda.get_device_name(), 'fused Mamba2 kernels:', k()['fused'])"
start=$(date +%s)
RESULTS=${SWEEP_RESULTS:-results}
python3 -m lengen.experiments.launch ${SWEEPS:-fig1_copy_task fig2_position_loss} --max-parallel "${MAX_PARALLEL:-5}" --time-limit "${SWEEP_TIME_LIMIT:-500}" \
  --min-left "${MIN_LEFT:-170}" --results-root "$RESULTS" --work-root /tmp/sweep ${SWEEP_ARGS:-} 2>&1 | tee "$OUT/sweep.log"
echo "sweep wall seconds: $(( $(date +%s) - start ))" | tee -a "$OUT/sweep.log"
mkdir -p "$RESULTS" && tar czf "$OUT/sweep_results.tgz" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"
(cd /tmp/sweep && tar czf "$OUT/sweep_logs.tgz" $(ls */*/sweep.log */*/train_summary.json 2>/dev/null))
