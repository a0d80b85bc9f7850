#!/usr/bin/env bash
# Packs the fused Mamba2 kernels for the GPU machine (part of tools/gpu_bundle.sh) into .gpu/kernels_slim.tar.gz (≈ 23 MB, which tools/gpu_env.sh
# unpacks there): causal_conv1d and mamba_ssm from their prebuilt wheels, without mamba_ssm's Mamba-1 extension
# selective_scan_cuda*.so (40 MB, unused by Mamba2), which a stand-in module replaces (mamba_ssm imports it at import).
#     bash tools/slim_kernels.sh [WHEEL_DIR]      # default: ../shared/gpu/wheels
set -euo pipefail
WHEELS=${1:-../shared/gpu/wheels}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for w in "$WHEELS"/causal_conv1d-*.whl "$WHEELS"/mamba_ssm-*.whl; do unzip -q -o "$w" -d "$tmp"; done
rm -f "$tmp"/selective_scan_cuda*.so
cat > "$tmp/selective_scan_cuda.py" <<'PY'
"Stand-in for mamba_ssm's Mamba-1 extension, left out of the GPU machine's kernels (Mamba2 does not use it)."
def __getattr__(name): raise ImportError(f"selective_scan_cuda.{name}: the Mamba-1 extension was left out (tools/slim_kernels.sh)")
PY
mkdir -p .gpu && tar -czf .gpu/kernels_slim.tar.gz -C "$tmp" .
ls -la .gpu/kernels_slim.tar.gz
