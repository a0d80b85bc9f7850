#!/usr/bin/env bash
# The paper-scale sweeps of lengen.experiments.sweep on one H200, in waves, several runs at once under CUDA MPS:
#   copy_full_scale  the five copy_jelassi_mamba2_45m_* experiments exactly as shipped, 3 seeds (15 runs of 20,000 steps)
#   position_85m     the 85M Mamba2 of mamba2_85m_lengen_pile_* on the local corpus data/debian_mix, 800 steps (105M
#                    tokens), evaluated per position to 65,536 tokens; baseline, vpad, weight_decay, pre_linear x 2 seeds
# Each finished run writes results/<sweep>/<setting>-seed<S>.json; a later wave skips the runs whose JSON is committed.
#
# Why waves, and why detached. One GPU command lasts at most 10 minutes; a machine lives at most 30 minutes, and only
# while calls come back to back (it is given back ~30 s after a call ends); a run's checkpoints stay on its machine. So
# a run must start and end on one machine: one machine is one wave. `start` launches `python -m lengen.experiments.sweep` in its
# own process session (setsid nohup: it outlives the call) with a time limit that ends it before the machine goes back,
# then waits; `wait` calls follow back to back, each printing each run's progress (its progress.json: lengen.train.progress) and packing every finished
# run's JSON into $OUT; the last one returns once the sweep has ended (at its time limit at the latest).
#
# Before a session's first call, here: `bash tools/stamp_source.sh` (after the last commit). It writes .gpu/source_commit,
# which travels with .gpu; tools/gpu_env.sh exports it as LENGEN_SOURCE_COMMIT, so every record's provenance names the
# commit that ran (the GPU machine gets the tree without its .git).
#
# A wave is three calls of the device tool, back to back, from the repository root:
#   run(carry=[".gpu"], command="SWEEPS=copy_full_scale MAX_PARALLEL=4 bash tools/run_full_sweep_gpu.sh start")  # ~8 min
#   run(command="bash tools/run_full_sweep_gpu.sh wait")                                                        # ~9.5 min
#   run(command="bash tools/run_full_sweep_gpu.sh wait")                                   # until the sweep has ended
# After each call, on this machine: tar xzf <files_at>/full_sweep_results.tgz (it holds results/<sweep>/*.json: run it
# at the repository root) and commit the JSONs. The call that sees the sweep end also returns triton_cache.tgz, the
# kernels Triton compiled and autotuned on that machine: keep it as .gpu_cache/triton_cache.tgz (git-ignored) and add
# ".gpu_cache" to the next first call's carry; tools/gpu_env.sh unpacks it, and the runs' first step skips the ~95 s
# of compilation and autotuning (same image, same kernels). A call that never comes back (machine gone) loses only the runs still
# going; every JSON packed by an earlier call is complete. Stop early: `bash tools/run_full_sweep_gpu.sh stop`.
# position_85m and failure_85m read the corpus tools/build_text_corpus.py --preset debian_mix packs: since 2026-12-03
# 319.8M training tokens in six row parts of xz (the rows already tokenized and packed; 23.1 MiB each, the last 13.6),
# 129 MiB in all, far more than one call may carry beside .gpu (~34 MiB; 64 MiB with the ~13 MiB tree). So it arrives
# in `receive` calls, one part each (they wait in /tmp/parts; the call that completes them unpacks into data/debian_mix
# here, inside the tree, so results keep relative paths, and cuts the rows into rows64/, rows128/, rows256/ and rows512/;
# the unpack with the two longer cuts took 42 s, the two shorter ones add about as much, estimated), then the wave:
#   P=data/debian_mix/parts
#   run(carry=[".gpu", f"{P}/manifest.json", f"{P}/tokenizer", f"{P}/heldout.jsonl.xz"], command="bash tools/run_full_sweep_gpu.sh receive")
#   run(carry=[f"{P}/rows2048-000.u16.xz"], command="bash tools/run_full_sweep_gpu.sh receive")   # and 001 ... 004 alike
#   run(carry=[".gpu_cache", f"{P}/rows2048-005.u16.xz"], command="bash tools/run_full_sweep_gpu.sh receive")   # unpacks (~45 s)
# (The eight position_85m records committed before then were trained on the earlier 120M-token corpus: same BPE,
# same 32 long held-out files.)
#   run(command="SWEEPS=position_85m MAX_PARALLEL=1 MIN_LEFT=auto SWEEP_ARGS='--seeds 0 --only baseline,state_noise,vpad,weight_decay' bash tools/run_full_sweep_gpu.sh start")
#
# On a machine of several GPUs (the device tool's nvidia-h200-x2/x4/x8 kinds, when they are lent) the sweep spreads its
# runs over all of them (lengen.experiments.sweep's GpuPicker: each run gets the GPU with the fewest runs); MAX_PARALLEL
# counts the runs of the whole machine. Device time counts the machine's held time, not its GPUs, so such a machine
# makes several waves at once: on eight GPUs, the copy runs two a GPU (SWEEPS=copy_full_scale MAX_PARALLEL=16: two a
# GPU train at least as fast each as four under MPS) and the position runs one a GPU (MAX_PARALLEL=8 MIN_LEFT=auto).
# The GPUs left out of CUDA_VISIBLE_DEVICES stay free for other work while the sweep runs detached: e.g.
# CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6 for `start`, and later calls run tools/long_context_gpu.sh with CUDA_VISIBLE_DEVICES=7
# before `bash tools/run_full_sweep_gpu.sh collect`.
#
# Modes: start | wait | collect (pack now, no waiting) | stop | receive (corpus parts, above) | throughput (how many runs a wave holds: runs
# `python -m lengen.experiments.sweep --throughput` in the foreground, ~6 minutes; $OUT/sweep_throughput_h200.json goes to results/gpu/).
#
# Settings (environment): SWEEPS (start; default copy_full_scale), MAX_PARALLEL (default 4), MPS (1; 0: no CUDA MPS),
# TIME_LIMIT (seconds the sweep may run; default: until MACHINE_SECONDS after this machine's first call began, 1500,
# ~26 minutes into a machine whose start takes about one, whichever call that was: a wave after three `receive` calls
# gets that much less), MIN_LEFT (seconds: no run starts with less left, default 1200: one wave per machine; auto: no
# run starts with less left than the run finished last took),
# WAIT (seconds a call waits; default 480 for start, 540 for wait), SWEEP_ARGS (more lengen.experiments.sweep options: "--seeds 1",
# "--only baseline,vpad"), THROUGHPUT_EXPERIMENT (copy_jelassi_mamba2_45m_vpad), THROUGHPUT_RUNS (1,4,6: eight runs of ~19 GiB each do not fit),
# THROUGHPUT_STEPS (500).
#
# Expected time per wave. A copy run is 20,000 steps plus 11 evaluations (every 2000 steps and at the end: 10 lengths
# to 1000 letters, ~15 s a pass alone with lengen.ops.decode's recurrent decoding of a 45M model that never stops
# early) plus the machine's first Triton autotuning (~2 minutes, once). Measured with packed examples and without
# Liger's kernels (results/gpu/sweep_throughput_stock_h200.json, the copy family as the 15 runs trained): one run alone
# 49 steps/s, four under MPS 94 in all, six 98 (eight do not fit: ~19 GiB each); with kernels.liger, shipped since
# (results/gpu/sweep_throughput_h200.json), four make 105 in all and six 107. Four runs at once train their 80,000 steps in ~14 minutes,
# which leaves the evaluations (slower when shared) ~8 minutes of a 24-minute wave: MAX_PARALLEL=4, 4 waves for the 15 copy runs. Measured (wave 6, 2026-12-03,
# with the evaluation dense from 50 to 200 letters during training and 300-1000 letters only at the end): five runs at
# once, 1254-1291 s each, the wave ending 21 minutes after it began (first step ~95 s: no Triton cache carried); so the
# later waves run five: SWEEPS=copy_full_scale MAX_PARALLEL=5 SWEEP_ARGS='--seeds 4,5 --only baseline,vpad,pre_linear'.
# Wave 7 (2026-12-04, four runs beside the issue-42 probe) ran baseline seeds 4 and 5, VPAD and pre-linear seed 4;
# baseline-seed5 and pre_linear-seed4 diverged (loss NaN from steps ~650 and ~1550), so the sweep adds baseline-seed8
# and pre_linear-seed8 in their place (lengen.experiments.sweep.replacements). The next waves, five runs each:
#   SWEEP_ARGS='--seeds 5,6 --only baseline,vpad,pre_linear'   (vpad/pre_linear 5, all three 6; the replacements wait)
#   SWEEP_ARGS='--seeds 7 --only baseline,vpad,pre_linear'     (all three 7, then baseline-seed8 and pre_linear-seed8)
# A run that diverges now stops at once (lengen.train.divergence) and its record says so: it frees its slot early. Measured (wave 1,
# 2026-12-01): the first step took 94 s (autotuning), the four runs ended 1080-1180 s after they started (about 18 steps/s
# each with the evaluations), the sweep 19.7 minutes into the wave and 21 minutes into the machine; five at once (~300 s
# more) would not end inside TIME_LIMIT. A position_85m run
# trained 800 steps at 0.28 s a step alone with a 4096-token vocabulary (results/gpu/train_loop_85m_alone_h200.json);
# with the corpus's 50,277 tokens its LM head adds ~30 TFLOP a step (6 x 38.6M weights x 131,072 tokens), so about
# 0.33-0.45 s a step, 5-6 minutes of training, plus the first step's compilation (~2 minutes, the first run of a
# machine only), loading and the evaluation to 65,536 positions (32 held-out documents): ~6-8 minutes a run. Its step
# already fills the GPU (the bare step is 0.14 s for 65,536 tokens), so runs side by side gain little and all end
# together: four at once would take ~20-25 minutes and lose all four at the time limit if the estimate is short. So a
# position wave runs one at a time with MIN_LEFT=auto: each run's JSON is packed as it ends, and the next starts only if
# the time left is at least what the last one took. Its loss goes through Liger's
# fused linear cross-entropy (the sweep sets kernels.liger=true; the wheel is in .gpu/wheels): the stock loss would
# hold an estimated 40-60 GB of logits and their gradient at the 50,277-token vocabulary. Every progress report prints
# the GPU's memory in use. Measured (position wave 1, 2026-12-01, after three `receive` calls; the sweep began 39 s after
# the machine's first call): 0.34 s a step (131,072 tokens), 20 GiB of GPU memory, 99-100 % utilization; the first run
# 427 s (its first step compiled and autotuned), the next three 312-328 s (~285 s of training, the evaluation to 65,536
# positions ~3 s); four runs in 23 minutes, then no fifth could fit. With .gpu_cache carried (the first run skips the
# ~95 s of autotuning) a wave still makes four: wave 2 is --seeds 1 with the same --only.
# The failure search (issue 41) after the same `receive` calls, one run at a time:
#   run(command="SWEEPS=failure_85m MAX_PARALLEL=1 MIN_LEFT=auto bash tools/run_full_sweep_gpu.sh start")
# then `wait` calls. Its settings run in order T256, T512, T2048 (1500, 1500 and 2400 steps of 131,072 tokens: about
# 8.5, 8.5 and 13.6 minutes of training at 0.34 s a step), and each run evaluates its ten checkpoints to 32T in its own
# process (eval_extra.checkpoints=true) before its record is written, so that time counts in the run's wall time and
# MIN_LEFT=auto sees it. Expected: T256 and T512 in one machine, T2048 alone in the next (SWEEP_ARGS='--only T2048';
# carry .gpu_cache). Not measured yet, estimated: a checkpoint's evaluation to 65,536 positions ~25 s (the loss pass
# ~5 s as position_85m measured it with 32 documents, now 77; the state norms ~24 forwards a document, 34 of which
# reach 65,536; the documents tokenized once a run), so T2048 is ~14 min of training + ~4 min of evaluations + ~2 of
# start-up (first step's autotuning without the cache, loading): ~21 of the ~23 minutes a machine gives the sweep
# after the `receive` calls. Its 2400 steps (315M tokens) were chosen so (2800 would not end); the first such run
# measures it: its record's wall_seconds against train_seconds.
# The failure search of issue 50 (results/failure_search/PROTOCOL.md, committed before its runs: configurations in
# order, two seeds each, until one fails by the window control), one configuration a machine after the `receive` calls:
#   run(command="SWEEPS=failure_search MAX_PARALLEL=1 MIN_LEFT=auto SWEEP_ARGS='--only S16_T256' bash tools/run_full_sweep_gpu.sh start")
# then `wait` calls; machine 2 SWEEP_ARGS='--only S16_T128'; machine 3 MAX_PARALLEL=2 SWEEP_ARGS='--only small_T256' (the
# 4-layer model's two seeds side by side under MPS). Estimated (not measured): an 85M run of 1000 steps 7.5-10 min with
# its eleven evaluations (state norms at the last checkpoint only, documents read 2048/T a forward), both seeds 15-20 min.
set -uo pipefail
MODE=${1:-wait}
OUT=${OUT:-$PWD/full_sweep_out}; mkdir -p "$OUT"
export W=${SWEEP_WORK:-/tmp/full_sweep}; mkdir -p "$W/results"   # outside the repository: each call re-syncs the tree
source tools/gpu_env.sh   # carried wheels and kernels (installed once a machine), offline environment
MPSFLAG=$([ "${MPS:-1}" = 1 ] && echo --mps)

