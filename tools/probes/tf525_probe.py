"""What lengen's Mamba2 paths compute under one transformers version, dumped so that two versions can be compared
(issue 42: transformers 5.25 against the GPU image's 5.17). Run by tools/probes/tf525_gpu.sh, once a version, in separate
processes; `--device cpu` runs the same checks here (no fused kernels, no Liger) to test the probe itself.

    python tools/probes/tf525_probe.py dump OUT.pt --ckpt DIR [--device cuda]   # DIR: written by the first dump, read by the next
    python tools/probes/tf525_probe.py compare A.pt B.pt                        # exit status 1 if a check fails

A dump holds, for a random 4-layer Mamba2 of width 512 with the GPT-NeoX vocabulary's 50,288 rows:
  * the versions, and which kernels transformers' Mamba2 ops run (`mamba2_kernel_path`);
  * fused vs reference: float32 logits, loss and gradients of the model on `--device` (mamba_ssm's fused kernels on a GPU)
    against the same weights on the CPU (transformers' torch reference);
  * evaluation logits (float32 and bf16) of the checkpoint DIR through `lengen.models.build.load_model`, and through
    plain `from_pretrained` (with lengen's LOAD_KWARGS): the same across versions means stock-identical evaluation;
  * the layout of a checkpoint this version saves (config keys, tensor names, dtypes);
  * one bf16-autocast training step as `lengen_train` takes it (`prepare_model`) for each variant: stock, Liger's kernels
    (GPU only), VPAD with the mixer norms (the fused op routed around), initial states from noise, CUDA graphs (GPU only):
    loss, gradient norm, a fixed sample of gradient entries, and what the path did (norm calls, graphs captured, batches).
"""
import argparse, json, sys, tempfile
from pathlib import Path

import torch
import transformers
from safetensors import safe_open

from lengen.compose import compose_config
from lengen.models.build import load_model
from lengen.models.compat import LOAD_KWARGS
from lengen.models.fixtures import tiny_mamba2
from lengen.models.mamba2.model import mamba2_kernel_path
from lengen.train.trainer import prepare_model

VOCAB = 50288
VARIANTS = {"stock": [], "liger": ["kernels.liger=true"],
            "vpad_mixer_norms": ["dropout.rate=0.3", "dropout.mode=vpad", "dropout.include_mixer_norms=true"],
            "initial_state_noise": ["initial_state.mode=noise"], "cuda_graphs": ["compile.cuda_graphs=true"]}
GPU_ONLY = {"liger", "cuda_graphs"}
SAMPLE = 20000   # gradient entries kept a variant (a fixed random subset)


def mid_mamba2(device="cpu", seed=0):
    "The probe's Mamba2 (as `mid_mamba2` in nbs/ops/04_kernels.ipynb)."
    return tiny_mamba2(seed, layers=4, vocab_size=VOCAB, hidden_size=512, expand=2, num_heads=16, head_dim=64, state_size=64,
                       chunk_size=64, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0, device=device)

def batch(device, rows=2, length=512, seed=1):
    return torch.randint(3, VOCAB - 8, (rows, length), generator=torch.Generator().manual_seed(seed)).to(device)

def grads(model) -> torch.Tensor:
    return torch.cat([p.grad.flatten().float().cpu() for p in model.parameters() if p.grad is not None])

def fused_vs_reference(device) -> dict:
    "Float32 logits, loss and gradients on `device` against the CPU's torch reference, same weights."
    out = {}
    for dev in (device, "cpu"):
        m = mid_mamba2(dev); m.config.use_cache = False
        x = batch(dev)
        loss = m(input_ids=x, labels=x).loss; loss.backward()
        m.eval()
        with torch.no_grad(): logits = m(x).logits.float().cpu()
        out[dev] = (logits, loss.item(), grads(m))
    (l1, s1, g1), (l0, s0, g0) = out[device], out["cpu"]
    return {"logits_max_abs": (l1 - l0).abs().max().item(), "loss": (s1, s0),
            "grad_rel_err": ((g1 - g0).norm() / g0.norm()).item()}

