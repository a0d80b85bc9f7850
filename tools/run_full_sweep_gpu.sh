#!/usr/bin/env bash
# Paper-scale sweeps of lengen.experiments.sweep on a lent GPU machine, in waves: a machine lives at most 30 minutes and
# keeps a run's checkpoints, so each machine (one wave) starts the runs it can finish; a later wave skips the runs whose
# results/<sweep>/<run>.json is committed. How many runs a wave holds, and why, is in nbs/experiments/10_throughput.ipynb.
#
# Before a session's first call, here: `bash tools/stamp_source.sh` (the records' provenance names that commit).
# A wave is back-to-back device calls from the repository root:
#   run(carry=[".gpu", ".gpu_cache"], command="SWEEPS=copy_full_scale MAX_PARALLEL=4 bash tools/run_full_sweep_gpu.sh start")
#   run(command="bash tools/run_full_sweep_gpu.sh wait")   # again until it says the sweep has ended
# After each call, here: tar xzf <files_at>/full_sweep_results.tgz at the repository root and commit the JSONs; keep the
# returned triton_cache.tar.xz as .gpu_cache/triton_cache.tar.xz (tools/gpu_env.sh unpacks it: the next machine skips autotuning).
# The wave's progress JSON: python tools/wave_progress.py <files_at> --out results/gpu/copy_waveN_<gpu>_progress.json --what "..." --date ... --min-left ...
# xz, not gzip: 5.9 MB against 13 MB for the cache of 2026-12-07 (its text IR compresses well), so that the cache fits a
# call's 64 MiB carry beside .gpu (34 MiB) and the working tree (about 18 MiB); with gzip it did not.
# A sweep that reads a corpus (`lengen_sweep SWEEP --check` names it: Sweep.corpus) needs it on the machine first: one
# few `receive` calls that carry lengen_build_corpus's packed corpus. A call's carry counts the working tree too (about
# 18 MiB) toward its 64 MiB, so with P=data/debian_mix/parts (parts of ~23 MiB):
#   run(carry=[".gpu", f"{P}/manifest.json", f"{P}/tokenizer", f"{P}/heldout.jsonl.xz", f"{P}/train_names.txt.xz"], command="bash tools/run_full_sweep_gpu.sh receive")
#   run(carry=[f"{P}/rows2048-000.u16.xz", f"{P}/rows2048-001.u16.xz"], command="bash tools/run_full_sweep_gpu.sh receive")   # two parts a call
#   run(carry=[<the last two parts>], command="bash tools/run_full_sweep_gpu.sh receive && WAIT=420 SWEEPS=... bash tools/run_full_sweep_gpu.sh start")
# The call with the last part unpacks (61 s on the H200 machine for debian_mix), so a start in the same call waits less.
# Measured on 2026-12-05 (failure_search S16_T256, one H200): the two seeds side by side under CUDA MPS (MAX_PARALLEL=2)
# took 810 s each (674 s training 1000 steps, ~90 s of in-run evaluation), 36.7 GB of GPU memory for both.
# On an H100 (80 GB; lent when no H200 is) at most three copy runs fit (four ran out of memory at step ~6,400: ~20 GiB a
# run with its evaluation graphs), 82 steps/s for the three (results/gpu/sweep_throughput_h100.json). Measured on
# 2026-12-06 (copy_confirmatory, one H100): three side by side finished, 818-834 s of training and 859-866 s each, but
# their records' peak_gpu_gib is 25.1-25.3 GiB (20.2 until step 18,000: the final evaluation's teacher-forced pass over
# 64 strings of 1,000 letters adds ~5 GiB). That pass is now split at lengen.eval.copy_task.FORWARD_TOKENS (memory layout
# 2, lengen.experiments.results.MEMORY_LAYOUT). Layout 2, measured on 2026-12-06 (copy_confirmatory, one H100, three under
# MPS, 855-876 s wall each): peak_gpu_gib 18.33 (baseline, weight decay) and 21.08 GiB (VPAD); by the fit rule (peak x 1.1
# + 0.5 GiB) three fit on an H100 and five on an H200: MAX_PARALLEL=3 on an H100, 5 on an H200 (checked by those three
# settings' peaks; pre-linear and pre-norm, with no layout-2 peak yet, are logged as unchecked). Six on an H200 would not
# end inside a machine: the GPU saturates near 107 aggregate steps/s, and five took 1,254-1,291 s a run (wave 6), so six
# would take ~1,500 s of the 1,471 s a sweep may run. SWEEPS may name several sweeps; SWEEP_ARGS apply to each, e.g. the noise floor's
# second runs beside confirmatory ones: SWEEPS="copy_noise_floor copy_confirmatory" SWEEP_ARGS='--seeds 100,101'.
# Measured on 2026-12-06 (failure_search small_T256, one H100): two seeds under MPS, 1,143 s wall each, 5.1 GiB peak.
# Two rounds of three on one H100 (six copy runs a machine), untried: on 2026-12-07, with a carried Triton cache, the
# machine's start took 97 s of device time and the sweep began 28 s after the first call; its first run ended 722 s into
# the sweep (runs took 722-733 s wall, three under MPS), when the default window (MACHINE_SECONDS=1500: 1,472 s for the
# sweep) had 750 s left, fewer than MIN_LEFT=1200, so the sweep started no more. A second round started then would end
# ~1,460 s into the sweep, ~1,590 s of a session's 1,800 s of device time. MACHINE_SECONDS=$(( budget_left_s - 240 ))
# MIN_LEFT=auto (no run starts with less left than the last one took, or than the longest recorded before one has) allows it when `status` shows the whole budget
# before the first call (1,560: ~810 s left at 722 s). Tried on 2026-12-07 (eighth wave, one H100): two refused starts had
# left 1,529 s, and MACHINE_SECONDS=1329 (the budget less 200 s, not 240); the first run ended 740 s into a 1,297 s window
# and auto started no second round. A slot's second run ends about two of its runs in (2 x 759 s = ~1,518 s for the
# slowest), so two rounds need ~1,790 s in `status` before the first call (with the 240 s margin): a whole budget, only just.
# That assumed a 97 s start: the ninth wave's fresh H100 (2026-12-07) took 479 s of device time to start (its first call's
# held time less its wall time), after which two rounds need ~1,980 s, more than a budget (10_throughput's ninth wave).
# A run cut by the window is lost (its record is never written); those that ended before it are not.
# The twelfth wave (2026-12-07, one H100) ran two rounds: MACHINE_SECONDS=1580 with 1,619 s in `status` (the budget less
# 39 s, not 240) and a 268 s start; the first round's three runs took 732-781 s, auto started two more when the first two
# ended, and those two, two at once, took 569-572 s. They ended ~1,617 s into the hold and the last call's lease held
# 1,669 s, past the 1,619 s shown; it fitted only because the budget counted 624 of the first call's 804 held seconds.
# MACHINE_SECONDS counts from the first call, so the start is outside it: keep MACHINE_SECONDS + the start (unknown before
# the call) + the last call's return within the budget. A first call that only installs (`source tools/gpu_env.sh`, which
# stamps the machine's first call) makes the start known before the sweep is sized: its lease's held_s less its wall_s.
# Then MACHINE_SECONDS = that lease's budget_left_s + its wall_s, less the last call's return (~60 s) and the gaps between
# calls (~30 s); three at once need a window of ~920 s, two at once ~600 s (untried on a machine: on 2026-12-08 six starts
# were refused, 180 s of the budget each, before the loans paused). tools/wave_progress.py --lease keeps every call's lease.
# lengen_sweep refuses, before any run starts, a count whose runs do not fit in the GPUs' memory by the peak GPU memory
# their experiments' records hold (peak_gpu_gib); MAX_PARALLEL=auto takes the most that fit and the sweep's log says how
# many ("GPU memory: ..."). Both read the records under $W/results: the committed ones of the sweeps in SWEEPS (copied in
# at start) and those this machine's waves wrote; auto is refused while no record of an experiment holds a peak.
#
# Modes: start | wait | collect (pack now) | stop | receive | throughput (`lengen_sweep --throughput`, ~6 minutes).
# Settings (environment): SWEEPS (default copy_full_scale), SWEEP_ARGS (more lengen_sweep options, e.g. "--seeds 1 --only
# baseline,vpad"), MAX_PARALLEL (runs at once on the whole machine, default 3: fits an H100; auto: as many as fit in the GPUs'
# memory), MPS (1; 0: no CUDA MPS), TIME_LIMIT (seconds the sweep may run; default: until MACHINE_SECONDS=1500 after the
# machine's first call), MIN_LEFT (no run starts with fewer seconds left, default 1200; auto: fewer than the last
# finished run took, or before one has, the longest recorded of the same runs made the same way: lengen_sweep --min-left), WAIT (seconds a call waits: 480 for start, 540 for wait), CORPUS (the folder `receive` fills,
# default data/debian_mix),
# THROUGHPUT_EXPERIMENT, THROUGHPUT_RUNS (1,4,6), THROUGHPUT_STEPS (500).
# Each progress report reads every run's lengen_progress.json (lengen.train.progress) through `lengen_sweep --progress`;
# every report a wave printed, and the start's window line, come back as progress_log.txt (progress.txt: the last report);
# tools/wave_progress.py turns them into the wave's progress JSON.
set -uo pipefail
MODE=${1:-wait}
OUT=${OUT:-$PWD/full_sweep_out}; mkdir -p "$OUT"
export W=${SWEEP_WORK:-/tmp/full_sweep}; mkdir -p "$W/results"   # outside the repository: each call re-syncs the tree
source tools/gpu_env.sh   # carried wheels and kernels (installed once a machine), offline environment
CORPUS=${CORPUS:-data/debian_mix}   # inside the tree: records keep relative paths
MPSFLAG=$([ "${MPS:-1}" = 1 ] && echo --mps)

