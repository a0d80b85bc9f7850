"""The stacked engine end to end on the GPU (issue 48): K members of copy_jelassi_mamba2_45m_<setting>, a short run with in-training and final evaluations.

    python tools/probes/stack_run.py K STEPS SETTING OUT.json
"""
import sys, time, json, torch

from lengen.compose import compose_config
from lengen.train.stacked import train_stack
K, steps, setting = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
t0 = time.time(); marks = []
def log(msg):
    marks.append((round(time.time() - t0, 2), msg.splitlines()[0][:200])); print(f"[{time.time() - t0:7.1f}s] {msg}", flush=True)
cfg = compose_config(f"copy_jelassi_mamba2_45m_{setting}", ["wandb.enabled=false", f"max_steps={steps}", f"eval_steps={steps // 2}",
      f"save_steps={steps // 2}", "logging_steps=50", "data.copy_task.eval_lengths=[10,50,100,200]", "data.copy_task.end_only_lengths=[200]",
      f"stack.seeds=[{','.join(map(str, range(K)))}]", f"output_dir=/tmp/stk{K}"])
train_stack(cfg, log=log)
json.dump({"K": K, "steps": steps, "setting": setting, "marks": marks, "wall_s": time.time() - t0,
           "peak_gib": torch.cuda.max_memory_allocated() / 2**30}, open(sys.argv[4], "w"), indent=1)
