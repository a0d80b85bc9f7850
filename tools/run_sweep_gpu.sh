#!/usr/bin/env bash
# The reduced-scale GPU sweep behind nbs/experiments/fig1_copy_task.ipynb (5 settings x 3 seeds of the copy task) and
# fig2_position_loss.ipynb (3 settings x 2 seeds on text), through `python -m lengen.sweep`: each run a
# `python -m lengen.train` process, MAX_PARALLEL at a time, each writing results/<sweep>/<setting>-seed<S>.json when it
# ends. Runs are ordered seed by seed, so a call stopped at its time limit leaves every setting with fewer seeds; the
# next call skips the finished runs (commit their JSONs in between). Measured on one H200: a copy run ~2 min alone, a
# text run ~1.7 min; 4 at a time ~1.4x the throughput of one; the whole of both sweeps ~25-30 min, i.e. about three
# calls of 9 minutes (SWEEPS=fig2_position_loss for the text sweep alone, ~6-7 min).
#
# Before (on the CPU machine): build the text corpus, which the GPU machine cannot download:
#     apt-get update && apt-get download python3.11-doc && dpkg -x python3.11-doc_*.deb /tmp/pydoc
#     python tools/build_text_corpus.py --source /tmp/pydoc/usr/share/doc/python3.11/html/_sources   # -> data/python_docs
# Then, from the repository root on the GPU machine (carry data/python_docs and the dependency wheels):
#     bash tools/run_sweep_gpu.sh
# Settings (environment): SWEEPS (default: both), MAX_PARALLEL=4, SWEEP_TIME_LIMIT=480 (seconds; runs still going
# are stopped and leave no JSON), SWEEP_RESULTS=results, SWEEP_ARGS (more lengen.sweep options, e.g. "--set max_steps=800").
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
python3 -m lengen.sweep ${SWEEPS:-fig1_copy_task fig2_position_loss} --max-parallel "${MAX_PARALLEL:-4}" --time-limit "${SWEEP_TIME_LIMIT:-480}" \
  --results-root "$RESULTS" --work-root /tmp/sweep ${SWEEP_ARGS:-} 2>&1 | tee "$OUT/sweep.log"
echo "sweep wall seconds: $(( $(date +%s) - start ))" | tee -a "$OUT/sweep.log"
mkdir -p "$RESULTS" && tar czf "$OUT/sweep_results.tgz" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"
(cd /tmp/sweep && tar czf "$OUT/sweep_logs.tgz" $(ls */*/sweep.log */*/train_summary.json 2>/dev/null))
