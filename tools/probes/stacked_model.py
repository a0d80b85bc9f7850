"""K Mamba2 language models of one architecture trained as one model: every weight stacked along a leading member axis, the projections as batched matrix products, mamba_ssm's chunked scan over all members at once."""
from __future__ import annotations
import importlib.util
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn, Tensor
from transformers import Mamba2Config, Mamba2ForCausalLM

# ---------------------------------------------------------------- ops

def same_sequence(seq_idx:Tensor, # (K, L) sequence index of each token of each member's row
                  width:int, # the convolution's width
                 ) -> list[Tensor]:
    "For s = 1 .. width-1, whether token t and token t-s lie in one sequence: (K, L, 1) booleans (False where t < s)."
    return [F.pad(seq_idx[:, s:] == seq_idx[:, :-s], (s, 0))[..., None] for s in range(1, width)]


def stacked_conv(x:Tensor, # (K, L, C) the convolution's input, each member's row
                 weight:Tensor, # (K, C, W) each member's depthwise kernels
                 bias:Tensor, # (K, C)
                 same:list[Tensor], # `same_sequence(seq_idx, W)`
                ) -> Tensor:
    "Each member's causal depthwise convolution (before its SiLU), nothing read across a sequence boundary."
    W = weight.shape[-1]
    y = x * weight[:, None, :, W - 1].to(x.dtype) + bias[:, None].to(x.dtype)
    for s in range(1, W):
        y = y + F.pad(x[:, :-s], (0, 0, s, 0)) * same[s - 1] * weight[:, None, :, W - 1 - s].to(x.dtype)
    return y


