#!/usr/bin/env bash
# Builds .gpu/ (git-ignored, ~34 MiB), what every tools/*_gpu.sh call carries to the GPU machine (run(carry=[".gpu"])):
#   .gpu/wheels/              the pure-Python packages its image lacks (datasets, hydra-core, omegaconf, plotly, liger-kernel, ...;
#                             fastcore for tools/run_cells.py's test cells), from ../shared/gpu/fetch-wheels.sh
#   .gpu/kernels_slim.tar.gz  mamba_ssm and causal_conv1d for its torch (tools/slim_kernels.sh)
# and .gpu_eval/ (git-ignored, ~19 MiB), for the evaluation commands only (tools/long_context_gpu.sh carries both):
#                             lm-eval and the runtime packages it and HELMET import (not scikit-learn/scipy/evaluate,
#                             which the RULER path does not import), and helmet-src/, a copy of HELMET's source (MIT)
# tools/gpu_env.sh installs both there once a machine.
#     bash tools/gpu_bundle.sh [SHARED_GPU_DIR]     # default: ../shared/gpu
set -euo pipefail
GPU=${1:-../shared/gpu}
bash "$GPU/fetch-wheels.sh" .gpu/wheels > /dev/null
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform any \
  fastcore==1.12.4 liger-kernel==0.8.5 -d .gpu/wheels   # liger: the position_85m runs' fused loss
bash tools/slim_kernels.sh "$GPU/wheels"
mkdir -p .gpu_eval/wheels
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
  -d .gpu_eval/wheels lm-eval==0.4.13 pytablewriter dataproperty mbstrdecoder pathvalidate tabledata tcolorpy typepy "chardet<6" \
  rouge-score absl-py nltk wonderwords defusedxml click joblib sacrebleu portalocker colorama tabulate lxml more-itertools pytrec-eval-terrier
python3 -m pip wheel -q --no-deps -w .gpu_eval/wheels sqlitedict word2number   # published as sdists only (pure Python)
rm -rf .gpu_eval/helmet-src && cp -r "$GPU/../reference/helmet-src" .gpu_eval/helmet-src
du -sh .gpu