running() { [ -f "$W/sweep.pid" ] && kill -0 "$(cat "$W/sweep.pid")" 2>/dev/null; }

progress() {   # one line per run from its progress file (lengen.train.progress), the GPU's memory, the sweep's last lines
  local began; began=$(cat "$W/started" 2>/dev/null || date +%s)
  echo "--- $(date +%H:%M:%S): $(awk -v s="$began" -v n="$(date +%s)" 'BEGIN { printf "%.1f", (n - s) / 60 }') min into the wave"
  python3 -m lengen.experiments.launch --progress --work-root "$W/runs" --results-root "$W/results"
  nvidia-smi --query-gpu=memory.used,memory.total,utilization.gpu --format=csv,noheader 2>/dev/null | sed 's/^/GPU memory used, total; utilization: /'
  grep -m1 "^GPU memory: " "$W/sweep.log" 2>/dev/null   # how many runs fit, or that it is unchecked (lengen_sweep's fit check)
  grep -v "^GPU memory: " "$W/sweep.log" 2>/dev/null | tail -n 3   # (that line is above, once)
}

new_records() {   # the results JSONs this machine's sweep wrote: under $W/results, newer than the sweep's start (the committed
  # records are copied in before it), so a copy of a record amended here since then never comes back over the amendment
  [ -f "$W/started" ] && (cd "$W" && find results -name '*.json' -newer started | sort)
}

