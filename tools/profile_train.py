"""Where does a `lengen_train` step go? Runs an experiment through `lengen.train.trainer.run_training` and profiles a window of
steps twice: `torch.profiler` (CPU and CUDA time per op, so CUDA busy time can be set against wall time) and cProfile
(Python time per function, to find the Trainer's and the model's overhead). Used to find the copy task's overhead.

    python tools/profile_train.py copy_jelassi_mamba2_45m_vpad --set max_steps=300 --at 150 --steps 20 --out prof/
"""
import argparse, cProfile, io, json, pstats, sys, tempfile, time
from pathlib import Path

import torch
from transformers import TrainerCallback


class ProfileWindow(TrainerCallback):
    "torch.profiler over steps [at, at+n), then cProfile over [at+n, at+2n); wall time of every step."
    def __init__(self, at:int, n:int, out:Path): self.at, self.n, self.out, self.ends, self.prof, self.cp = at, n, out, [], None, None
    def on_step_begin(self, args, state, control, **kw):
        s = state.global_step
        if s == self.at:
            acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
            self.prof = torch.profiler.profile(activities=acts, record_shapes=False); self.prof.__enter__()
        if s == self.at + self.n: self.cp = cProfile.Profile(); self.cp.enable()
    def on_step_end(self, args, state, control, **kw):
        if torch.cuda.is_available(): torch.cuda.synchronize()
        self.ends.append(time.perf_counter())
        s = state.global_step
        if s == self.at + self.n and self.prof is not None:
            self.prof.__exit__(None, None, None)
            ka = self.prof.key_averages()
            (self.out/"torch_cpu.txt").write_text(ka.table(sort_by="self_cpu_time_total", row_limit=45))
            if torch.cuda.is_available():
                (self.out/"torch_cuda.txt").write_text(ka.table(sort_by="self_device_time_total", row_limit=45))
                dev = sum(e.self_device_time_total for e in ka) / 1e6 / self.n
                self.summary = {"cuda_busy_s_per_step": dev}
        if s == self.at + 2 * self.n and self.cp is not None:
            self.cp.disable(); buf = io.StringIO()
            pstats.Stats(self.cp, stream=buf).sort_stats("cumulative").print_stats(60)
            buf.write("\n\n==== by own time ====\n"); pstats.Stats(self.cp, stream=buf).sort_stats("tottime").print_stats(40)
            (self.out/"cprofile.txt").write_text(buf.getvalue())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("experiment"); p.add_argument("--set", action="append", default=[])
    p.add_argument("--at", type=int, default=100); p.add_argument("--steps", type=int, default=20)
    p.add_argument("--out", default="prof")
    a = p.parse_args(argv)
    from lengen.compose import compose_config
    from lengen.train.trainer import run_training
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    cfg = compose_config(a.experiment, [*a.set, f"output_dir={tempfile.mkdtemp(prefix='lengen_prof_')}", "wandb.enabled=false"])
    win = ProfileWindow(a.at, a.steps, out)
    t0 = time.perf_counter()
    metrics = run_training(cfg, callbacks=[win])
    gaps = [b - a_ for a_, b in zip([t0] + win.ends, win.ends)]
    clean = sorted(gaps[10:a.at - 1] + gaps[a.at + 2 * a.steps + 1:]) or sorted(gaps)
    rep = {"experiment": a.experiment, "overrides": a.set, "first_step_s": gaps[0], "median_step_s": clean[len(clean) // 2],
           "steps_per_s": 1 / clean[len(clean) // 2], "train_seconds": metrics["train_seconds"], **getattr(win, "summary", {})}
    (out/"summary.json").write_text(json.dumps(rep, indent=1)); print(json.dumps(rep, indent=1))


if __name__ == "__main__": sys.exit(main())
