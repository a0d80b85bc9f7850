#!/usr/bin/env python3
"""Build the offline text corpus of the per-position-loss experiment (nbs/experiments/fig2_position_loss.ipynb) from the
Python 3.11 documentation that Debian ships: the reStructuredText sources of every page, one document per page.

Get the package first (no installation needed; apt works without the Hugging Face Hub):

    apt-get update && apt-get download python3.11-doc && dpkg -x python3.11-doc_*.deb /tmp/pydoc
    python tools/build_text_corpus.py --source /tmp/pydoc/usr/share/doc/python3.11/html/_sources

(or `apt-get install -y python3.11-doc` and the default --source). It writes, under --out (default data/python_docs,
an ignored folder: never commit the corpus):

    train/train-00000.parquet   the training documents, column `text` (for `data.path`)
    heldout.jsonl               long documents kept out of training and out of the tokenizer, {"text": ...} per line
                                (for `eval_extra.dataset_file` / `lengen_eval_position --dataset-file`)
    tokenizer/                  a byte-level BPE trained on the training documents, `<|endoftext|>` as BOS/EOS/PAD
                                (for `pretrained_tokenizer`)
    manifest.json               which page went where, characters and tokens

The held-out pages are drawn (seeded) among the pages of at least --heldout-min-chars characters, so that they reach
far past a short training length.
"""
import argparse, json, random
from pathlib import Path

DEFAULT_SOURCE = "/usr/share/doc/python3.11/html/_sources"
EOT = "<|endoftext|>"


def read_pages(source: Path) -> dict[str, str]:
    "Every `*.rst.txt` page under `source`, by relative path."
    pages = {str(p.relative_to(source)): p.read_text(encoding="utf-8", errors="replace") for p in sorted(source.rglob("*.rst.txt"))}
    if not pages: raise SystemExit(f"build_text_corpus: no *.rst.txt pages under {source}; see the apt-get command at the top of this file")
    return pages


def split_pages(pages: dict[str, str], n_heldout: int, min_chars: int, seed: int) -> tuple[list[str], list[str]]:
    "(training page names, held-out page names): the held-out ones drawn among the long pages."
    long = [k for k, t in pages.items() if len(t) >= min_chars]
    if len(long) < n_heldout: raise SystemExit(f"build_text_corpus: only {len(long)} pages have >= {min_chars} characters")
    held = sorted(random.Random(seed).sample(long, n_heldout))
    return [k for k in pages if k not in set(held)], held


def train_bpe(texts: list[str], vocab_size: int):
    "A byte-level BPE (as lengen.data.small_bpe_tokenizer builds it) trained on `texts`, as a transformers tokenizer."
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT, pad_token=EOT, model_max_length=1 << 20)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", default=DEFAULT_SOURCE, help="the _sources folder of the python3.11-doc HTML")
    p.add_argument("--out", default="data/python_docs")
    p.add_argument("--heldout", type=int, default=32, help="long pages kept for evaluation")
    p.add_argument("--heldout-min-chars", type=int, default=40_000, help="pages at least this long can be held out")
    p.add_argument("--vocab-size", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    import datasets
    pages = read_pages(Path(a.source))
    train, held = split_pages(pages, a.heldout, a.heldout_min_chars, a.seed)
    out = Path(a.out)
    (out/"train").mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict({"text": [pages[k] for k in train]}).to_parquet(str(out/"train"/"train-00000.parquet"))
    (out/"heldout.jsonl").write_text("".join(json.dumps({"text": pages[k]}) + "\n" for k in held))
    tok = train_bpe([pages[k] for k in train], a.vocab_size)
    tok.save_pretrained(str(out/"tokenizer"))
    ntok = lambda k: len(tok(pages[k], verbose=False)["input_ids"])
    manifest = {"source": a.source, "seed": a.seed, "vocab_size": len(tok),
                "train": {"pages": len(train), "chars": sum(len(pages[k]) for k in train), "tokens": sum(map(ntok, train))},
                "heldout": {"pages": {k: {"chars": len(pages[k]), "tokens": ntok(k)} for k in held}}}
    manifest["heldout"]["min_tokens"] = min(v["tokens"] for v in manifest["heldout"]["pages"].values())
    (out/"manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{out}: {len(train)} training pages ({manifest['train']['chars'] / 1e6:.1f} M characters, "
          f"{manifest['train']['tokens'] / 1e6:.2f} M tokens), {len(held)} held-out pages of at least "
          f"{manifest['heldout']['min_tokens']} tokens, a {len(tok)}-token BPE")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