def eval_logits(ckpt:Path, device) -> dict:
    "Logits of the shared checkpoint: lengen's loader in float32 and bf16, and plain from_pretrained in float32."
    x, out = batch(device, seed=2), {}
    for name, load in {"load_model_fp32": lambda: load_model(str(ckpt), dtype=torch.float32),
                       "load_model_bf16": lambda: load_model(str(ckpt), dtype=torch.bfloat16),
                       "from_pretrained_fp32": lambda: transformers.AutoModelForCausalLM.from_pretrained(str(ckpt), dtype=torch.float32, **LOAD_KWARGS)}.items():
        m = load().to(device).eval()
        with torch.no_grad(): out[name] = m(x).logits.float().cpu()
    return out

def layout(folder:Path) -> dict:
    "What a saved checkpoint looks like: config keys (version stamp left out), tensor names and dtypes."
    cfg = json.loads((folder/"config.json").read_text())
    with safe_open(str(folder/"model.safetensors"), framework="pt") as st:
        tensors = {k: str(st.get_slice(k).get_dtype()) for k in st.keys()}
    return {"config_keys": sorted(set(cfg) - {"transformers_version"}), "config": {k: v for k, v in cfg.items() if k != "transformers_version"},
            "tensors": tensors}

def train_step(name:str, device) -> dict:
    "One bf16-autocast step of a fresh model prepared as lengen_train prepares it, seeded."
    m = mid_mamba2(device)
    prepare_model(m, compose_config(None, ["data.synthetic=copy", *VARIANTS[name]]))
    calls = {"mixer_norm": 0}
    for b in m.backbone.layers: b.mixer.norm.register_forward_hook(lambda *_: calls.__setitem__("mixer_norm", calls["mixer_norm"] + 1))
    x = batch(device)
    for step in range(2 if name == "cuda_graphs" else 1):   # graphs: the second step replays the captured one
        m.zero_grad(set_to_none=True); torch.manual_seed(0); calls["mixer_norm"] = 0
        with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
            loss = m(input_ids=x, labels=x, num_items_in_batch=torch.tensor(x.numel() - x.shape[0], device=device)).loss
        loss.backward()
    g = grads(m)
    idx = torch.randperm(g.numel(), generator=torch.Generator().manual_seed(0))[:SAMPLE]
    fwd = m.backbone.layers[0].forward
    return {"loss": loss.item(), "grad_norm": g.norm().item(), "grad_sample": g[idx], **calls,
            "graphs": len(getattr(fwd, "graphs", {})), "initial_state_batches": getattr(m.backbone.layers[0].mixer, "initial_states", None) and m.backbone.layers[0].mixer.initial_states.batches}

def dump(out:str, ckpt:str, device:str):
    ckpt = Path(ckpt)
    if not (ckpt/"config.json").exists(): mid_mamba2().save_pretrained(ckpt)   # the first version's save, read by both
    own = Path(tempfile.mkdtemp()); mid_mamba2().save_pretrained(own)
    res = {"transformers": transformers.__version__, "torch": torch.__version__, "device": device,
           "gpu": torch.cuda.get_device_name() if device == "cuda" else None, "kernel_path": mamba2_kernel_path(),
           "fused_vs_reference": fused_vs_reference(device), "eval": eval_logits(ckpt, device), "layout": layout(own),
           "train": {n: train_step(n, device) for n in VARIANTS if device == "cuda" or n not in GPU_ONLY}}
    torch.save(res, out)
    f = res["fused_vs_reference"]
    print(f"{res['transformers']} on {device}: kernels {res['kernel_path']}; fused vs reference: logits max |diff| "
          f"{f['logits_max_abs']:.2e}, loss {f['loss'][0]:.5f} vs {f['loss'][1]:.5f}, gradient rel. error {f['grad_rel_err']:.2e}")
    for n, t in res["train"].items(): print(f"  {n}: loss {t['loss']:.5f}, grad norm {t['grad_norm']:.4f}, mixer-norm calls "
                                            f"{t['mixer_norm']}, graphs {t['graphs']}, initial-state batches {t['initial_state_batches']}")

