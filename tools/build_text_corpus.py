#!/usr/bin/env python3
"""Build the offline text corpora of the per-position-loss experiments from Debian packages (no Hugging Face Hub needed).

Preset python_docs (the default): the reduced-scale experiment (nbs/paper/fig2_position_loss.ipynb), built from
the Python 3.11 documentation that Debian ships: the reStructuredText sources of every page, one document per page.
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

Preset debian_mix: the corpus of the 85M Mamba2 experiment (the `mamba2_85m_lengen_pile_*` architecture trained from
scratch at length 2048, per-position loss up to 65,536 tokens): C sources and documentation of Linux 6.1 plus the Python
documentation, with a BPE of GPT-NeoX's vocabulary size (50,277) so that the model keeps its ~85M parameters:

    mkdir -p /tmp/deb && cd /tmp/deb && apt-get update && apt-get download linux-source-6.1 linux-doc-6.1 python3.11-doc
    for f in *.deb; do dpkg -x $f /tmp/deb/root; done; cd -
    nohup python tools/build_text_corpus.py --preset debian_mix --debian-root /tmp/deb/root > /tmp/debian_mix.log &   # ~50 min

(--debian-root defaults to /, where `apt-get install` puts the three packages.) A document is one file: a page of
python3.11-doc (`*.rst.txt`), a gzipped file of linux-doc-6.1's Documentation/ (unzipped), a file of the kernel tarball
of linux-source-6.1. A file is skipped when it is a picture in text (.svg, .ppm), holds a NUL byte (binary), is not
valid UTF-8, has fewer than 512 or more than 1,000,000 characters (the longer ones are generated register headers),
has more than 40 `0x..` literals per 1000 characters (firmware and lookup tables), has at least 32,000 characters of
which 75% of the lines are `#define`s (register dumps), or repeats a file kept before, byte for byte (the packages are
read in the order above, so the kernel tarball's copy of Documentation/ falls out). manifest.json counts each reason.

The documents of at least --heldout-min-chars characters are the held-out candidates: none of them trains the BPE,
which is trained on the first --bpe-sample-chars characters of the other documents in the seeded order (documentation
pages first, then kernel files, each shuffled by a seeded hash of the name). The held-out documents are --heldout of
the candidates drawn (seeded) among those of at least --heldout-min-tokens tokens (--heldout-fallback-tokens if too few
are), single files, never concatenated. The training documents are the other documents taken in the same seeded order
until they hold --train-tokens tokens (the BPE's sample comes first in that order, so it is part of them; the
candidates not held out are in the order too). Near-copies of a held-out file (e.g. the tools/include copy of a uapi
header) may stay in training: only byte-identical files are dropped. Under --out (default data/debian_mix) it writes

    parts/train-000.txt.xz ...  the training documents as UTF-8, each ended by a NUL byte, xz preset 9, each part at most
                                --part-mib MiB (so that each travels with one command to the GPU machine)
    parts/rows2048-000.u16.xz ...  the same documents tokenized and packed into rows of --block-size tokens exactly as
                                lengen.data.packed_text_dataset packs them (EOS after each document, 10,000 documents
                                packed together, the rest of each batch dropped), little-endian uint16, xz preset 9
    parts/heldout.jsonl.xz      the held-out documents, {"text": ...} per line
    parts/tokenizer/            the BPE (`pretrained_tokenizer`), `<|endoftext|>` as BOS/EOS/PAD
    parts/manifest.json         files kept and skipped, sample sizes, held-out documents, characters, tokens, parts, times

and unpacks parts/ into --out as the GPU machine does: train/train-000.parquet ... (column `text`, for `data.path`),
rows/rows2048-000.parquet ... (column `input_ids`, int32 lists, the packed rows), heldout.jsonl, tokenizer/ and
manifest.json. On the GPU machine (no network, ~25 MiB of corpus per command), carry a few parts per command, move them
out of the repository to /tmp/parts there, and after the last one run

    python tools/build_text_corpus.py unpack --parts /tmp/parts --out data/debian_mix [--pack-rows 2048] [--time-packing]

It needs the standard library and pyarrow (numpy for row parts; --pack-rows, which packs the rows from the text parts
instead of carrying the row parts, needs `tokenizers`; --time-packing times lengen's own tokenizing and packing of
train/ for the `mamba2_85m_lengen_pile_baseline` run, and leaves the `datasets` cache warm). Either route is carried in
3 commands: the text parts suit lengen as it is, the row parts skip tokenizing on the GPU machine but need lengen to
take a `data.path` of packed `input_ids` rows (today it tokenizes the `text` column of every local dataset).

Measured on this 2-core machine with the defaults (seed 0; manifest.json has the rest):
- files kept: python3.11-doc 469 of 497, linux-doc-6.1 7,952 of 8,849, linux-source-6.1 60,503 of 78,579 (9,060 tiny,
  8,121 duplicates, 403 hex tables, 316 register dumps, 86 huge, 85 pictures, 3 binary, 2 not UTF-8).
- BPE: 100.0 M characters (13,290 documents) in 189 s (167 s for 100 MB of kernel C alone, 29 s for 25 MB).
- training set: 29,313 documents, 330.9 M characters, 120,238,426 tokens (2.75 characters a token; python3.11-doc 2.7 M,
  linux-doc-6.1 10.2 M, linux-source-6.1 107.4 M), 58,722 rows of 2048 tokens.
- text parts: 23.0 + 23.0 + 7.2 = 53.3 MiB (xz -9: 5.9x; zstd -19 --long=27 was 5% larger on a 30 MB sample);
  row parts: 23.0 + 23.0 + 4.9 = 51.0 MiB (xz of uint16 tokens: 0.44 bytes a token, of the text: 0.46); held-out:
  32 files of 67,082 to 312,610 tokens (median 92,929), 9.7 MiB, 1.2 MiB as xz.
- build steps: read 107 s, count the candidates' tokens 306 s, the training tokens 842 s, xz of the text 778 s,
  tokenizing and packing the rows 432 s, xz of the rows 238 s; unpack of the text parts 22 s, of the row parts 12 s
  (their rows equal lengen's own 58,722, checked).
- lengen's own tokenizing and packing of train/ (`--time-packing`, datasets with num_proc=2): 549 s, of which tokenize
  492 s and pack 51 s (one process). With 16 cores (num_proc=8) that is about 123 + 51 + 5 = 3 minutes: too slow for
  the GPU machine's 2-minute aim, hence the row parts (unpacked in seconds) and --pack-rows (421 s here with 2 cores,
  about 1 minute with 16, as the tokenizer's own threads scale).
"""
import argparse, collections, gzip, hashlib, json, lzma, random, re, shutil, statistics, tarfile, time
from pathlib import Path

