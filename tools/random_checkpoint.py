"""Save a randomly initialised model of a `lengen_bench` shape like a Hub checkpoint (bf16), for GPU runs that cannot
download the real one; built on the GPU when there is one, so no CPU load lands beside a timed run. With an experiment,
the run's config-level changes (sliding windows) and modules (attention scaling) are applied first and a tokenizer is
saved beside the weights (a 4096-token BPE trained on the standard library's help texts: the real one is on the Hub),
so that `lengen.load_model` and the evaluation commands load it as they load that run's checkpoint.

    python tools/random_checkpoint.py smollm3-3b /tmp/smollm3_3b_random
    python tools/random_checkpoint.py smollm3-3b /tmp/smollm3_swa_scaled smollm3_3b_swa_8K_vpad_scaled
"""
import sys, torch
from transformers import AutoModelForCausalLM
from lengen.compose import compose_config
from lengen.data import small_bpe_tokenizer
from lengen.experiments.bench import SHAPES
from lengen.models.build import add_run_modules, run_config

shape, out, experiment = (sys.argv[1:4] + [None])[:3]
config = SHAPES[shape]()
cfg = compose_config(experiment, ["wandb.enabled=false"]) if experiment else None
if cfg: run_config(config, cfg)
torch.manual_seed(0)
with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    if cfg: model = add_run_modules(model, cfg)
model.save_pretrained(out)
if cfg: small_bpe_tokenizer(4096).save_pretrained(out)
print(f"{shape}{' as ' + experiment if cfg else ''}: {sum(p.numel() for p in model.parameters())} parameters -> {out}")