def compare(a:str, b:str) -> int:
    "Print how two dumps differ; 1 if a check fails."
    A, B = torch.load(a, weights_only=False), torch.load(b, weights_only=False)
    bad = []
    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok: bad.append(what)
    print(f"A: transformers {A['transformers']}, B: transformers {B['transformers']} ({A['device']}, {A['gpu']})")
    for D in (A, B):
        f = D["fused_vs_reference"]
        check(f["logits_max_abs"] < 1e-2 and f["grad_rel_err"] < 5e-2 and abs(f["loss"][0] - f["loss"][1]) < 1e-3,
              f"{D['transformers']}: fused vs reference: logits {f['logits_max_abs']:.2e}, loss {f['loss'][0]:.5f}/{f['loss'][1]:.5f}, "
              f"grad rel. error {f['grad_rel_err']:.2e}")
        if D["device"] == "cuda": check(D["kernel_path"]["fused"], f"{D['transformers']}: every Mamba2 op on a compiled kernel {D['kernel_path']['ops']}")
    for k in A["eval"]:   # on a GPU both versions run the same kernels; on the CPU their reference scans differ (einsum from 5.24)
        a, b = A["eval"][k], B["eval"][k]
        rel = ((a - b).norm() / b.norm()).item()
        check(rel <= (1e-2 if "bf16" in k else 1e-5), f"eval logits {k}: rel. diff {rel:.2e}, max |A - B| {(a - b).abs().max().item():.2e}, "
              f"same argmax {(a.argmax(-1) == b.argmax(-1)).float().mean().item():.4f} (bit-identical: {torch.equal(a, b)})")
    for D in (A, B): check(torch.equal(D["eval"]["load_model_fp32"], D["eval"]["from_pretrained_fp32"]),
                           f"{D['transformers']}: load_model = plain from_pretrained (float32 logits)")
    check(A["layout"]["tensors"] == B["layout"]["tensors"], "saved tensors: same names and dtypes")
    check(A["layout"]["config_keys"] == B["layout"]["config_keys"],
          f"config.json keys: same (only in A: {sorted(set(A['layout']['config_keys']) - set(B['layout']['config_keys']))}, "
          f"only in B: {sorted(set(B['layout']['config_keys']) - set(A['layout']['config_keys']))})")
    for n in A["train"]:
        if n not in B["train"]: continue
        ta, tb = A["train"][n], B["train"][n]
        rel = ((ta["grad_sample"] - tb["grad_sample"]).norm() / tb["grad_sample"].norm()).item()
        check(abs(ta["loss"] - tb["loss"]) < 2e-3 * abs(tb["loss"]) and rel < 2e-2,
              f"train {n}: loss {ta['loss']:.5f} / {tb['loss']:.5f}, grad sample rel. diff {rel:.2e}")
        check((ta["mixer_norm"], ta["graphs"], ta["initial_state_batches"]) == (tb["mixer_norm"], tb["graphs"], tb["initial_state_batches"]),
              f"train {n}: mixer-norm calls {ta['mixer_norm']}/{tb['mixer_norm']}, graphs {ta['graphs']}/{tb['graphs']}, "
              f"initial-state batches {ta['initial_state_batches']}/{tb['initial_state_batches']}")
    if A["device"] == "cuda":
        for D in (A, B):
            t = D["train"]
            check(t["stock"]["mixer_norm"] == 0 and t["vpad_mixer_norms"]["mixer_norm"] == 4 and t["cuda_graphs"]["graphs"] == 1,
                  f"{D['transformers']}: stock training fused (mixer norms called {t['stock']['mixer_norm']} times, 0 expected), "
                  f"routed for VPAD ({t['vpad_mixer_norms']['mixer_norm']}, 4 expected), a graph captured ({t['cuda_graphs']['graphs']})")
    print("all checks passed" if not bad else f"{len(bad)} checks failed")
    return 1 if bad else 0

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["dump", "compare"]); p.add_argument("files", nargs="+")
    p.add_argument("--ckpt", default="/tmp/tf525_probe_ckpt"); p.add_argument("--device", default="cuda")
    a = p.parse_args(argv)
    if a.what == "dump": dump(a.files[0], a.ckpt, a.device); return 0
    return compare(*a.files)


if __name__ == "__main__": sys.exit(main())