DEFAULT_SOURCE = "/usr/share/doc/python3.11/html/_sources"
EOT = "<|endoftext|>"
PRESETS = {"python_docs": dict(out="data/python_docs", vocab_size=4096, heldout_min_chars=40_000),
           "debian_mix": dict(out="data/debian_mix", vocab_size=50_277, heldout_min_chars=100_000)}
PYTHON_DOC_PAGES = "usr/share/doc/python3.11/html/_sources"   # under --debian-root
KERNEL_DOC_PAGES = "usr/share/doc/linux-doc-6.1/Documentation"
KERNEL_TARBALL = "usr/src/linux-source-6.1.tar.xz"
PICTURE_SUFFIXES = (".svg", ".ppm")
MIN_CHARS, MAX_CHARS = 512, 1_000_000
HEX_LITERAL, MAX_HEX_PER_KCHAR = re.compile(r"0[xX][0-9a-fA-F]+"), 40
DEFINE_MIN_CHARS, MAX_DEFINE_SHARE = 32_000, 0.75
DOC_END = "\0"              # ends each document of a training part (no kept document holds a NUL byte)
XZ_PRESET = 9
XZ_MARGIN = 1 << 20         # bytes of a part still to come when the xz encoder is flushed (its look-ahead, measured < 0.1 MiB)
ENCODE_BATCH = 256          # documents tokenized in one call
TEXT_PARTS = "train-{:03d}.txt.xz"     # the parts of the training text
ROW_PARTS = "rows{block}-{{:03d}}.u16.xz"   # the parts of the packed rows: tokens as little-endian uint16
ROW_PART = re.compile(r"rows(\d+)-\d+\.u16\.xz")


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


def build_python_docs(a) -> None:
    "The python_docs preset: every page of the Python documentation, a few long ones held out."
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


def python_doc_files(root: Path):
    "(name, bytes) of each page of python3.11-doc: its reStructuredText source."
    src = root/PYTHON_DOC_PAGES
    for p in sorted(src.rglob("*.rst.txt")): yield f"python3.11-doc/{p.relative_to(src)}", p.read_bytes()


