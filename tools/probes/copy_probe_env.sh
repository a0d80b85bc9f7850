# Sourced by the copy-divergence probes (tools/probes/divergence_*_gpu.sh) after tools/gpu_env.sh: the overrides their
# copy runs share (no wandb, no in-training evaluation and a one-length final one, a loss logged every 50 steps, the
# non-finite tracer on) and CUDA MPS under a work folder.
COPY_PROBE_ARGS="wandb.enabled=false eval_steps=null logging_steps=50 trace_nonfinite=true"
COPY_PROBE_ARGS="$COPY_PROBE_ARGS data.copy_task.eval_lengths=[10] data.copy_task.end_only_lengths=[] data.copy_task.eval_samples=10"
start_mps() {   # WORK: an MPS daemon whose pipe is WORK/mps_pipe (its clients set CUDA_MPS_PIPE_DIRECTORY=$PIPE)
  PIPE=$1/mps_pipe; mkdir -p "$PIPE" "$1/mps_log"
  CUDA_MPS_PIPE_DIRECTORY=$PIPE CUDA_MPS_LOG_DIRECTORY=$1/mps_log nvidia-cuda-mps-control -d
}
stop_mps() { echo quit | CUDA_MPS_PIPE_DIRECTORY=$PIPE nvidia-cuda-mps-control; }