pack() {   # the new results JSONs (untar at the repository root), the logs, the progress
  new_records | tar czf "$OUT/full_sweep_results.tgz" -C "$W" -T -   # by content, not by SWEEPS: a 'wait' call is not told the start's SWEEPS
  (cd "$W" && tar czf "$OUT/full_sweep_logs.tgz" $(ls sweep.log runs/*/*/sweep.log runs/*/*/lengen_progress.json runs/*/*/train_summary.json 2>/dev/null))
  progress > "$OUT/progress.txt" 2>&1
  cp "$W/progress.log" "$OUT/progress_log.txt" 2>/dev/null   # all of the wave's reports, for its progress JSON
  echo "packed $(tar tzf "$OUT/full_sweep_results.tgz" | grep -c '\.json$') new results JSONs into $OUT/full_sweep_results.tgz"
}

wait_for() {   # SECONDS: until the sweep has ended or SECONDS have passed, progress every 2 minutes
  local until=$(( $(date +%s) + $1 )) next=0
  while running && [ "$(date +%s)" -lt "$until" ]; do
    [ "$(date +%s)" -ge "$next" ] && { progress | tee -a "$W/progress.log"; next=$(( $(date +%s) + 120 )); }   # every report kept
    sleep 10
  done
  running && echo "the sweep is still running: call 'wait' again" || echo "the sweep has ended"
}