def kernel_doc_files(root: Path):
    "(name, bytes) of each file of linux-doc-6.1's Documentation/, unzipped."
    src = root/KERNEL_DOC_PAGES
    for p in sorted(src.rglob("*.gz")): yield f"linux-doc-6.1/{p.relative_to(src).with_suffix('')}", gzip.decompress(p.read_bytes())


def kernel_source_files(root: Path):
    "(name, bytes) of each file of linux-source-6.1's tarball, in the tarball's order (names start `linux-source-6.1/`)."
    with tarfile.open(root/KERNEL_TARBALL, "r:xz") as tar:
        for m in tar:
            if m.isfile(): yield m.name, tar.extractfile(m).read()


PACKAGES = {"python3.11-doc": (PYTHON_DOC_PAGES, python_doc_files), "linux-doc-6.1": (KERNEL_DOC_PAGES, kernel_doc_files),
            "linux-source-6.1": (KERNEL_TARBALL, kernel_source_files)}   # read in this order


def check_document(name: str, # the file's name
                   data: bytes) -> tuple[str|None, str|None]:
    "(its text, None) for a file kept as a document, else (None, why it is skipped); the filters of the docstring."
    if name.endswith(PICTURE_SUFFIXES): return None, "picture"
    if b"\0" in data: return None, "binary"
    try: text = data.decode("utf-8")
    except UnicodeDecodeError: return None, "not_utf8"
    if len(text) < MIN_CHARS: return None, "tiny"
    if len(text) > MAX_CHARS: return None, "huge"
    if len(HEX_LITERAL.findall(text)) * 1000 > MAX_HEX_PER_KCHAR * len(text): return None, "hex_table"
    if len(text) >= DEFINE_MIN_CHARS and text.count("\n#define") >= MAX_DEFINE_SHARE * text.count("\n"): return None, "register_dump"
    return text, None


