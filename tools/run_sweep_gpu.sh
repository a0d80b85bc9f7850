#!/usr/bin/env bash
# The reduced-scale GPU sweep behind nbs/experiments/fig1_copy_task.ipynb (5 settings x 3 seeds of the copy task) and
# fig2_position_loss.ipynb (3 settings x 2 seeds on text), through `python -m lengen.sweep`: each run a
# `python -m lengen.train` process, MAX_PARALLEL at a time, each writing results/<sweep>/<setting>-seed<S>.json when it
# ends. Runs go seed by seed, so a call that ends early leaves every setting with fewer seeds; the next call skips the
# finished runs (commit their JSONs in between). Measured on one H200: a copy run trains at 0.068 s a step alone and
# 0.14 s a step with two at once (1000 steps of 128 strings: ~2.5 min a run), a text run at 0.14 s a step alone (600
# steps: ~2 min); start-up and evaluation add ~20 s a run; 21 runs at once were slower in total than one. With the
# defaults (2 at a time, 500 s, no start with under 170 s left) a call should finish about 6 copy runs (three waves
# of two, ~160 s each): fig1 takes about 3 calls, fig2 about 2 (or 1 with --set max_steps=300); runs never started
# or stopped at the limit are simply done by the next call.
#
# Before (on the CPU machine): build the text corpus, which the GPU machine cannot download:
#     apt-get update && apt-get download python3.11-doc && dpkg -x python3.11-doc_*.deb /tmp/pydoc
#     python tools/build_text_corpus.py --source /tmp/pydoc/usr/share/doc/python3.11/html/_sources   # -> data/python_docs
# Then, from the repository root on the GPU machine (carry data/python_docs and the dependency wheels):
#     bash tools/run_sweep_gpu.sh
# Settings (environment): SWEEPS (default: both), MAX_PARALLEL=2, SWEEP_TIME_LIMIT=500 (seconds; runs still going
# are stopped and leave no JSON), MIN_LEFT=170 (seconds; no run starts with less left), SWEEP_RESULTS=results,
# SWEEP_ARGS (more lengen.sweep options, e.g. "--only baseline,vpad" or "--set max_steps=800").
# What comes back in $OUT: sweep_results.tgz (the results folder: untar at the repository root and commit the JSONs),
# sweep_logs.tgz (each run's log and training summary) and sweep.log.
set -euo pipefail
OUT=${OUT:-$PWD/sweep_out}; mkdir -p "$OUT"
if [ -d .gpu/wheels ]; then                      # the project's wheels for the GPU machine, where they were carried
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/wheels/*.whl
  [ -f .gpu/kernels_slim.tar.gz ] && tar -xzf .gpu/kernels_slim.tar.gz -C /tmp/site
fi
export PYTHONPATH=$PWD:/tmp/site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TQDM_DISABLE=1
python3 -c "import torch; from lengen.mamba2 import mamba2_kernel_path as k; print(torch.__version__, torch.cuda.get_device_name(), 'fused Mamba2 kernels:', k()['fused'])"
start=$(date +%s)
RESULTS=${SWEEP_RESULTS:-results}
python3 -m lengen.sweep ${SWEEPS:-fig1_copy_task fig2_position_loss} --max-parallel "${MAX_PARALLEL:-2}" --time-limit "${SWEEP_TIME_LIMIT:-500}" \
  --min-left "${MIN_LEFT:-170}" --results-root "$RESULTS" --work-root /tmp/sweep ${SWEEP_ARGS:-} 2>&1 | tee "$OUT/sweep.log"
echo "sweep wall seconds: $(( $(date +%s) - start ))" | tee -a "$OUT/sweep.log"
mkdir -p "$RESULTS" && tar czf "$OUT/sweep_results.tgz" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"
(cd /tmp/sweep && tar czf "$OUT/sweep_logs.tgz" $(ls */*/sweep.log */*/train_summary.json 2>/dev/null))
