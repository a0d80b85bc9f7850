"""Inputs for timing the 85M step offline (issue 48): a tokenizer with the GPT-NeoX vocabulary's size (50,277 entries, no
merges: the step's cost depends on the size only) and random rows of 2,048 tokens as a saved `datasets` folder.

    python tools/probes/m85_inputs.py /tmp/m85 [--rows 2880]   # writes /tmp/m85/tokenizer and /tmp/m85/rows
"""
import argparse
from pathlib import Path

import datasets, numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

VOCAB, ROW = 50277, 2048   # GPT-NeoX-20B's len(tokenizer); the family's data.block_size

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out"); p.add_argument("--rows", type=int, default=64 * 45)
    a = p.parse_args(argv)
    out = Path(a.out)
    vocab = {"<|endoftext|>": 0, **{f"t{i}": i for i in range(1, VOCAB)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>")); tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>")
    fast.save_pretrained(out/"tokenizer")
    rows = np.random.default_rng(0).integers(0, VOCAB, size=(a.rows, ROW), dtype=np.int64)
    datasets.Dataset.from_dict({"input_ids": rows}).save_to_disk(str(out/"rows"))
    print(f"{out/'tokenizer'}: {len(fast)} tokens; {out/'rows'}: {a.rows} rows of {ROW}")

if __name__ == "__main__": main()