def read_documents(root: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    "(every kept document by name, for each package how many files were kept or skipped for each reason)."
    docs, seen, counts = {}, set(), {}
    for package, (path, files) in PACKAGES.items():
        if not (root/path).exists(): raise SystemExit(f"build_text_corpus: no {root/path}; see the apt-get command at the top of this file")
        tally = counts[package] = collections.Counter()
        for name, data in files(root):
            text, why = check_document(name, data)
            digest = hashlib.sha1(data).digest()
            if why is None and digest in seen: why = "duplicate"
            if why is None: docs[name] = text; seen.add(digest)
            tally[why or "kept"] += 1
    return docs, {k: dict(v) for k, v in counts.items()}


def seeded_order(names, # document names
                 seed: int) -> list[str]:
    "`names` in the seeded order: documentation pages first, then the kernel's files, each group shuffled by a hash of the name."
    return sorted(names, key=lambda k: (k.startswith("linux-source"), hashlib.sha1(f"{seed}/{k}".encode()).digest()))


def first_chars(names: list[str], docs: dict[str, str], n_chars: int) -> list[str]:
    "The first of `names` that together hold at least `n_chars` characters (all of them if they hold fewer)."
    total = 0
    for i, k in enumerate(names):
        total += len(docs[k])
        if total >= n_chars: return names[:i + 1]
    return names


def token_counts(tok, texts: list[str]) -> list[int]:
    "The number of tokens of each text (no special tokens)."
    counts = []
    for i in range(0, len(texts), ENCODE_BATCH):
        counts += [len(e.ids) for e in tok.backend_tokenizer.encode_batch(texts[i:i + ENCODE_BATCH], add_special_tokens=False)]
    return counts


def first_tokens(names: list[str], docs: dict[str, str], tok, n_tokens: int,
                 known: dict[str, int], # token counts already counted; the new ones are added
                ) -> dict[str, int]:
    "The first of `names` that together hold at least `n_tokens` tokens, with their token counts."
    out, total = {}, 0
    for i in range(0, len(names), ENCODE_BATCH):
        batch = names[i:i + ENCODE_BATCH]
        new = [k for k in batch if k not in known]
        known.update(zip(new, token_counts(tok, [docs[k] for k in new])))
        for k in batch:
            out[k] = known[k]; total += known[k]
            if total >= n_tokens: return out
    raise SystemExit(f"build_text_corpus: the documents hold only {total} tokens, fewer than --train-tokens {n_tokens}")


def pick_heldout(tokens: dict[str, int], # the candidates' token counts
                 n: int, min_tokens: int, fallback_tokens: int, seed: int) -> tuple[list[str], int]:
    "(`n` candidates drawn among those of at least `min_tokens` tokens, or `fallback_tokens` if too few are; that bound)."
    for bound in (min_tokens, fallback_tokens):
        long = sorted(k for k, t in tokens.items() if t >= bound)
        if len(long) >= n: return sorted(random.Random(seed).sample(long, n)), bound
    raise SystemExit(f"build_text_corpus: only {len(long)} documents have >= {fallback_tokens} tokens, fewer than --heldout {n}")


def write_xz_parts(chunks, # the bytes to write, in order; a part never splits one
                   folder: Path, pattern: str, # the name of part i is pattern.format(i)
                   part_mib: float) -> list[str]:
    "Write `chunks` as xz parts of at most `part_mib` MiB each; their names."
    limit, names, chunks = int(part_mib * (1 << 20)), [], iter(chunks)
    chunk = next(chunks, None)
    while chunk is not None:
        path, comp, size = folder/pattern.format(len(names)), lzma.LZMACompressor(preset=XZ_PRESET), 0
        with open(path, "wb") as f:
            while chunk is not None and size < limit - XZ_MARGIN:
                size += f.write(comp.compress(chunk))
                chunk = next(chunks, None)
            size += f.write(comp.flush())
        if size > limit: raise SystemExit(f"build_text_corpus: {path} has {size} bytes, more than --part-mib; raise XZ_MARGIN")
        names.append(path.name)
    return names


def pack_rows(texts: list[str], tok, # the training documents, in order; a `tokenizers.Tokenizer`
              block_size: int, batch_docs: int = 10_000):
    """The documents tokenized (all cores) and packed into rows of `block_size` tokens, an int32 array, as
    lengen.data.packed_text_dataset packs them (EOS after each document, `batch_docs` documents packed together, the
    rest of each batch dropped)."""
    import numpy as np
    eos, rows = np.array([tok.token_to_id(EOT)]), []
    for i in range(0, len(texts), batch_docs):
        ids = np.concatenate([np.concatenate([e.ids, eos]) for e in tok.encode_batch(texts[i:i + batch_docs], add_special_tokens=False)])
        rows.append(ids[:len(ids) // block_size * block_size].astype(np.int32).reshape(-1, block_size))
    return np.concatenate(rows)


def write_rows(rows, # an int array, one packed row a line
               path: Path) -> None:
    "Write packed rows as parquet, column `input_ids` (int32 lists, as lengen's own packed rows are)."
    import numpy as np, pyarrow as pa, pyarrow.parquet as pq
    offsets = np.arange(0, rows.size + 1, rows.shape[1], dtype=np.int32)
    pq.write_table(pa.table({"input_ids": pa.ListArray.from_arrays(offsets, rows.astype(np.int32).ravel())}), path)


def by_package(counts: dict[str, int]) -> dict[str, int]:
    "The sums of `counts` (by document name) for each package (the first part of the names)."
    sums = collections.Counter()
    for k, n in counts.items(): sums[k.split("/")[0]] += n
    return dict(sums)


def timed(seconds: dict, # where to note how long the step took
          step: str, fn, *args):
    "`fn(*args)`, its time noted in `seconds[step]` and printed."
    t = time.time(); result = fn(*args); seconds[step] = round(time.time() - t, 1)
    print(f"build_text_corpus: {step} took {seconds[step]} s", flush=True)
    return result


def build_debian_mix(a) -> None:
    "The debian_mix preset (see the docstring): documents, BPE, held-out set, text and row parts, then `unpack` of the parts."
    if a.vocab_size > 1 << 16: raise SystemExit("build_text_corpus: the row parts hold uint16 tokens; --vocab-size must be at most 65,536")
    out, parts, seconds = Path(a.out), Path(a.out)/"parts", {}
    parts.mkdir(parents=True, exist_ok=True)
    docs, files = timed(seconds, "read", read_documents, Path(a.debian_root))
    candidates = sorted(k for k, v in docs.items() if len(v) >= a.heldout_min_chars)
    bpe_names = first_chars(seeded_order(set(docs) - set(candidates), a.seed), docs, a.bpe_sample_chars)
    tok = timed(seconds, "bpe", train_bpe, [docs[k] for k in bpe_names], a.vocab_size)
    tok.save_pretrained(str(parts/"tokenizer"))
    known = dict(zip(candidates, timed(seconds, "count_heldout_candidates", token_counts, tok, [docs[k] for k in candidates])))
    held, bound = pick_heldout(known, a.heldout, a.heldout_min_tokens, a.heldout_fallback_tokens, a.seed)
    held_tokens = {k: known[k] for k in held}
    train = timed(seconds, "count_train", first_tokens, seeded_order(set(docs) - set(held), a.seed), docs, tok, a.train_tokens, known)
    if not set(bpe_names) <= set(train): raise SystemExit("build_text_corpus: the BPE sample is not all training text; lower --bpe-sample-chars")
    with lzma.open(parts/"heldout.jsonl.xz", "wt", preset=XZ_PRESET) as f: f.writelines(json.dumps({"text": docs[k]}) + "\n" for k in held)
    texts = [docs[k] for k in train]
    text_parts = timed(seconds, "xz_text", write_xz_parts, ((t + DOC_END).encode() for t in texts), parts, TEXT_PARTS, a.part_mib)
    rows = timed(seconds, "pack_rows", pack_rows, texts, tok.backend_tokenizer, a.block_size)
    row_parts = timed(seconds, "xz_rows", write_xz_parts, (r.astype("<u2").tobytes() for r in rows), parts,
                      ROW_PARTS.format(block=a.block_size), a.part_mib)
    manifest = {"preset": "debian_mix", "debian_root": a.debian_root, "seed": a.seed, "vocab_size": len(tok), "files": files,
                "bpe_sample": {"docs": len(bpe_names), "chars": sum(len(docs[k]) for k in bpe_names)},
                "heldout": {"docs": len(held), "min_tokens_bound": bound, "min_tokens": min(held_tokens.values()),
                            "median_tokens": statistics.median(held_tokens.values()),
                            "pages": {k: {"chars": len(docs[k]), "tokens": n} for k, n in held_tokens.items()}},
                "train": {"docs": len(train), "chars": sum(len(docs[k]) for k in train), "tokens": sum(train.values()),
                          "tokens_with_eos": sum(train.values()) + len(train),
                          "docs_by_package": by_package(dict.fromkeys(train, 1)), "tokens_by_package": by_package(train),
                          "block_size": a.block_size, "rows": len(rows)},
                "parts": {p: (parts/p).stat().st_size for p in ["heldout.jsonl.xz"] + text_parts + row_parts},
                "seconds": seconds}
    (parts/"manifest.json").write_text(json.dumps(manifest, indent=1))
    timed(seconds, "unpack", unpack, parts, out)
    mib = lambda names: sum(manifest["parts"][p] for p in names) / 2**20
    print(f"{out}: {len(train)} training documents ({manifest['train']['tokens'] / 1e6:.1f} M tokens) in {len(text_parts)} text parts "
          f"({mib(text_parts):.1f} MiB) or {len(row_parts)} parts of {len(rows)} packed rows ({mib(row_parts):.1f} MiB); "
          f"{len(held)} held-out documents of {manifest['heldout']['min_tokens']} to {max(held_tokens.values())} tokens "
          f"({mib(['heldout.jsonl.xz']):.1f} MiB); a {len(tok)}-token BPE")


def unpack(parts: Path, # a folder of parts: train-*.txt.xz, rows*-*.u16.xz, other *.xz files, other files and folders
           out: Path) -> None:
    """The corpus folder from its parts: train-*.txt.xz into out/train/*.parquet (column `text`), rows*-*.u16.xz into
    out/rows/*.parquet (column `input_ids`, packed rows), other *.xz decompressed, the rest copied."""
    import numpy as np, pyarrow as pa, pyarrow.parquet as pq
    out.mkdir(parents=True, exist_ok=True)
    for p in sorted(parts.iterdir()):
        if p.name.startswith("train-") and p.name.endswith(".txt.xz"):
            texts = lzma.decompress(p.read_bytes()).decode().split(DOC_END)[:-1]
            (out/"train").mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.table({"text": texts}), out/"train"/p.name.replace(".txt.xz", ".parquet"))
        elif m := ROW_PART.fullmatch(p.name):
            (out/"rows").mkdir(parents=True, exist_ok=True)
            tokens = np.frombuffer(lzma.decompress(p.read_bytes()), dtype="<u2")
            write_rows(tokens.reshape(-1, int(m[1])), out/"rows"/p.name.replace(".u16.xz", ".parquet"))
        elif p.suffix == ".xz": (out/p.stem).write_bytes(lzma.decompress(p.read_bytes()))
        elif p.is_dir(): shutil.copytree(p, out/p.name, dirs_exist_ok=True)
        else: shutil.copy2(p, out/p.name)


def time_packing(out: Path, experiment: str = "mamba2_85m_lengen_pile_baseline") -> dict:
    "Time lengen's own tokenizing and packing of out/train (as `experiment` trains on it), with this machine's cores."
    import os
    from lengen.config import compose_config
    from lengen.data import build_tokenizer, build_train_dataset
    cfg = compose_config(experiment, [f"data.path={out/'train'}", f"pretrained_tokenizer={out/'tokenizer'}"], validate=False)
    t = time.time(); rows = build_train_dataset(cfg, build_tokenizer(cfg))
    return {"cores": os.cpu_count(), "block_size": cfg.data.block_size, "rows": len(rows), "seconds": round(time.time() - t, 1)}


def unpack_main(argv) -> None:
    "The `unpack` sub-command."
    p = argparse.ArgumentParser(prog="build_text_corpus.py unpack", description=unpack.__doc__)
    p.add_argument("--parts", required=True, help="the folder holding the parts (train-*.txt.xz or rows*-*.u16.xz, heldout.jsonl.xz, tokenizer/, manifest.json)")
    p.add_argument("--out", required=True, help="the corpus folder to write (train/ or rows/, heldout.jsonl, tokenizer/, manifest.json)")
    p.add_argument("--pack-rows", type=int, metavar="BLOCK_SIZE", help="then tokenize and pack the training set into rows/ (instead of carrying the row parts)")
    p.add_argument("--time-packing", action="store_true", help="then time lengen's tokenizing and packing of train/")
    a = p.parse_args(argv)
    t = time.time(); unpack(Path(a.parts), Path(a.out))
    print(f"unpacked {a.parts} into {a.out} in {time.time() - t:.1f} s")
    if a.pack_rows:
        import pyarrow.parquet as pq
        from tokenizers import Tokenizer
        t, out = time.time(), Path(a.out)
        texts = [doc for f in sorted((out/"train").glob("*.parquet")) for doc in pq.read_table(f, columns=["text"])["text"].to_pylist()]
        rows = pack_rows(texts, Tokenizer.from_file(str(out/"tokenizer"/"tokenizer.json")), a.pack_rows)
        shutil.rmtree(out/"rows", ignore_errors=True); (out/"rows").mkdir()
        write_rows(rows, out/"rows"/f"rows{a.pack_rows}-000.parquet")
        print(f"packed {len(rows)} rows of {a.pack_rows} tokens into {out/'rows'} in {time.time() - t:.1f} s")
    if a.time_packing: print("lengen tokenize + pack:", json.dumps(time_packing(Path(a.out))))


def main(argv=None) -> int:
    import sys
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["unpack"]: unpack_main(argv[1:]); return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Sub-command: `unpack --parts DIR --out DIR [--time-packing]` (see above).")
    p.add_argument("--preset", choices=PRESETS, default="python_docs")
    p.add_argument("--source", default=DEFAULT_SOURCE, help="python_docs: the _sources folder of the python3.11-doc HTML")
    p.add_argument("--debian-root", default="/", help="debian_mix: the folder the three packages were unpacked into (dpkg -x)")
    p.add_argument("--out", help="default: data/<preset>")
    p.add_argument("--heldout", type=int, default=32, help="long documents kept for evaluation")
    p.add_argument("--heldout-min-chars", type=int, help="documents at least this long can be held out (python_docs: 40,000; debian_mix: 100,000)")
    p.add_argument("--heldout-min-tokens", type=int, default=65_536, help="debian_mix: held-out documents have at least this many tokens...")
    p.add_argument("--heldout-fallback-tokens", type=int, default=32_768, help="...or this many, when too few have")
    p.add_argument("--vocab-size", type=int, help="python_docs: 4096; debian_mix: 50,277 (GPT-NeoX's)")
    p.add_argument("--bpe-sample-chars", type=int, default=100_000_000, help="debian_mix: characters of the sample the BPE is trained on")
    p.add_argument("--train-tokens", type=int, default=120_000_000, help="debian_mix: tokens of the training documents (at least)")
    p.add_argument("--part-mib", type=float, default=24, help="debian_mix: largest part, MiB")
    p.add_argument("--block-size", type=int, default=2048, help="debian_mix: tokens of a packed row (the runs' data.block_size)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    for k, v in PRESETS[a.preset].items():
        if getattr(a, k) is None: setattr(a, k, v)
    {"python_docs": build_python_docs, "debian_mix": build_debian_mix}[a.preset](a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
