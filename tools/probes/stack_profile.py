"""Where does the stacked engine's step go (issue 48)? K members of a copy experiment as `lengen.train.stacked` trains
them (its StackStep, data and optimizer): a few warm-up steps, the step timed eagerly and replayed from its CUDA graph,
then `torch.profiler` over eager steps, its kernels grouped by what they do (GEMM, scan, conv, optimizer, compiled
elementwise, reductions, other).

    python tools/probes/stack_profile.py OUT_DIR [--k 16] [--experiment copy_jelassi_mamba2_45m_vpad] [--steps 10]
"""
import argparse, json, re, tempfile, time
from pathlib import Path

import torch

from lengen.compose import compose_config
from lengen.models.build import build_model
from lengen.models.stacked import StackedMamba2
from lengen.train.stacked import StackStep, check_members, lr_multipliers, stack_loader, stack_optimizer, stack_perturbations

GROUPS = [("gemm", r"gemm|cutlass|sm90|nvjet|cublas|ampere_|bmm"), ("scan", r"chunk|ssd|state_passing|bmm_chunk"),
          ("conv", r"conv"), ("optimizer", r"adam|multi_tensor|foreach"), ("compiled", r"^triton_"),
          ("norm", r"norm"), ("reduce", r"reduce"), ("copy", r"copy|memcpy|memset|fill|cat")]


def group_of(name:str) -> str:
    return next((g for g, pat in GROUPS if re.search(pat, name, re.I)), "other")


def timed(step, batches, lrs, n:int) -> float:
    "Seconds a step, over `n` steps."
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    sync(); t0 = time.perf_counter()
    for i in range(n): step(next(batches), lrs[i])
    sync(); return (time.perf_counter() - t0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out"); ap.add_argument("--k", type=int, default=16); ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--experiment", default="copy_jelassi_mamba2_45m_vpad"); ap.add_argument("--set", action="append", default=[])
    a = ap.parse_args(); out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    cfg = compose_config(a.experiment, ["wandb.enabled=false", "max_steps=1000", f"stack.seeds=[{','.join(map(str, range(a.k)))}]",
                                        f"output_dir={tempfile.mkdtemp()}/stack", *a.set])
    members, tok = check_members(cfg)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    models = [build_model(m, tok) for m in members]
    stack = StackedMamba2.from_models(models).to(dev).train()
    opt = stack_optimizer(stack, models[0], cfg)
    lrs = [cfg.optim.lr * m for m in lr_multipliers(cfg)]
    batches = iter(stack_loader(cfg, tok, members, 0, dev.type == "cuda"))
    perturb = stack_perturbations(models[0], cfg)
    eager = StackStep(stack, opt, perturb, cfg.optim.max_grad_norm, cfg.bf16, graphs=False)
    t0 = time.perf_counter(); eager(next(batches), lrs[0]); first = time.perf_counter() - t0
    timed(eager, batches, lrs, 3)
    eager_s = timed(eager, batches, lrs, a.steps)
    graph_s = None
    if dev.type == "cuda":   # rows of one shape replay one graph: pad every batch to the longest the loader has given so far
        graphed = StackStep(stack, opt, perturb, cfg.optim.max_grad_norm, cfg.bf16, graphs=True)
        fixed = next(batches)
        graphed(fixed, lrs[0])
        graph_s = timed(graphed, iter(lambda: fixed, None), lrs, a.steps)
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with torch.profiler.profile(activities=acts) as prof:
        timed(eager, batches, lrs, a.steps)
    ka = prof.key_averages()
    by = "self_device_time_total" if dev.type == "cuda" else "self_cpu_time_total"
    (out/"stack_kernels.txt").write_text(ka.table(sort_by=by, row_limit=60))
    kernels = {e.key: getattr(e, by) / 1e3 / a.steps for e in ka if getattr(e, by) > 0 and (dev.type == "cpu" or e.device_type.name == "CUDA")}
    groups = {}
    for name, ms in kernels.items(): groups[group_of(name)] = groups.get(group_of(name), 0.0) + ms
    busy = sum(kernels.values())
    rec = {"experiment": a.experiment, "members": a.k, "device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu",
           "torch": torch.__version__, "overrides": a.set, "first_step_s": round(first, 2),
           "eager_ms_per_stack_step": round(eager_s * 1e3, 2), "graph_ms_per_stack_step": graph_s and round(graph_s * 1e3, 2),
           "graph_ms_per_member_step": graph_s and round(graph_s * 1e3 / a.k, 3),
           "kernel_ms_per_stack_step": round(busy, 2), "kernel_ms_by_group": {g: round(v, 2) for g, v in sorted(groups.items(), key=lambda x: -x[1])},
           "top_kernels_ms": {n: round(v, 3) for n, v in sorted(kernels.items(), key=lambda x: -x[1])[:25]},
           "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if dev.type == "cuda" else None}
    (out/f"stack_profile_k{a.k}.json").write_text(json.dumps(rec, indent=1))
    print(json.dumps({k: v for k, v in rec.items() if k != "top_kernels_ms"}, indent=1))


if __name__ == "__main__": main()