case $MODE in
  start)
    if running; then echo "a sweep is running already (pid $(cat "$W/sweep.pid")): waiting on it"
    else
      python3 -m lengen.experiments.launch ${SWEEPS:-copy_full_scale} ${SWEEP_ARGS:-} --check --results-root "$W/results" --work-root "$W/runs" \
        || { echo "the sweep's runs do not compose here (above): a missing corpus arrives by 'receive' calls; a bad option is in SWEEP_ARGS"; exit 2; }
      for d in results/*/; do   # every committed record: the sweep skips its runs that have one, and sizes its runs (peaks, walls) by all
        mkdir -p "$W/$d"; cp -n "$d"*.json "$W/$d" 2>/dev/null
      done
      : > "$W/progress.log"   # this wave's reports only
      python3 -c "import torch; from lengen.models.mamba2.model import mamba2_kernel_path as k; print(torch.__version__, torch.cuda.get_device_name(), 'fused Mamba2 kernels:', k()['fused'])"
      date +%s > "$W/started"
      FIRST_CALL=$(stat -c %Y /tmp/site/.lengen_first_call)   # when this machine's first call began (tools/gpu_env.sh)
      LIMIT=${TIME_LIMIT:-$(( FIRST_CALL + ${MACHINE_SECONDS:-1500} - $(date +%s) ))}
      [ "$LIMIT" -ge 60 ] || { echo "TIME_LIMIT: $LIMIT s left of MACHINE_SECONDS on this machine, too few for a run"; exit 2; }
      echo "the sweep may run $LIMIT s (it began $(( $(date +%s) - FIRST_CALL )) s after this machine's first call)" | tee -a "$W/progress.log"
      setsid nohup python3 -m lengen.experiments.launch ${SWEEPS:-copy_full_scale} $MPSFLAG --max-parallel "${MAX_PARALLEL:-3}" \
        --time-limit "$LIMIT" --min-left "${MIN_LEFT:-1200}" --results-root "$W/results" --work-root "$W/runs" \
        ${SWEEP_ARGS:-} > "$W/sweep.log" 2>&1 < /dev/null &
      echo $! > "$W/sweep.pid"; echo "started the sweep (pid $!): ${SWEEPS:-copy_full_scale}, --max-parallel ${MAX_PARALLEL:-3}"
    fi
    wait_for "${WAIT:-480}"; pack ;;
  wait) wait_for "${WAIT:-540}"; pack
    if ! running && [ -d "$HOME/.triton/cache" ]; then   # the machine's compiled, autotuned kernels, for the next machine
      pack_triton_cache "$OUT/triton_cache.tar.xz" && du -h "$OUT/triton_cache.tar.xz"
    fi ;;
  collect) progress; pack ;;
  receive)   # corpus parts carried in this call wait in /tmp/parts; once every part the manifest lists is there, unpack
    mkdir -p /tmp/parts; [ -d "$CORPUS/parts" ] && cp -r "$CORPUS/parts/." /tmp/parts/
    missing=$(python3 -c "import json, pathlib; m = json.load(open('/tmp/parts/manifest.json'))['parts']; print(' '.join(k for k in m if k.startswith(('rows', 'heldout')) and not pathlib.Path('/tmp/parts', k).is_file()))" 2>/dev/null || echo manifest.json)
    if [ -n "$missing" ]; then echo "waiting for: $missing"
    else python3 -m lengen.corpus unpack --parts /tmp/parts --out "$CORPUS" --rows-block 64 128 256 512 && ls "$CORPUS"; fi ;;   # rows64/ ... rows512/: the shorter rows some sweeps train on
  stop) running && kill -- "-$(cat "$W/sweep.pid")"; sleep 5; pack ;;   # the sweep's process group: its runs too
  throughput)
    timeout 570 python3 -m lengen.experiments.launch --throughput "${THROUGHPUT_EXPERIMENT:-copy_jelassi_mamba2_45m_vpad}" \
      --runs "${THROUGHPUT_RUNS:-1,4,6}" $MPSFLAG --steps "${THROUGHPUT_STEPS:-500}" ${SWEEP_ARGS:-} \
      --out "$W/sweep_throughput_h200.json" > "$OUT/throughput.log" 2>&1
    echo "throughput rc=$?"; tail -n 5 "$OUT/throughput.log"
    cp "$W/sweep_throughput_h200.json" "$OUT/" 2>/dev/null ;;   # here: copy it to results/gpu/ and commit it
  *) echo "usage: bash tools/run_full_sweep_gpu.sh start|wait|collect|stop|receive|throughput"; exit 2 ;;
esac