running() { [ -f "$W/sweep.pid" ] && kill -0 "$(cat "$W/sweep.pid")" 2>/dev/null; }

progress() {   # one line per run from its progress file (lengen.train.progress), the GPU's memory, the sweep's last lines
  local began; began=$(cat "$W/started" 2>/dev/null || date +%s)
  echo "--- $(date +%H:%M:%S): $(awk -v s="$began" -v n="$(date +%s)" 'BEGIN { printf "%.1f", (n - s) / 60 }') min into the wave"
  python3 -m lengen.experiments.sweep --progress --work-root "$W/runs" --results-root "$W/results"
  nvidia-smi --query-gpu=memory.used,memory.total,utilization.gpu --format=csv,noheader 2>/dev/null | sed 's/^/GPU memory used, total; utilization: /'
  tail -n 4 "$W/sweep.log" 2>/dev/null
}

pack() {   # every results JSON (untar at the repository root), the logs, the progress
  (cd "$W" && tar czf "$OUT/full_sweep_results.tgz" results)
  (cd "$W" && tar czf "$OUT/full_sweep_logs.tgz" $(ls sweep.log runs/*/*/sweep.log runs/*/*/progress.json runs/*/*/train_summary.json 2>/dev/null))
  progress > "$OUT/progress.txt" 2>&1
  echo "packed $(find "$W/results" -name '*.json' | wc -l) results JSONs into $OUT/full_sweep_results.tgz"
}

