"""Save a randomly initialised model of a `lengen_bench` shape like a Hub checkpoint (bf16), for GPU runs that cannot
download the real one; built on the GPU when there is one, so no CPU load lands beside a timed run.

    python tools/random_checkpoint.py smollm3-3b /tmp/smollm3_3b_random
"""
import sys, torch
from transformers import AutoModelForCausalLM
from lengen.experiments.bench import SHAPES

shape, out = sys.argv[1:3]
torch.manual_seed(0)
with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
    model = AutoModelForCausalLM.from_config(SHAPES[shape](), dtype=torch.bfloat16)
model.save_pretrained(out)
print(f"{shape}: {sum(p.numel() for p in model.parameters())} parameters -> {out}")
