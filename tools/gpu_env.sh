# Sourced by the tools/*_gpu.sh and check_*.sh scripts on the GPU machine (run from the repository root): installs the
# project's carried wheels (.gpu/wheels, .gpu_eval/wheels) and the fused Mamba2 kernels (.gpu/kernels_slim.tar.gz) into /tmp/site where
# they were carried, unpacks a carried Triton cache (.gpu_cache/triton_cache.tar.xz: an earlier machine's compiled and
# autotuned kernels, which run_full_sweep_gpu.sh brings back; no ~95 s first step), and sets the environment every GPU
# run uses (offline, unbuffered, no progress bars).
install_wheels() { python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$1"/*.whl 2>&1 | { grep -v "already exists" || true; }; }   # pip's status decides
install_gpu() { install_wheels .gpu/wheels; if [ -f .gpu/kernels_slim.tar.gz ]; then tar -xzf .gpu/kernels_slim.tar.gz -C /tmp/site; fi; }
unpack_triton_cache() {   # Python's tarfile reads xz whether or not the machine has the xz program
  python3 -c 'import sys, tarfile   # the "data" filter where Python has it (3.12; 3.11.4)
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))' .gpu_cache/triton_cache.tar.xz "$HOME/.triton"; }
pack_triton_cache() {   # DEST: the machine's compiled, autotuned kernels as an xz tar (multithreaded xz where there is one)
  if command -v xz > /dev/null; then XZ_OPT=-T0 tar cJf "$1" -C "$HOME/.triton" cache
  else python3 -c 'import sys, tarfile
with tarfile.open(sys.argv[1], "w:xz") as t: t.add(sys.argv[2], arcname="cache")' "$1" "$HOME/.triton/cache"; fi; }
once() {   # MARKER COMMAND...: COMMAND once a machine (the marker in /tmp/site: scripts run side by side share it)
  local mark=/tmp/site/.lengen_$1; shift
  if [ ! -f "$mark" ]; then "$@"; mkdir -p /tmp/site && touch "$mark"; fi
}
console_scripts() {   # settings.ini's console scripts in /tmp/lengen_bin: the project travels as a tree on PYTHONPATH, not
  # installed. Written at every call (this tree's list), outside /tmp/site so that pip --target keeps installing wheels' bin/.
  mkdir -p /tmp/lengen_bin
  sed -n 's/^console_scripts *= *//p' settings.ini | tr ' ' '\n' | while IFS='=:' read -r name module fn; do
    [ -z "$name" ] && continue   # (two spaces in a row)
    printf '#!/usr/bin/env python3\nimport sys\nfrom %s import %s\nsys.exit(%s())\n' "$module" "$fn" "$fn" > "/tmp/lengen_bin/$name"
    chmod +x "/tmp/lengen_bin/$name"
  done
}
once first_call true   # its marker's time: when this machine's first call began (run_full_sweep_gpu.sh times its waves from it)
if [ -d .gpu/wheels ]; then once installed install_gpu; fi
if [ -d .gpu_eval/wheels ]; then once eval_installed install_wheels .gpu_eval/wheels; fi
if [ -f .gpu_cache/triton_cache.tar.xz ]; then once triton_cache unpack_triton_cache; fi
console_scripts   # so a notebook cell or script can call lengen_train as a user does
if [ -f .gpu/source_commit ]; then export LENGEN_SOURCE_COMMIT="$(cat .gpu/source_commit)"; fi   # the commit (tools/stamp_source.sh): no .git travels
export PATH=/tmp/lengen_bin:$PATH PYTHONPATH=$PWD:/tmp/site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TQDM_DISABLE=1