def ssd_reference(x:Tensor, # (K, L, H, P) inputs of each head
                  dt:Tensor, # (K, L, H) time steps (after bias and softplus)
                  A:Tensor, # (K, H) decay rates, negative
                  B:Tensor, C:Tensor, # (K, L, G, N) input and output projections of each group
                  seq_idx:Tensor, # (K, L) sequence index of each token (non-decreasing along a row)
                 ) -> Tensor:
    "The selective SSM without D, by its quadratic form: y_t = sum over s <= t in t's sequence of C_t.B_s exp(sum_(s,t] dt A) dt_s x_s; float32 (K, L, H, P)."
    K, L, H, P = x.shape
    G = B.shape[2]
    y = x.new_zeros(K, L, H, P, dtype=torch.float32)
    for k in range(K):   # member by member and sequence by sequence: memory grows with the longest sequence, not the row
        bounds = torch.nonzero(F.pad(seq_idx[k, 1:] != seq_idx[k, :-1], (1, 0), value=True)).flatten().tolist() + [L]
        for a, b in zip(bounds, bounds[1:]):
            cum = (dt[k, a:b].float() * A[k].float()).cumsum(0).T                               # (H, n)
            decay = torch.exp((cum[:, :, None] - cum[:, None, :]).masked_fill(
                ~torch.ones(b - a, b - a, dtype=torch.bool, device=x.device).tril(), float("-inf")))  # (H, t, s)
            cb = torch.einsum("tgn,sgn->gts", C[k, a:b].float(), B[k, a:b].float()).repeat_interleave(H // G, 0)
            y[k, a:b] = torch.einsum("hts,sh,shp->thp", decay * cb, dt[k, a:b].float(), x[k, a:b].float())
    return y


@torch.library.custom_op("lengen::stacked_scan", mutates_args=())
def stacked_scan(x:Tensor, # (K, L, H, P) inputs, each head's already divided by its -A
                 dt:Tensor, # (K, L, H) float32 time steps, each head's already multiplied by its -A
                 B:Tensor, C:Tensor, # (K, L, G, N)
                 seq_idx:Tensor, # (K, L) int32
                 chunk_size:int) -> Tensor:
    "mamba_ssm's chunked scan with A = -1 for every head: members as its batch. An op of its own, so that the compiler leaves it whole."
    from mamba_ssm.ops.triton.ssd_combined import _mamba_chunk_scan_combined_fwd  # optional: the gpu extra (mamba_ssm)
    A = -torch.ones(x.shape[2], device=x.device, dtype=torch.float32)
    return _mamba_chunk_scan_combined_fwd(x, dt, A, B, C, chunk_size, seq_idx=seq_idx)[0]

@stacked_scan.register_fake
def _(x, dt, B, C, seq_idx, chunk_size): return x.new_empty(x.shape)

@torch.library.custom_op("lengen::stacked_scan_backward", mutates_args=())
def stacked_scan_backward(dout:Tensor, x:Tensor, dt:Tensor, B:Tensor, C:Tensor, out:Tensor, seq_idx:Tensor,
                          chunk_size:int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    "The gradients of `stacked_scan` for x, dt, B and C, from mamba_ssm's backward kernels."
    from mamba_ssm.ops.triton.ssd_combined import _mamba_chunk_scan_combined_bwd  # optional: the gpu extra (mamba_ssm)
    A = -torch.ones(x.shape[2], device=x.device, dtype=torch.float32)
    dx, ddt, _, dB, dC, *_ = _mamba_chunk_scan_combined_bwd(dout, x, dt, A, B, C, out, chunk_size, seq_idx=seq_idx)
    return dx, ddt, dB, dC

@stacked_scan_backward.register_fake
def _(dout, x, dt, B, C, out, seq_idx, chunk_size): return x.new_empty(x.shape), dt.new_empty(dt.shape), B.new_empty(B.shape), C.new_empty(C.shape)

def _scan_setup(ctx, inputs, output):
    x, dt, B, C, seq_idx, chunk_size = inputs
    ctx.save_for_backward(x, dt, B, C, output, seq_idx); ctx.chunk_size = chunk_size

def _scan_grads(ctx, dout):
    x, dt, B, C, out, seq_idx = ctx.saved_tensors
    return *stacked_scan_backward(dout.contiguous(), x, dt, B, C, out, seq_idx, ctx.chunk_size), None, None

stacked_scan.register_autograd(_scan_grads, setup_context=_scan_setup)


def fold_decay(x:Tensor, # (K, L, H, P)
               dt:Tensor, # (K, L, H) float32, after bias and softplus
               A:Tensor, # (K, H) negative decay rates
              ) -> tuple[Tensor, Tensor]:
    "(x / -A, dt * -A) per member and head: exp(dt*A) = exp(dt'*(-1)) and dt*x = dt'*x', so the scan runs with one A for all."
    a = -A.float()[:, None]
    return (x / a[..., None]).to(x.dtype), dt.float() * a


def ssd_fused(x:Tensor, dt:Tensor, A:Tensor, B:Tensor, C:Tensor, seq_idx:Tensor,
              chunk_size:int, # the scan's chunk length
             ) -> Tensor:
    "`ssd_reference` by mamba_ssm's chunked scan over all members at once (members are its batch), each head's A folded into dt and x."
    return stacked_scan(*fold_decay(x, dt, A), B.contiguous(), C.contiguous(), seq_idx.to(torch.int32).contiguous(), chunk_size)


def fused_scan_available(x:Tensor) -> bool:
    "Whether `ssd_fused` can run on `x`: a CUDA tensor, mamba_ssm installed."
    return x.is_cuda and importlib.util.find_spec("mamba_ssm") is not None


def rms(x:Tensor, weight:Tensor, # (K, d) each member's scale
        eps:float) -> Tensor:
    "transformers' Mamba2RMSNorm for each member: normalize in float32, scale, in x's dtype."
    xf = x.float()
    return weight[:, None] * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def gated_rms(y:Tensor, z:Tensor, weight:Tensor, # (K, d)
              eps:float, group:int) -> Tensor:
    "transformers' Mamba2RMSNormGated for each member: `y * silu(z)` normalized in groups of `group` channels, scaled."
    h = y.float() * F.silu(z.float())
    g = h.view(*h.shape[:-1], -1, group)
    g = g * torch.rsqrt(g.pow(2).mean(-1, keepdim=True) + eps)
    return weight[:, None] * g.view(h.shape).to(y.dtype)


def bmm_linear(x:Tensor, # (K, L, i)
               weight:Tensor, # (K, o, i), as nn.Linear keeps it
              ) -> Tensor:
    "Each member's `x @ weight.T`, one batched product."
    return torch.bmm(x, weight.transpose(1, 2))

COMPILE = True   # on CUDA, the elementwise work around the scan runs as torch.compile's fused kernels (False: eagerly)

class on_cuda_compiled:
    "`fn` as it is on the CPU; on CUDA tensors compiled by torch.compile, so that its elementwise ops run as a few fused kernels."
    def __init__(self, fn): self.fn, self.compiled = fn, None
    def __call__(self, *args):
        if not (COMPILE and args[0].is_cuda): return self.fn(*args)
        if self.compiled is None: self.compiled = torch.compile(self.fn, fullgraph=True, dynamic=False)
        return self.compiled(*args)


def _pre_scan(xbc:Tensor, # (K, L, conv channels) the convolution's input
              dt:Tensor, # (K, L, H) raw time steps
              conv_weight:Tensor, conv_bias:Tensor, same:list[Tensor], dt_bias:Tensor, A_log:Tensor,
              shape:tuple, # (heads, head_dim, groups, state_size)
             ) -> tuple:
    "The mixer between in_proj and the scan: convolution and SiLU, the split into x, B, C, dt's bias and softplus, A."
    H, P, G, N = shape
    K, L, _ = xbc.shape
    xbc = F.silu(stacked_conv(xbc, conv_weight, conv_bias, same))
    xs, B, C = xbc.split([H * P, G * N, G * N], -1)
    dt = F.softplus(dt.float() + dt_bias[:, None].float())
    return xs.reshape(K, L, H, P), dt, -torch.exp(A_log.float()), B.reshape(K, L, G, N), C.reshape(K, L, G, N)

def _pre_scan_folded(*args) -> tuple:
    "`_pre_scan`, then `fold_decay`'s x and dt for the scan kernel."
    xs, dt, A, B, C = _pre_scan(*args)
    return xs, dt, A, B.contiguous(), C.contiguous(), *fold_decay(xs, dt, A)

def _post_scan(y:Tensor, # (K, L, H, P) the scan's output, without D
               xs:Tensor, D:Tensor, z:Tensor, gate_norm:Tensor, eps:float, group:int) -> Tensor:
    "The mixer between the scan and out_proj: D's skip connection, the gate and the gated RMSNorm."
    K, L, H, P = xs.shape
    y = (y.float() + xs.float() * D[:, None, :, None].float()).to(xs.dtype).reshape(K, L, H * P)
    return gated_rms(y, z, gate_norm, eps, group)

pre_scan, pre_scan_folded, post_scan = on_cuda_compiled(_pre_scan), on_cuda_compiled(_pre_scan_folded), on_cuda_compiled(_post_scan)
block_norm = on_cuda_compiled(rms)


# ---------------------------------------------------------------- the module

BLOCK_PARAMS = {   # stacked name -> (name in a Mamba2 block, shape of one member's tensor there (None: as stacked))
    "norm": "norm.weight", "in_proj": "mixer.in_proj.weight", "conv_weight": "mixer.conv1d.weight",
    "conv_bias": "mixer.conv1d.bias", "dt_bias": "mixer.dt_bias", "A_log": "mixer.A_log", "D": "mixer.D",
    "gate_norm": "mixer.norm.weight", "out_proj": "mixer.out_proj.weight"}


def check_stackable(config:Mamba2Config):
    "Refuse (ValueError) a Mamba2 layout `StackedMamba2` does not compute."
    bad = {k: v for k, v in {"use_bias": config.use_bias, "use_conv_bias": not config.use_conv_bias,
                             "hidden_act": config.hidden_act not in ("silu", "swish"),
                             "time_step_limit": tuple(config.time_step_limit) != (0.0, float("inf")),
                             "residual_in_fp32": not config.residual_in_fp32}.items() if v}
    if bad: raise ValueError(f"StackedMamba2 computes Mamba2 models without projection biases, with convolution biases, SiLU, "
                             f"no time-step limit and a float32 residual; this config differs in {', '.join(bad)}")


class StackedBlock(nn.Module):
    "One Mamba2 block of K members: pre-norm, mixer, residual."
    def __init__(self, config:Mamba2Config, members:int):
        super().__init__()
        c, K = config, members
        self.inner, self.H, self.P, self.G, self.N = c.expand * c.hidden_size, c.num_heads, c.head_dim, c.n_groups, c.state_size
        conv = self.inner + 2 * self.G * self.N
        e = lambda *s: nn.Parameter(torch.empty(K, *s))
        self.norm, self.in_proj = e(c.hidden_size), e(self.inner + conv + self.H, c.hidden_size)
        self.conv_weight, self.conv_bias = e(conv, c.conv_kernel), e(conv)
        self.dt_bias, self.A_log, self.D = e(self.H), e(self.H), e(self.H)
        self.gate_norm, self.out_proj = e(self.inner), e(c.hidden_size, self.inner)
        self.eps, self.chunk_size = c.layer_norm_epsilon, c.chunk_size

    def mixer(self, x:Tensor, seq_idx:Tensor, same:list[Tensor], at) -> Tensor:
        "The mixer's output (K, L, hidden) for the normalized input `x`; `at(point, t)` applies the perturbations of a site."
        z, xbc, dt = bmm_linear(at("in_proj", x), self.in_proj).split([self.inner, self.inner + 2 * self.G * self.N, self.H], -1)
        shape = (self.H, self.P, self.G, self.N)
        fused = fused_scan_available(x)
        xs, dt, A, B, C, *folded = (pre_scan_folded if fused else pre_scan)(xbc, dt, self.conv_weight, self.conv_bias, same,
                                                                           self.dt_bias, self.A_log, shape)
        if fused: y = stacked_scan(*folded, B, C, seq_idx.to(torch.int32).contiguous(), self.chunk_size)
        else: y = ssd_reference(xs, dt, A, B, C, seq_idx)
        y = at("gate_norm", post_scan(y, xs, self.D, z, self.gate_norm, self.eps, self.inner // self.G))
        return bmm_linear(at("out_proj", y), self.out_proj)

    def forward(self, h:Tensor, seq_idx:Tensor, same:list[Tensor], at) -> Tensor:
        return h.float() + at("mixer", self.mixer(at("norm", block_norm(h, self.norm, self.eps)), seq_idx, same, at))


@dataclass
class StackedOutput:
    losses:Tensor|None # (K,) each member's mean loss over its labelled tokens
    logits:Tensor|None # (K, L, vocab) float32, when asked for


class StackedMamba2(nn.Module):
    "K Mamba2ForCausalLM of one architecture as one module: each weight a (K, ...) tensor; member k computes what model k computes."
    def __init__(self, config:Mamba2Config, members:int):
        super().__init__()
        check_stackable(config)
        self.config, self.members = config, members
        K, c = members, config
        self.embeddings = nn.Parameter(torch.empty(K, c.vocab_size, c.hidden_size))
        self.layers = nn.ModuleList(StackedBlock(c, K) for _ in range(c.num_hidden_layers))
        self.norm_f = nn.Parameter(torch.empty(K, c.hidden_size))
        self.lm_head = None if c.tie_word_embeddings else nn.Parameter(torch.empty(K, c.vocab_size, c.hidden_size))

    def names(self) -> dict[str, str]:
        "Each stacked parameter's name -> the name of its member tensors in a Mamba2ForCausalLM."
        out = {"embeddings": "backbone.embeddings.weight", "norm_f": "backbone.norm_f.weight"}
        out |= {f"layers.{i}.{k}": f"backbone.layers.{i}.{v}" for i in range(len(self.layers)) for k, v in BLOCK_PARAMS.items()}
        return out | ({} if self.lm_head is None else {"lm_head": "lm_head.weight"})

    @classmethod
    @torch.no_grad()
    def from_models(cls, models:list[Mamba2ForCausalLM]) -> "StackedMamba2":
        "One stack of `models` (same architecture), member k a copy of `models[k]`'s weights, on their device."
        c = models[0].config
        if any(m.config.to_diff_dict() != c.to_diff_dict() for m in models[1:]):
            raise ValueError("StackedMamba2.from_models: the models differ in their configs; a stack holds one architecture")
        stack = cls(c, len(models)).to(models[0].device)
        for name, hf in stack.names().items():
            p = stack.get_parameter(name)
            p.copy_(torch.stack([m.get_parameter(hf).reshape(p.shape[1:]) for m in models]))
        return stack

    @torch.no_grad()
    def member_state_dict(self, k:int) -> dict[str, Tensor]:
        "Member `k`'s weights as a Mamba2ForCausalLM state dict (copies; tied `lm_head.weight` included)."
        sd = {hf: member_tensor(self.get_parameter(n)[k], hf) for n, hf in self.names().items()}
        if self.lm_head is None: sd["lm_head.weight"] = sd["backbone.embeddings.weight"]
        return sd

    def member_model(self, k:int) -> Mamba2ForCausalLM:
        "A standalone Mamba2ForCausalLM holding member `k`'s weights (float32, on the stack's device)."
        with torch.device(self.embeddings.device): model = Mamba2ForCausalLM(self.config)
        model.load_state_dict(self.member_state_dict(k))
        for n, p in model.named_parameters():   # the stack keeps its SSM scalars in float32; so does the copy
            if n.rsplit(".", 1)[-1] in ("A_log", "D", "dt_bias"): p.data = p.data.float()
        return model

    def forward(self, input_ids:Tensor, # (K, L) each member's row of tokens
                seq_idx:Tensor|None=None, # (K, L) sequence index of each token (None: one sequence a row)
                labels:Tensor|None=None, # (K, L) unshifted labels, -100 ignored
                perturb:dict|None=None, # (point, layer) -> f(x) applied there in training: points norm, in_proj, gate_norm, out_proj, mixer (layer i), norm_f (layer None)
                return_logits:bool=False,
               ) -> StackedOutput:
        "Each member's loss on its row (and the logits if asked): what member k's Mamba2ForCausalLM computes on row k."
        K, L = input_ids.shape
        if seq_idx is None: seq_idx = torch.zeros_like(input_ids)
        fns = perturb if (perturb and self.training) else {}
        at_layer = lambda i: (lambda point, x: fns[(point, i)](x) if (point, i) in fns else x)
        emb = self.embeddings
        h = torch.gather(emb, 1, input_ids[..., None].expand(K, L, emb.shape[-1]))
        same = same_sequence(seq_idx, self.config.conv_kernel)
        for i, layer in enumerate(self.layers): h = layer(h, seq_idx, same, at_layer(i))
        h = at_layer(None)("norm_f", rms(h, self.norm_f, self.config.layer_norm_epsilon))
        head = emb if self.lm_head is None else self.lm_head
        logits = bmm_linear(h.to(head.dtype), head).float()
        losses = None if labels is None else member_losses(logits, labels)
        return StackedOutput(losses, logits if return_logits or labels is None else None)


def member_tensor(t:Tensor, # one member's slice of a stacked parameter
                  name:str, # its name in a Mamba2ForCausalLM
                 ) -> Tensor:
    "A copy of `t` shaped as the Mamba2ForCausalLM parameter `name` (a convolution's weight is (C, 1, W) there)."
    t = t.detach().clone()
    return t[:, None] if name.endswith("conv1d.weight") else t


def member_losses(logits:Tensor, # (K, L, V) float32
                  labels:Tensor, # (K, L) unshifted, -100 ignored
                 ) -> Tensor:
    "Each member's causal-LM loss: the mean cross-entropy of token t+1 given tokens up to t over its labelled tokens (K,)."
    shift = F.pad(labels, (0, 1), value=-100)[:, 1:]
    ce = F.cross_entropy(logits.transpose(1, 2), shift, ignore_index=-100, reduction="none")   # (K, L), 0 where ignored
    return ce.sum(1) / (shift != -100).sum(1).clamp(min=1)


# ---------------------------------------------------------------- recurrent steps (greedy decoding)

@dataclass
class StackedState:
    "Every layer's recurrent state for B rows of each of K members."
    conv: Tensor # (layers, K, B, conv channels, W-1) the last W-1 inputs of each convolution
    ssm: Tensor # (layers, K, B, H, P, N) the SSM states, float32
    def zero_(self): self.conv.zero_(); self.ssm.zero_(); return self


def ssm_step_stacked(state:Tensor, # (K, B, H, P, N) float32; updated in place
                     x:Tensor, # (K, B, H, P)
                     dt:Tensor, # (K, B, H) after bias and softplus
                     A:Tensor, # (K, H) negative
                     B:Tensor, C:Tensor, # (K, B, G, N)
                    ) -> Tensor:
    "One step of each member's selective SSM without D: y (K, B, H, P) float32. On CUDA by mamba_ssm's kernel, A folded as in training."
    K, b, H, P = x.shape
    G, N = B.shape[2:]
    if x.is_cuda and importlib.util.find_spec("mamba_ssm") is not None:
        from mamba_ssm.ops.triton.selective_state_update import selective_state_update  # optional: the gpu extra (mamba_ssm)
        xf, dtf = fold_decay(x.float(), dt, A)
        flat = lambda t: t.reshape(K * b, *t.shape[2:])
        y = selective_state_update(flat(state), flat(xf), flat(dtf)[..., None].expand(-1, H, P),
                                   -torch.ones(H, P, N, device=x.device), flat(B), flat(C))
        return y.view(K, b, H, P)
    Bh, Ch = (t.float().repeat_interleave(H // G, 2) for t in (B, C))                   # (K, B, H, N)
    dtf = dt.float()[..., None, None]
    state.copy_(state * torch.exp(dtf * A.float()[:, None, :, None, None]) + dtf * x.float()[..., None] * Bh[:, :, :, None])
    return (state @ Ch[..., None])[..., 0]


class StackedStepper:
    "One recurrent step of every member for `batch` rows each (K * batch rows in all, member-major), on its own states."
    def __init__(self, stack:"StackedMamba2", batch:int):
        c, p = stack.config, stack.embeddings
        conv = c.expand * c.hidden_size + 2 * c.n_groups * c.state_size
        self.stack, self.batch, K, n = stack, batch, stack.members, c.num_hidden_layers
        self.state = StackedState(torch.zeros(n, K, batch, conv, c.conv_kernel - 1, dtype=p.dtype, device=p.device),
                                  torch.zeros(n, K, batch, c.num_heads, c.head_dim, c.state_size, device=p.device))

    def reset(self): self.state.zero_()

    def __call__(self, ids:Tensor, # (K * batch,) one token per row
                 pos:Tensor) -> Tensor: # the step's index (unused: the state is the position)
        "Float32 logits (K * batch, vocab) of the next token, advancing the states."
        s, K = self.stack, self.stack.members
        eps = s.config.layer_norm_epsilon
        ids = ids.view(K, self.batch)
        h = torch.gather(s.embeddings, 1, ids[..., None].expand(*ids.shape, s.embeddings.shape[-1]))
        for i, layer in enumerate(s.layers):
            x = rms(h, layer.norm, eps)
            z, xbc, dt = bmm_linear(x, layer.in_proj).split([layer.inner, layer.inner + 2 * layer.G * layer.N, layer.H], -1)
            conv = self.state.conv[i]
            window = torch.cat([conv, xbc[..., None].to(conv.dtype)], -1)
            conv.copy_(window[..., 1:])
            xbc = F.silu((window * layer.conv_weight[:, None]).sum(-1) + layer.conv_bias[:, None])
            xs, B, C = xbc.split([layer.inner, layer.G * layer.N, layer.G * layer.N], -1)
            xs = xs.reshape(K, self.batch, layer.H, layer.P)
            dt = F.softplus(dt.float() + layer.dt_bias[:, None].float())
            y = ssm_step_stacked(self.state.ssm[i], xs, dt, -torch.exp(layer.A_log.float()),
                                 B.reshape(K, self.batch, layer.G, layer.N), C.reshape(K, self.batch, layer.G, layer.N))
            y = (y + xs.float() * layer.D[:, None, :, None].float()).to(xs.dtype).reshape(K, self.batch, layer.inner)
            h = h.float() + bmm_linear(gated_rms(y, z, layer.gate_norm, eps, layer.inner // layer.G), layer.out_proj)
        h = rms(h, s.norm_f, eps)
        head = s.embeddings if s.lm_head is None else s.lm_head
        return bmm_linear(h.to(head.dtype), head).float().reshape(K * self.batch, -1)
