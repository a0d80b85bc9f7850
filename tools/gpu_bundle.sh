#!/usr/bin/env bash
# Builds .gpu/ (git-ignored, ~34 MiB), what every tools/*_gpu.sh call carries to the GPU machine (run(carry=[".gpu"])):
#   .gpu/wheels/              the pure-Python packages its image lacks (datasets, hydra-core, omegaconf, plotly, ...;
#                             fastcore for tools/run_cells.py's test cells), from ../shared/gpu/fetch-wheels.sh
#   .gpu/kernels_slim.tar.gz  mamba_ssm and causal_conv1d for its torch (tools/slim_kernels.sh)
# tools/gpu_env.sh installs both there once a machine.
#     bash tools/gpu_bundle.sh [SHARED_GPU_DIR]     # default: ../shared/gpu
set -euo pipefail
GPU=${1:-../shared/gpu}
bash "$GPU/fetch-wheels.sh" .gpu/wheels > /dev/null
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform any \
  fastcore==1.12.4 -d .gpu/wheels
bash tools/slim_kernels.sh "$GPU/wheels"
du -sh .gpu
