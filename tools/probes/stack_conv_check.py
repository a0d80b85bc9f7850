"""The stacked convolution two ways on the GPU (issue 48): `stacked_conv_kernel` (causal_conv1d's kernels, a member at a
time) against `silu(stacked_conv(...))` (masked shifts; eagerly and compiled), at the shipped copy model's shape (K
members, rows of ~3.5K tokens of packed examples, 1792 channels, width 4): the largest differences of the output and
the gradients, and the milliseconds of a forward and backward.

    python tools/probes/stack_conv_check.py OUT.json [--k 16]
"""
import argparse, json, time

import torch, torch.nn.functional as F

from lengen.models.stacked import same_sequence, stacked_conv, stacked_conv_kernel


def packed_seq_idx(K:int, L:int, gen) -> torch.Tensor:
    "Each member's sequence index for a row of 64 copy examples (2n+3 tokens, n ~ U(1, 50)), padded to L by sequences of its own."
    rows = []
    for _ in range(K):
        lens = 2 * torch.randint(1, 51, (64,), generator=gen) + 3
        while lens.sum() > L: lens = 2 * torch.randint(1, 51, (64,), generator=gen) + 3
        s = torch.repeat_interleave(torch.arange(64), lens)
        rows.append(torch.cat([s, 64 + torch.arange(L - len(s)) // 105]))
    return torch.stack(rows)


def ms_per_call(fn, args, n:int=20) -> float:
    "Milliseconds of a forward and backward of `fn(*args)`."
    for _ in range(3): fn(*args).float().square().sum().backward()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n): fn(*args).float().square().sum().backward()
    torch.cuda.synchronize(); return (time.perf_counter() - t0) * 1e3 / n


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("out"); ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--length", type=int, default=3456); ap.add_argument("--channels", type=int, default=1792)
    a = ap.parse_args(); K, L, C, W = a.k, a.length, a.channels, 4
    gen = torch.Generator().manual_seed(0)
    seq = packed_seq_idx(K, L, gen).cuda()
    x = torch.randn(K, L, C, generator=gen).bfloat16().cuda().requires_grad_()
    w = (torch.randn(K, C, W, generator=gen) * 0.3).cuda().requires_grad_()
    b = (torch.randn(K, C, generator=gen) * 0.1).cuda().requires_grad_()
    same = same_sequence(seq, W)
    reference = lambda x, w, b: F.silu(stacked_conv(x, w, b, same))
    compiled = torch.compile(reference, fullgraph=True, dynamic=False)
    kernel = lambda x, w, b: stacked_conv_kernel(x, w, b, seq)
    exact = F.silu(stacked_conv(x.float(), w, b, same))   # float32 throughout: what both approximate
    def grads(y): return torch.autograd.grad(y.float().square().sum(), (x, w, b))
    g_exact = grads(exact)
    diffs = {}
    for name, fn in (("reference_bf16", reference), ("kernel", kernel)):
        y = fn(x, w, b); gs = grads(y)
        diffs[name] = {"out_max_abs": (y.float() - exact).abs().max().item(),
                       **{f"grad_{n}_max_rel": ((g.float() - e).abs().max() / e.abs().max()).item() for n, g, e in zip("xwb", gs, g_exact)}}
    times = {name: ms_per_call(fn, (x, w, b)) for name, fn in (("reference_eager", reference), ("reference_compiled", compiled), ("kernel", kernel))}
    rec = {"members": K, "length": L, "channels": C, "width": W, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "differences_from_float32": diffs, "ms_forward_backward": {k: round(v, 3) for k, v in times.items()}}
    json.dump(rec, open(a.out, "w"), indent=1); print(json.dumps(rec, indent=1))


if __name__ == "__main__": main()