wait_for() {   # SECONDS: until the sweep has ended or SECONDS have passed, progress every 2 minutes
  local until=$(( $(date +%s) + $1 )) next=0
  while running && [ "$(date +%s)" -lt "$until" ]; do
    [ "$(date +%s)" -ge "$next" ] && { progress; next=$(( $(date +%s) + 120 )); }
    sleep 10
  done
  running && echo "the sweep is still running: call 'wait' again" || echo "the sweep has ended"
}

case $MODE in
  start)
    if running; then echo "a sweep is running already (pid $(cat "$W/sweep.pid")): waiting on it"
    else
      python3 -m lengen.experiments.sweep ${SWEEPS:-copy_full_scale} ${SWEEP_ARGS:-} --check --results-root "$W/results" --work-root "$W/runs" \
        || { echo "the sweep's runs do not compose here (above): 'receive' the corpus's parts first, or fix SWEEP_ARGS"; exit 2; }
      for s in ${SWEEPS:-copy_full_scale}; do   # the committed results: the sweep skips those runs
        mkdir -p "$W/results/$s"; cp -n results/$s/*.json "$W/results/$s/" 2>/dev/null
      done
      python3 -c "import torch; from lengen.models.mamba2 import mamba2_kernel_path as k; print(torch.__version__, torch.cuda.get_device_name(), 'fused Mamba2 kernels:', k()['fused'])"
      date +%s > "$W/started"
      FIRST_CALL=$(stat -c %Y /tmp/site/.lengen_first_call)   # when this machine's first call began (tools/gpu_env.sh)
      LIMIT=${TIME_LIMIT:-$(( FIRST_CALL + ${MACHINE_SECONDS:-1500} - $(date +%s) ))}
      [ "$LIMIT" -ge 60 ] || { echo "TIME_LIMIT: $LIMIT s left of MACHINE_SECONDS on this machine, too few for a run"; exit 2; }
      echo "the sweep may run $LIMIT s (it began $(( $(date +%s) - FIRST_CALL )) s after this machine's first call)"
      setsid nohup python3 -m lengen.experiments.sweep ${SWEEPS:-copy_full_scale} $MPSFLAG --max-parallel "${MAX_PARALLEL:-4}" \
        --time-limit "$LIMIT" --min-left "${MIN_LEFT:-1200}" --results-root "$W/results" --work-root "$W/runs" \
        ${SWEEP_ARGS:-} > "$W/sweep.log" 2>&1 < /dev/null &
      echo $! > "$W/sweep.pid"; echo "started the sweep (pid $!): ${SWEEPS:-copy_full_scale}, ${MAX_PARALLEL:-4} at a time"
    fi
    wait_for "${WAIT:-480}"; pack ;;
  wait) wait_for "${WAIT:-540}"; pack
    if ! running && [ -d "$HOME/.triton/cache" ]; then   # the machine's compiled, autotuned kernels, for the next machine
      tar czf "$OUT/triton_cache.tgz" -C "$HOME/.triton" cache && du -h "$OUT/triton_cache.tgz"
    fi ;;
  collect) progress; pack ;;
  receive)   # corpus parts carried in this call wait in /tmp/parts; once every part the manifest lists is there, unpack
    mkdir -p /tmp/parts; [ -d data/debian_mix/parts ] && cp -r data/debian_mix/parts/. /tmp/parts/
    missing=$(python3 -c "import json, pathlib; m = json.load(open('/tmp/parts/manifest.json'))['parts']; print(' '.join(k for k in m if k.startswith(('rows', 'heldout')) and not pathlib.Path('/tmp/parts', k).is_file()))" 2>/dev/null || echo manifest.json)
    if [ -n "$missing" ]; then echo "waiting for: $missing"
    else python3 tools/build_text_corpus.py unpack --parts /tmp/parts --out data/debian_mix --rows-block 64 128 256 512 && ls data/debian_mix; fi ;;   # rows64/ ... rows512/: failure_85m, failure_search
  stop) running && kill -- "-$(cat "$W/sweep.pid")"; sleep 5; pack ;;   # the sweep's process group: its runs too
  throughput)
    timeout 570 python3 -m lengen.experiments.sweep --throughput "${THROUGHPUT_EXPERIMENT:-copy_jelassi_mamba2_45m_vpad}" \
      --runs "${THROUGHPUT_RUNS:-1,4,6}" $MPSFLAG --steps "${THROUGHPUT_STEPS:-500}" ${SWEEP_ARGS:-} \
      --out "$W/sweep_throughput_h200.json" > "$OUT/throughput.log" 2>&1
    echo "throughput rc=$?"; tail -n 5 "$OUT/throughput.log"
    cp "$W/sweep_throughput_h200.json" "$OUT/" 2>/dev/null ;;   # here: copy it to results/gpu/ and commit it
  *) echo "usage: bash tools/run_full_sweep_gpu.sh start|wait|collect|stop|receive|throughput"; exit 2 ;;
esac
