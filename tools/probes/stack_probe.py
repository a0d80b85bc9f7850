"""Probe (issue 48): per-member cost of K copy models (the 45M Mamba2 of copy_jelassi_mamba2_45m_*) trained as one
batched model, against the standalone block, on the GPU. Each of K members has its own weights and its own packed row of
64 examples (its own sequence boundaries); the projections run as batched GEMMs, the causal conv as masked shifts, and
mamba_ssm's chunked scan over all members at once with each head's A folded into dt and x (the kernel takes one A per
head for the whole batch: exp(dt*A) = exp(dt'*(-1)) with dt' = -A*dt, and dt*x = dt'*x' with x' = x/(-A)).
Times the 12 blocks' forward and backward replayed from one CUDA graph, and fused AdamW over the stacked weights.

    python tools/probes/stack_probe.py --out DIR [--ks 1,4,8,16]
"""
import argparse, json, time
import torch, torch.nn.functional as F

D, H, P, N, LAYERS, CHUNK, W = 768, 24, 64, 128, 12, 256, 4
INNER, CONV = H * P, H * P + 2 * N
PROJ = 2 * INNER + 2 * N + H


def packed_seq_idx(K, L, gen):
    "Per member, the sequence index of a packed row of 64 copy examples (2n+3 tokens, n ~ U(1, 50)), padded to L."
    rows = []
    for _ in range(K):
        while True:
            lens = 2 * torch.randint(1, 51, (64,), generator=gen) + 3
            if lens.sum() <= L: break
        s = torch.repeat_interleave(torch.arange(64), lens)
        rows.append(torch.cat([s, 64 + torch.arange(L - len(s)) // 105]))
    return torch.stack(rows).int()


def stacked_params(K, dev):
    g = lambda *s, std=0.02: (torch.randn(*s, device=dev) * std).requires_grad_()
    layers = []
    for _ in range(LAYERS):
        layers.append(dict(norm_w=torch.ones(K, D, device=dev, requires_grad=True), w_in=g(K, PROJ, D),
                           conv_w=g(K, CONV, W, std=0.3), conv_b=g(K, CONV), dt_bias=(torch.rand(K, H, device=dev) * -4 - 2).requires_grad_(),
                           a_log=torch.empty(K, H, device=dev).uniform_(1, 16).log().requires_grad_(),
                           d_skip=torch.ones(K, H, device=dev, requires_grad=True),
                           gnorm_w=torch.ones(K, INNER, device=dev, requires_grad=True), w_out=g(K, D, INNER)))
    return layers


def rms(x, w, eps=1e-5):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w[:, None]


def masked_conv(x, w, b, same):
    "Depthwise causal conv of width W per member, no contribution across a sequence boundary (same[s-1]: token t and t-s in one sequence)."
    y = x * w[:, None, :, W - 1] + b[:, None]
    for s in range(1, W):
        y = y + F.pad(x[:, :-s], (0, 0, s, 0)) * same[s - 1] * w[:, None, :, W - 1 - s]
    return y


def stacked_block(h, p, seq, same, scan):
    K, L, _ = h.shape
    zxbcdt = torch.bmm(rms(h, p["norm_w"]).bfloat16(), p["w_in"].bfloat16().transpose(1, 2))
    z, xbc, dt = zxbcdt.split([INNER, CONV, H], -1)
    xbc = F.silu(masked_conv(xbc, p["conv_w"], p["conv_b"], same)).bfloat16()
    x, B, C = xbc.split([INNER, N, N], -1)
    a = torch.exp(p["a_log"])[:, None]
    dt = F.softplus(dt.float() + p["dt_bias"][:, None])
    x = x.reshape(K, L, H, P)
    y = scan((x / a[..., None]).bfloat16(), dt * a, -torch.ones(H, device=h.device), B[:, :, None], C[:, :, None], CHUNK, seq_idx=seq)
    y = y + x * p["d_skip"][:, None, :, None]
    y = rms(y.reshape(K, L, INNER) * F.silu(z.float()), p["gnorm_w"])
    return h + torch.bmm(y.bfloat16(), p["w_out"].bfloat16().transpose(1, 2)).float()


def stock_params(dev):
    g = lambda *s, std=0.02: (torch.randn(*s, device=dev) * std).requires_grad_()
    return [dict(norm_w=torch.ones(D, device=dev, requires_grad=True), w_in=g(PROJ, D), conv_w=g(CONV, W, std=0.3), conv_b=g(CONV),
                 dt_bias=(torch.rand(H, device=dev) * -4 - 2).requires_grad_(), a_log=torch.empty(H, device=dev).uniform_(1, 16).log().requires_grad_(),
                 d_skip=torch.ones(H, device=dev, requires_grad=True), gnorm_w=torch.ones(INNER, device=dev, requires_grad=True),
                 w_out=g(D, INNER)) for _ in range(LAYERS)]


def stock_block(h, p, seq, split_op):
    "The standalone block as lengen trains it: RMSNorm, in_proj, then mamba_ssm's fused conv + scan + gated norm + out_proj."
    hn = rms(h, p["norm_w"][None])
    zxbcdt = F.linear(hn.bfloat16(), p["w_in"].bfloat16())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = split_op(zxbcdt, p["conv_w"], p["conv_b"], p["dt_bias"], -torch.exp(p["a_log"].float()), D=p["d_skip"], chunk_size=CHUNK,
                       seq_idx=seq, activation="silu", rmsnorm_weight=p["gnorm_w"], rmsnorm_eps=1e-5, outproj_weight=p["w_out"],
                       outproj_bias=None, headdim=P, ngroups=1, norm_before_gate=False)
    return h + out.float()


def graphed_ms(step, params, reps=20):
    "Milliseconds per replay of `step()` (forward and backward) captured in one CUDA graph."
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g): step()
    for _ in range(3): g.replay()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(reps): g.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps * 1e3


def adamw_ms(params, reps=20):
    for p in params: p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
    for _ in range(3): opt.step()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(reps): opt.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps * 1e3


def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--out", default="."); ap.add_argument("--ks", default="1,4,8,16")
    ap.add_argument("--length", type=int, default=3584); ap.add_argument("--model", action="store_true", help="only the real stacked model")
    a = ap.parse_args()
    if a.model: return model_probe(a.out, tuple(map(int, a.ks.split(","))), a.length)
    from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined, mamba_split_conv1d_scan_combined
    dev, L, gen = torch.device("cuda"), a.length, torch.Generator().manual_seed(0)
    rep = {"what": __doc__.splitlines()[0], "device": torch.cuda.get_device_name(), "torch": torch.__version__, "tokens_per_member": L,
           "layers": LAYERS, "stacked": {}}
    torch.manual_seed(0)
    # the standalone block, one row
    seq1 = packed_seq_idx(1, L, gen).to(dev)
    ps = stock_params(dev); h0 = torch.randn(1, L, D, device=dev, requires_grad=True)
    def stock_step():
        h = h0
        for p in ps: h = stock_block(h, p, seq1, mamba_split_conv1d_scan_combined)
        h.float().square().mean().backward()
    torch.cuda.reset_peak_memory_stats()
    rep["stock_blocks_ms"] = graphed_ms(stock_step, ps)
    rep["stock_adamw_ms"] = adamw_ms([t for p in ps for t in p.values()])
    print("stock", rep["stock_blocks_ms"], rep["stock_adamw_ms"], flush=True)
    del ps
    for K in map(int, a.ks.split(",")):
        torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
        seq = packed_seq_idx(K, L, gen).to(dev)
        same = [F.pad(seq[:, s:] == seq[:, :-s], (s, 0))[..., None] for s in range(1, W)]
        params = stacked_params(K, dev); hk = torch.randn(K, L, D, device=dev, requires_grad=True)
        def step():
            h = hk
            for p in params: h = stacked_block(h, p, seq, same, mamba_chunk_scan_combined)
            h.square().mean().backward()
        ms = graphed_ms(step, params)
        opt = adamw_ms([t for p in params for t in p.values()])
        rep["stacked"][K] = {"blocks_ms": ms, "blocks_ms_per_member": ms / K, "adamw_ms_per_member": opt / K,
                             "peak_gib": torch.cuda.max_memory_allocated() / 2**30}
        print(K, rep["stacked"][K], flush=True)
        del params, hk
    # eager (uncaptured) breakdown of one stacked step at the largest K, by kernel
    json.dump(rep, open(f"{a.out}/stack_probe.json", "w"), indent=1)
    print(json.dumps(rep, indent=1))




def model_probe(out, ks=(1, 4, 8, 16), L=3584):
    "The stacked model (lengen.models.stacked) at the 45M copy shape: a whole training step (VPAD at the block norms, forward and backward under bf16 autocast, per-member clipping, fused AdamW) replayed from one CUDA graph, per member; and its fused scan against its reference on the GPU."
    from lengen.models.stacked import StackedMamba2
    from transformers import Mamba2Config, Mamba2ForCausalLM
    from lengen.models.mamba2.model import mamba2_reference_init
    from lengen.regularizers.dropout import vpad_dropout
    from lengen.data import pack_examples, CopyTaskDataset, char_tokenizer
    dev = torch.device("cuda")
    c = Mamba2Config(vocab_size=32, hidden_size=768, num_heads=24, head_dim=64, state_size=128, num_hidden_layers=12, chunk_size=256,
                     expand=2, n_groups=1, tie_word_embeddings=True, pad_token_id=0)
    torch.manual_seed(0)
    base = mamba2_reference_init(Mamba2ForCausalLM(c))
    ds = CopyTaskDataset(char_tokenizer(26), 100_000, 1, 50, 26, seed=0)
    def rows(K, start):
        bs = [pack_examples([ds[start + 64 * k + j] for j in range(64)], 0, 512) for k in range(K)]
        n = max(b["input_ids"].shape[1] for b in bs)
        pad = lambda t, v: F.pad(t, (0, n - t.shape[1]), value=v)
        return (torch.cat([pad(b["input_ids"], 0) for b in bs]).to(dev), torch.cat([pad(b["seq_idx"], 10_000) for b in bs]).to(dev),
                torch.cat([pad(b["labels"], -100) for b in bs]).to(dev))
    import lengen.models.stacked as sm
    res = {"variants": {}}
    def variant(K, compiled, chunk, profile=False):
        sm.COMPILE = compiled
        torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
        stack = StackedMamba2.from_models([base] * K).to(dev).train()
        for layer in stack.layers: layer.chunk_size = chunk
        params = list(stack.parameters())
        opt = torch.optim.AdamW(params, lr=torch.tensor(1e-4, device=dev), betas=(0.9, 0.95), fused=True, capturable=True)
        ids, seq, lab = rows(K, 0)
        ids, seq, lab = ids[:, :L], seq[:, :L], lab[:, :L]
        if ids.shape[1] < L: ids, seq, lab = F.pad(ids, (0, L - ids.shape[1])), F.pad(seq, (0, L - seq.shape[1]), value=10_000), F.pad(lab, (0, L - lab.shape[1]), value=-100)
        perturb = {("norm", i): (lambda x: vpad_dropout(x, 0.2, out_dtype="autocast")) for i in range(12)}
        losses = torch.zeros(K, device=dev)
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = stack(ids, seq, lab, perturb=perturb)
            out.losses.sum().backward()
            sq = sum(p.grad.float().pow(2).flatten(1).sum(1) for p in params)
            coef = (1.0 / (sq.sqrt() + 1e-6)).clamp(max=1.0)
            for p in params: p.grad.mul_(coef.view(-1, *[1] * (p.dim() - 1)))
            opt.step(); opt.zero_grad(set_to_none=False)
            losses.copy_(out.losses.detach())
        t0 = time.perf_counter()
        ms = graphed_ms(step, params)
        r = {"K": K, "compiled": compiled, "chunk_size": chunk, "step_ms": ms, "step_ms_per_member": ms / K,
             "members_steps_per_s": 1e3 * K / ms, "tokens_per_member": L, "setup_s": time.perf_counter() - t0,
             "peak_gib": torch.cuda.max_memory_allocated() / 2**30, "losses": [round(v, 4) for v in losses.tolist()]}
        if profile:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(3): step()
                torch.cuda.synchronize()
            ka = sorted(prof.key_averages(), key=lambda e: -e.self_device_time_total)
            r["kernels_ms_per_step"] = {e.key[:80]: round(e.self_device_time_total / 3e3, 3) for e in ka[:30]}
            r["eager_kernel_ms_per_step"] = round(sum(e.self_device_time_total for e in ka) / 3e3, 2)
        print(r, flush=True)
        return r
    # greedy decoding of 100 strings of 50 letters for each of 16 members at once, replayed from a CUDA graph
    from lengen.ops.decode import GreedyDecoder
    try:
        stack = StackedMamba2.from_models([base] * 16).to(dev).eval()
        prompts = torch.randint(4, 30, (100, 52), device=dev)
        with torch.no_grad():
            dec = GreedyDecoder(None, prompts.repeat(16, 1), 51, 3, 0, stepper=sm.StackedStepper(stack, 100), cuda_graph=True, ended=lambda seq, done: False)
            dec.run(); torch.cuda.synchronize(); t0 = time.perf_counter(); dec.restart(prompts.repeat(16, 1)); dec.stepper.reset(); dec.run(); torch.cuda.synchronize()
        res["decode_16x100"] = {"steps": dec.steps, "ms_per_step": (time.perf_counter() - t0) / dec.steps * 1e3}
        print(res["decode_16x100"], flush=True)
        del stack, dec
    except Exception as e: res["decode_16x100"] = {"failed": f"{type(e).__name__}: {e}"[:500]}; print(e, flush=True)
    for K, compiled, chunk, prof in [(16, True, 256, True), (16, True, 128, False), (24, True, 128, False), (8, True, 128, False)]:
        try: res["variants"][f"K{K}_{'compiled' if compiled else 'eager'}_chunk{chunk}"] = variant(K, compiled, chunk, prof)
        except Exception as e: res["variants"][f"K{K}_{compiled}_{chunk}"] = {"failed": f"{type(e).__name__}: {e}"[:500]}; print(e, flush=True)
        json.dump(res, open(f"{out}/stacked_model_probe.json", "w"), indent=1)
    json.dump(res, open(f"{out}/stacked_model_probe.json", "w"), indent=1)


if __name__ == "__main__": main()
