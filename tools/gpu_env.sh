# Sourced by the tools/*_gpu.sh and check_*.sh scripts on the GPU machine (run from the repository root): installs the
# project's carried wheels (.gpu/wheels, .gpu_eval/wheels) and the fused Mamba2 kernels (.gpu/kernels_slim.tar.gz) into /tmp/site where
# they were carried, and sets the environment every GPU run uses (offline, unbuffered, no progress bars).
if [ -d .gpu/wheels ] && [ ! -f /tmp/site/.lengen_installed ]; then   # once a machine: scripts run side by side share it
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/wheels/*.whl 2>&1 | { grep -v "already exists" || true; }   # pip's status decides
  [ -f .gpu/kernels_slim.tar.gz ] && tar -xzf .gpu/kernels_slim.tar.gz -C /tmp/site
  touch /tmp/site/.lengen_installed
fi
if [ -d .gpu_eval/wheels ] && [ ! -f /tmp/site/.lengen_eval_installed ]; then   # the evaluation bundle, where carried
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu_eval/wheels/*.whl 2>&1 | { grep -v "already exists" || true; }
  touch /tmp/site/.lengen_eval_installed
fi
if [ -f .gpu_cache/triton_cache.tgz ] && [ ! -f /tmp/site/.lengen_triton_cache ]; then   # an earlier machine's compiled and
  mkdir -p "$HOME/.triton" && tar -xzf .gpu_cache/triton_cache.tgz -C "$HOME/.triton"        # autotuned Triton kernels (run_full_sweep_gpu.sh
  mkdir -p /tmp/site && touch /tmp/site/.lengen_triton_cache                                  # brings them back): no ~95 s first step
fi
export PYTHONPATH=$PWD:/tmp/site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TQDM_DISABLE=1
