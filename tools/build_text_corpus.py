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

Preset debian_mix: the corpus of the 85M Mamba2 experiments (the `mamba2_85m_lengen_pile_*` architecture trained from
scratch; per-position loss to 32 times the training length): C sources and documentation of Linux 6.1 plus the Python
documentation, with a BPE of GPT-NeoX's vocabulary size (50,277) so that the model keeps its ~85M parameters:

    mkdir -p /tmp/deb && cd /tmp/deb && apt-get update && apt-get download linux-source-6.1 linux-doc-6.1 python3.11-doc
    for f in *.deb; do dpkg -x $f /tmp/deb/root; done; cd -
    nohup nice python tools/build_text_corpus.py --preset debian_mix --debian-root /tmp/deb/root > /tmp/debian_mix.log &   # ~41 min

(--debian-root defaults to /, where `apt-get install` puts the three packages.) A document is one file: a page of
python3.11-doc (`*.rst.txt`), a gzipped file of linux-doc-6.1's Documentation/ (unzipped), a file of the kernel tarball
of linux-source-6.1. A file is skipped when it is a picture in text (.svg, .ppm), holds a NUL byte (binary), is not
valid UTF-8, has fewer than 512 or more than 1,000,000 characters (the longer ones are generated register headers),
has more than 40 `0x..` literals per 1000 characters (firmware and lookup tables), has at least 32,000 characters of
which 75% of the lines are `#define`s (register dumps), or repeats a file kept before, byte for byte (the packages are
read in the order above, so the kernel tarball's copy of Documentation/ falls out). manifest.json counts each reason.
Kinds: c_source (a .c or .h file of the tarball), kernel_doc (linux-doc-6.1), python_doc, kernel_other (the rest of
the tarball: Kconfig, Makefiles, assembly, device trees, scripts, JSON tables, ...).

The BPE is trained on the first --bpe-sample-chars characters of the documents of fewer than --heldout-min-chars
(100,000) characters in the seeded order (documentation pages first, then kernel files, each shuffled by a seeded hash
of the name), as the previous build did (so its BPE: its draw of 32 comes out again). Every document is tokenized once.

Held-out documents. No held-out document is in the BPE's sample; the documents outside it are the ones of at least
100,000 characters and the kernel files past the sample's end. --heldout-strata draws, for each stratum
`kind:number:min_tokens` in turn, its number (random.Random(seed).sample of the sorted names) among those documents of
its kind and length not drawn before; `any` draws among all of at least 100,000 characters, as the previous build drew
its 32. Documents reaching each horizon (the BPE's tokens; 32 x the training length 256, 512, 1024, 2048):

                  documents    tokens   >= 8,192  16,384  32,768  65,536
    c_source         50,736   286.4 M      9,324   3,902   1,132     263
    kernel_doc        7,952    10.2 M        129      33       8       2
    python_doc          469     2.7 M        104      42       4       0
    kernel_other      9,767    27.4 M        638     217      56      13

so each horizon is served by: 8,192 (T=256) and 16,384 (T=512): all three kinds, plenty; 32,768: C, a few of the
documentation; 65,536 (T=2048): C sources (and 2 kernel pages), no Python page. The default strata
`any:32:65536,kernel_doc:13:16384,python_doc:16:16384,c_source:16:16384` give 77 documents:
- the previous build's 32 (`any`, >= 65,536 tokens, drawn exactly as before: same BPE, candidates and seed, so the same
  files as the committed position_85m results; 31 C files and one perf PMU-event JSON table, kind kernel_other),
  whose near-copies (e.g. include/uapi/linux/bpf.h of tools/include/uapi/linux/bpf.h) are now dropped from training;
- kernel_doc 13 and python_doc 16: every documentation page outside the BPE's sample (those of >= 100,000
  characters; the shorter ones all trained the BPE), 26,218-78,028 and 23,083-51,317 tokens;
- c_source 16 of >= 16,384 tokens outside the BPE's sample: C files of ordinary length for the T <= 512 horizons.
So the evaluation to 8,192 or 16,384 positions has all 77 documents of the three kinds, the one to 65,536 the 32 long
ones and the two kernel pages that reach it (34; 49 reach 32,768). heldout.jsonl holds {"text", "name" (package/path),
"kind", "tokens"} per line; the evaluation reads "text".

Contamination check. A shingle is a run of 8 consecutive content lines (lines with a letter, digit or `_`; whitespace
collapsed, so re-indented copies match; blank and brace-only lines skipped), hashed (blake2b, 64 bits); a document's
overlap with another is the share of its distinct shingles found in that one. Lines, not characters: near-copies in
these packages are copied files and forks whose lines stay intact, and line hashing is fast (all ~69,000 documents, ~22
million shingles, in ~1 minute; 8 lines make boilerplate such as license headers a tiny share of a long document). A
training document is a near-copy of a held-out one, and is dropped from training (the held-out document stays), when
(a) one's tree path ends with the other's (include/uapi/linux/x.h and tools/include/uapi/linux/x.h; linux-doc's pages
under Documentation/ and the tarball's Documentation/ copies) or (b) its overlap is at least --near-copy (0.05). The
threshold comes from the best overlap of 500 eligible documents of >= 8,192 tokens with any other document: median
0.0015, 75% below 0.016 (license headers, idioms), 90% below 0.12, 72 of the 500 above 0.05: forks and variants
(sibling drivers, the radeon/amdgpu si_dpm.c, tools/ copies, pinctrl tables at 0.9). There is no gap, so the threshold
sits about 3 x above the boilerplate level. manifest.json's `check` holds, per held-out document, its best training
document and overlap before and after the removal, the share of its shingles found anywhere in training (`coverage`),
the training documents of the same file name, each dropped document and why, the best overlap between held-out
documents, and that distribution. Found: 14 near-copies of 9 held-out documents, all dropped from training (none was in
the BPE's sample): include/uapi/linux/bpf.h (path and 0.996, of the held-out tools/ copy), the cascadelakex twin of the
held-out skylakex JSON (0.991), dcn314's display_mode_vba (0.92) and dcn30's (0.28), three pinctrl tables of R-Car
(0.68-0.90) and two more (0.05-0.07), radeon's si_dpm.c (0.29), the navi10 and vega10 enum headers (0.20, 0.10),
rt61pci.c (0.13) and cxgb4_ethtool.c (0.06). After the removal the largest overlap is 0.048 (rtw8822c.c with
rtw8822b.c), the largest coverage 0.067 (ath11k/wmi.h); 51 of the 77 have an overlap below 0.005. Two held-out files
overlap each other (pfc-r8a77951.c, pfc-r8a77990.c: 0.10 and 0.13, both of the previous 32).

    python tools/build_text_corpus.py check --corpus data/debian_mix [--rows rows256] [--list results/corpus/debian_mix_heldout.json]

re-runs the check on an unpacked corpus: the training documents are its packed rows decoded (split at each EOS and
where each batch of packed documents begins; names from train_names.txt), or train/ when it has the text; it exits 1
if a held-out document has a near-copy in them or differs from the committed list (name, sha256).

The training documents are all the other documents (less the near-copies) in a seeded order of all packages mixed (so
that any part of the rows is a sample of all), up to --train-tokens (default 400,000,000: what the T=2048 runs of issue
41 want, ~390 M; the packages hold fewer, so all are used). Under --out (default data/debian_mix) it writes

    parts/rows2048-000.u16.xz ...  the training documents tokenized and packed into rows of --block-size tokens exactly
                                as lengen.data.packed_text_dataset packs them (EOS after each document, 10,000 documents
                                packed together, the rest of each batch dropped), little-endian uint16, xz preset 9, each
                                part at most --part-mib MiB (so that each travels with one command to the GPU machine)
    parts/heldout.jsonl.xz      the held-out documents
    parts/train_names.txt.xz    the training documents' names, in the rows' order (for `check`)
    parts/tokenizer/            the BPE (`pretrained_tokenizer`), `<|endoftext|>` as BOS/EOS/PAD
    parts/manifest.json         files kept and skipped, the length table, held-out documents, the check, tokens, parts,
                                times
    results/corpus/debian_mix_heldout.json   (--heldout-list; committed) the held-out list without texts: per document
                                name, kind, tokens, characters, sha256, its best training overlap after the removal; the
                                packages' versions, seed, strata, threshold, dropped documents, the tokenizer's sha256
    (--text-parts: also parts/train-000.txt.xz ..., the training text, each document ended by a NUL byte, for `unpack
    --pack-rows`; off by default: 6 more parts that no run needs, and ~35 minutes of xz)

and unpacks parts/ into --out as the GPU machine does:

    python tools/build_text_corpus.py unpack --parts /tmp/parts --out data/debian_mix [--rows-block 256 512]

writes rows/rows2048-*.parquet (column `input_ids`, int32 lists: `data.path=data/debian_mix/rows`), for each
--rows-block B those rows cut in 2048/B into rowsB/rowsB-*.parquet (`data.path=data/debian_mix/rowsB`,
`data.block_size=B`: lengen requires every row of a packed data.path to be data.block_size tokens, so each length has
its own folder), heldout.jsonl, train_names.txt, tokenizer/ and manifest.json (and train/ from text parts). It needs
the standard library, numpy and pyarrow (`check` also `tokenizers`).

Measured on this 2-core machine with the defaults (seed 0, linux-source-6.1 6.1.192-3, linux-doc-6.1 6.1.192-3,
python3.11-doc 3.11.2-6+deb12u9; manifest.json has the rest):
- files kept: python3.11-doc 469 of 497, linux-doc-6.1 7,952 of 8,849, linux-source-6.1 60,503 of 78,579 (9,060 tiny,
  8,121 duplicates, 403 hex tables, 316 register dumps, 86 huge, 85 pictures, 3 binary, 2 not UTF-8): 68,924
  documents, 872.8 M characters, 326.7 M tokens (2.67 characters a token).
- BPE: 100.0 M characters (13,290 documents); the previous build's draw of 32 comes out again (67,082 to 312,610 tokens,
  median 92,929, as that build measured).
- held-out: 77 documents (47 c_source, 13 kernel_doc, 16 python_doc, 1 kernel_other) of 17,725 to 312,610 tokens;
  15 MB, 2.2 MiB as xz. All 77 reach 16,384 tokens, 49 reach 32,768, 34 reach 65,536.
- training set: 68,833 documents, 853.8 M characters, 319,800,983 tokens (linux-source-6.1 308.0 M, linux-doc-6.1
  9.7 M, python3.11-doc 2.2 M), 156,183 rows of 2048 tokens (1,249,464 of 256, 624,732 of 512): a T=2048 run of
  2,400 steps of 131,072 tokens (315 M) sees 0.98 of it, one of 1,500 steps (197 M) 0.61.
- row parts: 23.1 x 5 + 13.6 = 129.0 MiB (0.42 bytes a token), 6 parts; with heldout.jsonl.xz (2.2 MiB), tokenizer/
  (3.4 MiB), manifest.json (0.1 MiB); train_names.txt.xz (0.5 MiB) only `check` needs.
- build steps: read 55 s, BPE 101 s, tokenizing every document 1,153 s (other work shared the 2 cores), shingles 36 s,
  check 46 s, distribution 11 s, packing 2 s, xz of the rows 908 s, unpack 35 s; in all ~41 minutes.
- unpack of the 6 row parts with --rows-block 256 512: 42 s (278 MB of parquet a length); `check` of the decoded rows:
  passed in 184 s, 3.7 GB (68,830 documents: the 3 that packing dropped whole at the ends of batches are not in them).
"""
import argparse, collections, gzip, hashlib, json, lzma, random, re, shutil, sys, tarfile, time
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
DOC_END = "\0"              # ends each document of a training text part (no kept document holds a NUL byte)
XZ_PRESET = 9
XZ_MARGIN = 1 << 20         # bytes of a part still to come when the xz encoder is flushed (its look-ahead, measured < 0.1 MiB)
ROW_FILTERS = None          # the xz filters of the row parts (None: preset 9)
ENCODE_BATCH = 256          # documents tokenized in one call
PACK_BATCH_DOCS = 10_000    # documents packed together (lengen.data.packed_text_dataset's pack_batch_docs)
TEXT_PARTS = "train-{:03d}.txt.xz"     # the parts of the training text
ROW_PARTS = "rows{block}-{{:03d}}.u16.xz"   # the parts of the packed rows: tokens as little-endian uint16
ROW_PART = re.compile(r"rows(\d+)-\d+\.u16\.xz")
TRAIN_NAMES = "train_names.txt"        # the training documents' names, in the order of the rows
TRAIN_TOKENS = 400_000_000  # debian_mix's default --train-tokens (all the documents hold fewer)
KINDS = ("c_source", "kernel_doc", "python_doc", "kernel_other")   # the kinds of documents (doc_kind); a stratum of `any` draws among all
HORIZONS = (8_192, 16_384, 32_768, 65_536)          # 32 times the training lengths 256, 512, 1024, 2048
HELDOUT_STRATA = "any:32:65536,kernel_doc:13:16384,python_doc:16:16384,c_source:16:16384"
HELDOUT_LIST = "results/corpus/debian_mix_heldout.json"   # the committed list of the held-out documents (no texts)
SHINGLE_LINES = 8           # consecutive content lines of a shingle (the contamination check)
SHINGLE_MULT = 0x9E3779B97F4A7C15
CONTENT_LINE = re.compile(r"^.*\w.*$", re.M)        # a line with a letter, digit or _
NEAR_COPY = 0.05            # a training document holding this share of a held-out document's shingles is a near-copy (docstring)
OVERLAP_SAMPLE = 500        # eligible documents of >= 8,192 tokens whose best overlap measures the distribution the threshold is set from


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


def package_versions(root: Path) -> dict[str, str|None]:
    "The Debian version of each package, from the first line of its changelog.Debian.gz (None if it is not there)."
    out = {}
    for package in PACKAGES:
        p = root/"usr/share/doc"/package/"changelog.Debian.gz"
        out[package] = re.search(r"\((.*?)\)", gzip.open(p, "rt").readline())[1] if p.is_file() else None
    return out


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


def doc_kind(name: str) -> str:
    "c_source (a .c or .h file of the kernel tarball), kernel_doc (a file of linux-doc-6.1), python_doc (a page of python3.11-doc), kernel_other (another file of the tarball)."
    if name.startswith("python3.11-doc/"): return "python_doc"
    if name.startswith("linux-doc-6.1/"): return "kernel_doc"
    return "c_source" if name.endswith((".c", ".h")) else "kernel_other"


def tree_path(name: str) -> str:
    "A document's path in its source tree: the kernel tarball's without its top folder, linux-doc-6.1's under Documentation/ (as in the tarball)."
    package, path = name.split("/", 1)
    return f"Documentation/{path}" if package == "linux-doc-6.1" else path


def seeded_order(names, # document names
                 seed: int) -> list[str]:
    "`names` in the seeded order: documentation pages first, then the kernel's files, each group shuffled by a hash of the name."
    return sorted(names, key=lambda k: (k.startswith("linux-source"), hashlib.sha1(f"{seed}/{k}".encode()).digest()))


def mixed_order(names, seed: int) -> list[str]:
    "`names` shuffled by a seeded hash of the name, all packages together (so that any part of the training rows is a sample of all)."
    return sorted(names, key=lambda k: hashlib.sha1(f"{seed}/{k}".encode()).digest())


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


def tokenize_documents(tok, # a `tokenizers.Tokenizer`
                       texts: list[str]) -> list:
    "Each text's tokens (no special tokens) as a uint16 array, tokenized on all cores; progress printed."
    import numpy as np
    out, t, step = [], time.time(), max(1, len(texts) // 20)
    for i in range(0, len(texts), ENCODE_BATCH):
        out += [np.array(e.ids, dtype=np.uint16) for e in tok.encode_batch(texts[i:i + ENCODE_BATCH], add_special_tokens=False)]
        if (i // ENCODE_BATCH) % max(1, step // ENCODE_BATCH) == 0:
            print(f"build_text_corpus: tokenized {len(out)} of {len(texts)} documents in {time.time() - t:.0f} s", flush=True)
    return out


def length_table(tokens: dict[str, int]) -> dict[str, dict[str, int]]:
    "For each kind of document, how many there are, their tokens, and how many reach each horizon (tokens)."
    table = {kind: {"documents": 0, "tokens": 0, **{str(h): 0 for h in HORIZONS}} for kind in KINDS}
    for k, n in tokens.items():
        row = table[doc_kind(k)]
        row["documents"] += 1; row["tokens"] += n
        for h in HORIZONS: row[str(h)] += n >= h
    return table


def parse_strata(spec: str) -> list[tuple[str, int, int]]:
    "`kind:documents:min_tokens,...` as a list of (kind, documents, min_tokens)."
    strata = []
    for item in spec.split(","):
        kind, n, min_tokens = item.split(":")
        if kind not in ("any", *KINDS): raise SystemExit(f"build_text_corpus: --heldout-strata: unknown kind {kind!r} (any, {', '.join(KINDS)})")
        strata.append((kind, int(n), int(min_tokens)))
    return strata


def draw_heldout(tokens: dict[str, int], chars: dict[str, int], # every document's tokens and characters
                 strata: list[tuple[str, int, int]], eligible: set[str], # the documents outside the BPE's sample
                 min_chars: int, seed: int) -> dict[str, str]:
    """The held-out documents and their kinds: for each stratum (kind, number, min_tokens), its number drawn (seeded, as
    random.Random(seed).sample of the sorted names) among the `eligible` documents of its kind (`any`: of all kinds and
    at least `min_chars` characters, the previous build's draw) and length not drawn before."""
    held = {}
    for kind, n, min_tokens in strata:
        pool = sorted(k for k in eligible if tokens[k] >= min_tokens and k not in held
                      and (doc_kind(k) == kind or kind == "any" and chars[k] >= min_chars))
        if len(pool) < n: raise SystemExit(f"build_text_corpus: only {len(pool)} {kind} documents outside the BPE's sample have >= {min_tokens} tokens, fewer than {n}")
        held.update({k: doc_kind(k) for k in sorted(random.Random(seed).sample(pool, n))})
    return held


def shingles(text: str):
    """The document's distinct shingles as sorted uint64 hashes: each run of SHINGLE_LINES consecutive content lines
    (lines holding a letter, digit or `_`; whitespace collapsed, so re-indenting keeps them; blank and brace-only lines left out)."""
    import numpy as np
    lines = [" ".join(line.split()) for line in CONTENT_LINE.findall(text)]
    n = len(lines) - SHINGLE_LINES + 1
    if n <= 0: return np.zeros(0, np.uint64)
    h = np.fromiter((int.from_bytes(hashlib.blake2b(line.encode(), digest_size=8).digest(), "little") for line in lines), np.uint64, len(lines))
    s = np.zeros(n, np.uint64)
    for j in range(SHINGLE_LINES): s = s * np.uint64(SHINGLE_MULT) + h[j:j + n]   # wraps modulo 2**64
    return np.unique(s)


def shingle_index(texts) -> tuple:
    "(every shingle of `texts`, the index of its text): the training side of `overlaps`."
    import numpy as np
    sh = [shingles(t) for t in texts]
    return np.concatenate(sh or [np.zeros(0, np.uint64)]), np.repeat(np.arange(len(sh), dtype=np.int32), [len(s) for s in sh])


def overlaps(queries: list, # each held-out document's shingles (`shingles`)
             index: tuple, # the training documents' shingles (`shingle_index`)
             n_docs: int) -> tuple:
    "For each (held-out document i, training document j) sharing shingles: arrays i, j and how many they share."
    import numpy as np
    if not queries: return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    q = np.concatenate(queries); qi = np.repeat(np.arange(len(queries)), [len(s) for s in queries])
    order = np.argsort(q, kind="stable"); q, qi = q[order], qi[order]
    d, dj = index
    hit = np.isin(d, q); d, dj = d[hit], dj[hit]
    lo, reps = np.searchsorted(q, d, "left"), np.searchsorted(q, d, "right") - np.searchsorted(q, d, "left")
    at = np.repeat(lo - (np.cumsum(reps) - reps), reps) + np.arange(reps.sum())   # each hit with each held-out doc holding it
    key, count = np.unique(qi[at].astype(np.int64) * n_docs + np.repeat(dj, reps), return_counts=True)
    return key // n_docs, key % n_docs, count


def contamination(held: list[str], # held-out names
                  held_texts: list[str], train: list[str], # training names, in the order of `index`
                  index: tuple, threshold: float, dropped: set[int] = frozenset()) -> dict[str, dict]:
    """Per held-out document: its shingles, the training document sharing most of them (`best`) and that share (`overlap`),
    the share found anywhere in training (`coverage`), the training documents of the same tree path tail (`same_path`: one
    path ends with the other) or at least `threshold` overlap (`near_copies`), and of the same file name (`same_name`: how
    many, their largest overlap); the training documents of index `dropped` left out."""
    import numpy as np
    qs = [shingles(t) for t in held_texts]
    i, j, count = overlaps(qs, index, len(train))
    keep = ~np.isin(j, np.fromiter(dropped, np.int64, len(dropped)))
    i, j, count = i[keep], j[keep], count[keep]
    d, dj = index
    seen = np.isin(np.concatenate(qs), d[~np.isin(dj, np.fromiter(dropped, np.int64, len(dropped)))]) if len(qs) else np.zeros(0, bool)
    starts = np.cumsum([0] + [len(s) for s in qs])
    by_name = collections.defaultdict(list)
    for t, k in enumerate(train):
        if t not in dropped: by_name[k.rsplit("/", 1)[-1]].append(t)
    report = {}
    for h, (k, s) in enumerate(zip(held, qs)):
        mine = i == h
        share = dict(zip(j[mine].tolist(), (count[mine] / max(1, len(s))).tolist()))
        best = max(share, key=share.get) if share else None
        p = tree_path(k)
        same_name = by_name.get(k.rsplit("/", 1)[-1], [])
        same_path = [t for t in same_name if (q := tree_path(train[t])) == p or q.endswith("/" + p) or p.endswith("/" + q)]
        report[k] = {"shingles": len(s), "best": None if best is None else train[best], "overlap": round(share.get(best, 0.0), 4),
                     "coverage": round(float(seen[starts[h]:starts[h + 1]].mean()) if len(s) else 0.0, 4),
                     "near_copies": {train[t]: round(v, 4) for t, v in sorted(share.items(), key=lambda tv: train[tv[0]]) if v >= threshold},
                     "same_path": {train[t]: round(share.get(t, 0.0), 4) for t in sorted(same_path, key=train.__getitem__)},
                     "same_name": {"documents": len(same_name), "overlap": round(max([share.get(t, 0.0) for t in same_name], default=0.0), 4)}}
    return report


def heldout_mutual(held: list[str], texts: list[str]) -> dict[str, dict]:
    "Per held-out document, the other held-out document sharing most of its shingles (`best`) and that share (`overlap`)."
    import numpy as np
    qs = [shingles(t) for t in texts]
    i, j, count = overlaps(qs, shingle_index(texts), len(held))
    out = {k: {"best": None, "overlap": 0.0} for k in held}
    for h, d, c in zip(i.tolist(), j.tolist(), count.tolist()):
        if h != d and c / max(1, len(qs[h])) > out[held[h]]["overlap"]: out[held[h]] = {"best": held[d], "overlap": round(c / max(1, len(qs[h])), 4)}
    return out


def overlap_distribution(sample: list[str], texts: list[str], names: list[str], index: tuple) -> dict:
    "Quantiles and a histogram of each sampled document's best overlap with another document of `index` (`names`, same order)."
    import numpy as np
    qs = [shingles(t) for t in texts]
    i, j, count = overlaps(qs, index, len(names))
    at = {k: n for n, k in enumerate(names)}
    best = np.zeros(len(sample))
    for h, d, c in zip(i.tolist(), j.tolist(), count.tolist()):
        if at.get(sample[h]) != d: best[h] = max(best[h], c / max(1, len(qs[h])))
    if not sample: return {"documents": 0}
    edges = [0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0001]
    return {"documents": len(sample), "quantiles": {str(q): round(float(np.quantile(best, q)), 4) for q in (0.5, 0.75, 0.9, 0.95, 0.99)},
            "histogram": {f"{lo}-{min(hi, 1)}": int(n) for lo, hi, n in zip(edges, edges[1:], np.histogram(best, edges)[0])}}


def pack_token_rows(ids: list, # each document's tokens (uint16 arrays), in the training order
                    eos: int, block_size: int, batch_docs: int = PACK_BATCH_DOCS) -> tuple:
    """(the rows, a uint16 array of `block_size` columns; the first row of each batch) packed as lengen.data.packed_text_dataset
    packs them: EOS after each document, `batch_docs` documents packed together, the rest of each batch dropped."""
    import numpy as np
    end, rows, firsts = np.array([eos], np.uint16), [], []
    for i in range(0, len(ids), batch_docs):
        stream = np.concatenate([x for d in ids[i:i + batch_docs] for x in (d, end)])
        firsts.append(sum(len(r) for r in rows))
        rows.append(stream[:len(stream) // block_size * block_size].reshape(-1, block_size))
    return np.concatenate(rows), firsts


def pack_rows(texts: list[str], tok, # the training documents, in order; a `tokenizers.Tokenizer`
              block_size: int, batch_docs: int = PACK_BATCH_DOCS):
    """The documents tokenized (all cores) and packed into rows of `block_size` tokens, an int32 array, as
    lengen.data.packed_text_dataset packs them (EOS after each document, `batch_docs` documents packed together, the
    rest of each batch dropped)."""
    import numpy as np
    eos, rows = np.array([tok.token_to_id(EOT)]), []
    for i in range(0, len(texts), batch_docs):
        ids = np.concatenate([np.concatenate([e.ids, eos]) for e in tok.encode_batch(texts[i:i + batch_docs], add_special_tokens=False)])
        rows.append(ids[:len(ids) // block_size * block_size].astype(np.int32).reshape(-1, block_size))
    return np.concatenate(rows)


def write_xz_parts(chunks, # the bytes to write, in order; a part never splits one
                   folder: Path, pattern: str, # the name of part i is pattern.format(i)
                   part_mib: float, filters=None) -> list[str]:
    "Write `chunks` as xz parts of at most `part_mib` MiB each (xz preset 9, or `filters`); their names."
    limit, names, chunks = int(part_mib * (1 << 20)), [], iter(chunks)
    margin = min(XZ_MARGIN, limit // 4)
    chunk = next(chunks, None)
    while chunk is not None:
        path, size = folder/pattern.format(len(names)), 0
        comp = lzma.LZMACompressor(filters=filters) if filters else lzma.LZMACompressor(preset=XZ_PRESET)
        with open(path, "wb") as f:
            while chunk is not None and size < limit - margin:
                size += f.write(comp.compress(chunk))
                chunk = next(chunks, None)
            size += f.write(comp.flush())
        if size > limit: raise SystemExit(f"build_text_corpus: {path} has {size} bytes, more than --part-mib; raise XZ_MARGIN")
        print(f"build_text_corpus: wrote {path} ({size / 2**20:.1f} MiB)", flush=True)
        names.append(path.name)
    return names


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


def sha256(text: str) -> str: return hashlib.sha256(text.encode()).hexdigest()


def build_debian_mix(a) -> None:
    "The debian_mix preset (see the docstring): documents, BPE, held-out set, contamination check, row parts, then `unpack` of the parts."
    if a.vocab_size > 1 << 16: raise SystemExit("build_text_corpus: the row parts hold uint16 tokens; --vocab-size must be at most 65,536")
    out, parts, seconds, strata = Path(a.out), Path(a.out)/"parts", {}, parse_strata(a.heldout_strata)
    shutil.rmtree(parts, ignore_errors=True); parts.mkdir(parents=True)
    docs, files = timed(seconds, "read", read_documents, Path(a.debian_root))
    versions = package_versions(Path(a.debian_root))
    long = {k for k, v in docs.items() if len(v) >= a.heldout_min_chars}   # never in the BPE's sample
    bpe_names = first_chars(seeded_order(set(docs) - long, a.seed), docs, a.bpe_sample_chars)
    eligible = set(docs) - set(bpe_names)   # the documents that may be held out
    tok = timed(seconds, "bpe", train_bpe, [docs[k] for k in bpe_names], a.vocab_size)
    tok.save_pretrained(str(parts/"tokenizer"))
    names = sorted(docs)
    ids = dict(zip(names, timed(seconds, "tokenize", tokenize_documents, tok.backend_tokenizer, [docs[k] for k in names])))
    tokens = {k: len(v) for k, v in ids.items()}
    lengths = length_table(tokens)
    print("build_text_corpus: documents reaching each horizon:", json.dumps(lengths), flush=True)
    held = draw_heldout(tokens, {k: len(v) for k, v in docs.items()}, strata, eligible, a.heldout_min_chars, a.seed)
    # the contamination check: the held-out documents against every other document, near-copies dropped from training
    pool = mixed_order(set(docs) - set(held), a.seed)
    index = timed(seconds, "shingles", shingle_index, [docs[k] for k in pool])
    before = timed(seconds, "check", contamination, list(held), [docs[k] for k in held], pool, index, a.near_copy)
    wide = sorted(k for k in eligible if tokens[k] >= HORIZONS[0] and k not in held)   # the threshold's reference: documents like the held-out ones
    sample = sorted(random.Random(a.seed).sample(wide, min(OVERLAP_SAMPLE, len(wide))))
    distribution = timed(seconds, "overlap_distribution", overlap_distribution, sample, [docs[k] for k in sample], pool, index)
    print("build_text_corpus: best overlaps of", json.dumps(distribution), flush=True)
    drop, in_bpe = {}, set(bpe_names)
    for k, r in before.items():
        for why in ("same_path", "near_copies"):
            for t, v in r[why].items():
                d = drop.setdefault(t, {"heldout": k, "overlap": v, "why": [], "in_bpe_sample": t in in_bpe})
                if d["heldout"] == k: d["why"].append(why)
    position = {k: n for n, k in enumerate(pool)}
    after = contamination(list(held), [docs[k] for k in held], pool, index, a.near_copy, {position[t] for t in drop})
    mutual = heldout_mutual(list(held), [docs[k] for k in held])
    del index
    failed = [k for k, r in after.items() if r["near_copies"] or r["same_path"]]
    if failed: raise SystemExit(f"build_text_corpus: near-copies left after the removal: {failed}")
    # the training documents: the rest in the mixed order, up to --train-tokens
    pool = [k for k in pool if k not in drop]
    available = sum(tokens[k] for k in pool)
    train, total = [], 0
    for k in pool:
        if total >= a.train_tokens: break
        train.append(k); total += tokens[k]
    if total < a.train_tokens: print(f"build_text_corpus: the documents hold {total:,} training tokens, fewer than --train-tokens: all are used", flush=True)
    eos = tok.backend_tokenizer.token_to_id(EOT)
    rows, batch_first_rows = timed(seconds, "pack_rows", pack_token_rows, [ids[k] for k in train], eos, a.block_size, PACK_BATCH_DOCS)
    del ids
    row_parts = timed(seconds, "xz_rows", write_xz_parts, (rows[r:r + 64].astype("<u2").tobytes() for r in range(0, len(rows), 64)),
                      parts, ROW_PARTS.format(block=a.block_size), a.part_mib, ROW_FILTERS)
    text_parts = []
    if a.text_parts:
        text_parts = timed(seconds, "xz_text", write_xz_parts, ((docs[k] + DOC_END).encode() for k in train), parts, TEXT_PARTS, a.part_mib)
    with lzma.open(parts/"heldout.jsonl.xz", "wt", preset=XZ_PRESET) as f:
        f.writelines(json.dumps({"text": docs[k], "name": k, "kind": held[k], "tokens": tokens[k]}) + "\n" for k in held)
    with lzma.open(parts/(TRAIN_NAMES + ".xz"), "wt", preset=XZ_PRESET) as f: f.writelines(k + "\n" for k in train)
    check = {"method": f"shingles of {SHINGLE_LINES} consecutive content lines (whitespace collapsed), blake2b-hashed; a training "
                       "document is a near-copy of a held-out one when it holds at least `threshold` of the held-out document's "
                       "shingles, or when one's tree path ends with the other's", "shingle_lines": SHINGLE_LINES,
             "threshold": a.near_copy, "distribution": distribution, "training_documents_checked": len(position), "dropped": drop,
             "before": before, "after": after, "heldout_mutual": mutual}
    held_docs = {k: {"kind": held[k], "chars": len(docs[k]), "tokens": tokens[k], "sha256": sha256(docs[k])} for k in held}
    manifest = {"preset": "debian_mix", "debian_root": a.debian_root, "packages": versions, "seed": a.seed, "vocab_size": len(tok),
                "tokenizer_sha256": hashlib.sha256((parts/"tokenizer"/"tokenizer.json").read_bytes()).hexdigest(),
                "files": files, "lengths": lengths,
                "bpe_sample": {"docs": len(bpe_names), "chars": sum(len(docs[k]) for k in bpe_names)},
                "heldout": {"docs": len(held), "strata": [dict(kind=k, documents=n, min_tokens=m) for k, n, m in strata],
                            "eligible": len(eligible), "min_chars": a.heldout_min_chars,
                            "pages": held_docs},
                "check": check,
                "train": {"docs": len(train), "chars": sum(len(docs[k]) for k in train), "tokens": total, "tokens_with_eos": total + len(train),
                          "requested_tokens": a.train_tokens, "available_tokens": available,
                          "docs_by_package": by_package(dict.fromkeys(train, 1)), "tokens_by_package": by_package({k: tokens[k] for k in train}),
                          "block_size": a.block_size, "rows": len(rows), "pack_batch_docs": PACK_BATCH_DOCS, "batch_first_rows": batch_first_rows},
                "parts": {p: (parts/p).stat().st_size for p in ["heldout.jsonl.xz", *row_parts, TRAIN_NAMES + ".xz", *text_parts]},
                "seconds": seconds}
    (parts/"manifest.json").write_text(json.dumps(manifest, indent=1))
    write_heldout_list(manifest, Path(a.heldout_list))
    timed(seconds, "unpack", unpack, parts, out)
    (parts/"manifest.json").write_text(json.dumps(manifest, indent=1)); shutil.copy2(parts/"manifest.json", out/"manifest.json")
    mib = lambda names: sum(manifest["parts"][p] for p in names) / 2**20
    print(f"{out}: {len(train)} training documents ({total / 1e6:.1f} M tokens of {available / 1e6:.1f} M) in {len(row_parts)} parts "
          f"of {len(rows)} packed rows ({mib(row_parts):.1f} MiB); {len(held)} held-out documents of {min(tokens[k] for k in held)} to "
          f"{max(tokens[k] for k in held)} tokens ({mib(['heldout.jsonl.xz']):.1f} MiB), {len(drop)} near-copies dropped from training; "
          f"a {len(tok)}-token BPE; the list in {a.heldout_list}")


def write_heldout_list(manifest: dict, path: Path) -> None:
    "The committed list of the held-out documents (no texts): what identifies each, its check, the packages, seed and threshold."
    after, check = manifest["check"]["after"], manifest["check"]
    out = {"corpus": "debian_mix", "packages": manifest["packages"], "seed": manifest["seed"],
           "tokenizer_sha256": manifest["tokenizer_sha256"], "strata": manifest["heldout"]["strata"], "lengths": manifest["lengths"],
           "check": {"method": check["method"], "threshold": check["threshold"], "distribution": check["distribution"],
                     "training_documents_checked": check["training_documents_checked"],
                     "dropped_from_training": check["dropped"]},
           "train": {k: manifest["train"][k] for k in ("docs", "tokens", "available_tokens", "block_size", "rows")},
           "documents": [{"name": k, **v, "shingles": after[k]["shingles"], "best_train": after[k]["best"], "best_train_overlap": after[k]["overlap"],
                          "train_coverage": after[k]["coverage"], "overlap_before_removal": check["before"][k]["overlap"],
                          "best_heldout": check["heldout_mutual"][k]["best"], "best_heldout_overlap": check["heldout_mutual"][k]["overlap"]}
                         for k, v in manifest["heldout"]["pages"].items()]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")


def unpack(parts: Path, # a folder of parts: train-*.txt.xz, rows*-*.u16.xz, other *.xz files, other files and folders
           out: Path, rows_blocks=()) -> None:
    """The corpus folder from its parts: train-*.txt.xz into out/train/*.parquet (column `text`), rowsB-*.u16.xz into
    out/rows/*.parquet (column `input_ids`, the packed rows of B tokens) and, for each b of `rows_blocks` (divisors of B),
    those rows cut in B/b into out/rows{b}/rows{b}-*.parquet, other *.xz decompressed, the rest copied."""
    import numpy as np, pyarrow as pa, pyarrow.parquet as pq
    out.mkdir(parents=True, exist_ok=True)
    row_parts = [p for p in sorted(parts.iterdir()) if ROW_PART.fullmatch(p.name)]
    for folder in ["rows", *(f"rows{b}" for b in rows_blocks)] if row_parts else []:   # rows of these parts only, one length a folder
        for f in (out/folder).glob("rows*-*.parquet"): f.unlink()
    for p in sorted(parts.iterdir()):
        if p.name.startswith("train-") and p.name.endswith(".txt.xz"):
            texts = lzma.decompress(p.read_bytes()).decode().split(DOC_END)[:-1]
            (out/"train").mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.table({"text": texts}), out/"train"/p.name.replace(".txt.xz", ".parquet"))
        elif m := ROW_PART.fullmatch(p.name):
            block, tokens = int(m[1]), np.frombuffer(lzma.decompress(p.read_bytes()), dtype="<u2")
            for b, folder in [(block, "rows"), *((b, f"rows{b}") for b in rows_blocks)]:
                if block % b: raise SystemExit(f"build_text_corpus: --rows-block {b} does not divide the rows of {p.name} ({block} tokens)")
                (out/folder).mkdir(parents=True, exist_ok=True)
                write_rows(tokens.reshape(-1, b), out/folder/p.name.replace(f"rows{block}", f"rows{b}").replace(".u16.xz", ".parquet"))
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
    p.add_argument("--parts", required=True, help="the folder holding the parts (rows*-*.u16.xz or train-*.txt.xz, heldout.jsonl.xz, tokenizer/, manifest.json)")
    p.add_argument("--out", required=True, help="the corpus folder to write (rows/ or train/, heldout.jsonl, tokenizer/, manifest.json)")
    p.add_argument("--rows-block", type=int, nargs="+", default=[], metavar="B",
                   help="also the packed rows cut into rows of B tokens (B divides their length), in rows{B}/ (data.path=<out>/rows{B}, data.block_size=B)")
    p.add_argument("--pack-rows", type=int, metavar="BLOCK_SIZE", help="then tokenize and pack the training text into rows/ (text parts only)")
    p.add_argument("--time-packing", action="store_true", help="then time lengen's tokenizing and packing of train/")
    a = p.parse_args(argv)
    t = time.time(); unpack(Path(a.parts), Path(a.out), a.rows_block)
    print(f"unpacked {a.parts} into {a.out} in {time.time() - t:.1f} s")
    for folder in sorted(Path(a.out).glob("rows*")):
        import pyarrow.parquet as pq
        files = sorted(folder.glob("*.parquet"))
        print(f"  {folder}: {sum(pq.read_metadata(f).num_rows for f in files):,} rows in {len(files)} files")
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


def training_documents(corpus: Path, manifest: dict, rows: str = "rows"):
    """(name, text) of each training document of an unpacked corpus: its train/ text if there, else its packed rows
    decoded (corpus/`rows`, any cut: they are the same token stream), split at each EOS and where each batch of
    documents begins (what the rows dropped at a batch's end is not there, so neither is it checked)."""
    import numpy as np, pyarrow.parquet as pq
    from tokenizers import Tokenizer
    names = (corpus/TRAIN_NAMES).read_text().splitlines() if (corpus/TRAIN_NAMES).is_file() else None
    name = lambda n: names[n] if names and n < len(names) else f"training document {n}"
    if sorted((corpus/"train").glob("*.parquet")):
        n = 0
        for f in sorted((corpus/"train").glob("*.parquet")):
            for text in pq.read_table(f, columns=["text"])["text"].to_pylist(): yield name(n), text; n += 1
        return
    files = sorted((corpus/rows).glob("*.parquet"))
    if not files: raise SystemExit(f"build_text_corpus check: no training documents in {corpus} (train/*.parquet or {rows}/*.parquet)")
    tok = Tokenizer.from_file(str(corpus/"tokenizer"/"tokenizer.json"))
    eos, t = tok.token_to_id(EOT), manifest["train"]
    stream = np.concatenate([pq.read_table(f)["input_ids"].combine_chunks().flatten().to_numpy() for f in files])
    starts = [r * t["block_size"] for r in t["batch_first_rows"]] + [len(stream)]
    for b, (lo, hi) in enumerate(zip(starts, starts[1:])):
        if lo >= len(stream): break
        seg = stream[lo:min(hi, len(stream))]
        cuts = np.flatnonzero(seg == eos)
        pieces = [seg[x + 1:y] for x, y in zip(np.concatenate([[-1], cuts]), np.concatenate([cuts, [len(seg)]]))]
        pieces = [p for p in pieces if len(p)]
        for i in range(0, len(pieces), ENCODE_BATCH):
            for n, text in enumerate(tok.decode_batch([p.tolist() for p in pieces[i:i + ENCODE_BATCH]]), b * t["pack_batch_docs"] + i):
                yield name(n), text


def check_corpus(corpus: Path, rows: str = "rows", threshold: float|None = None, heldout_list: str|None = None) -> dict:
    "The contamination check of an unpacked corpus (see `check_main`); its report, `failed` listing what did not pass."
    manifest = json.loads((corpus/"manifest.json").read_text())
    threshold = manifest["check"]["threshold"] if threshold is None else threshold
    held = [json.loads(line) for line in (corpus/"heldout.jsonl").read_text().splitlines() if line.strip()]
    t = time.time(); train_names, texts = [], []
    def texts_of():
        for k, text in training_documents(corpus, manifest, rows): train_names.append(k); yield text
    index = shingle_index(texts_of())
    print(f"check: shingles of {len(train_names):,} training documents in {time.time() - t:.0f} s", flush=True)
    report = contamination([h["name"] for h in held], [h["text"] for h in held], train_names, index, threshold)
    failed = {k: "near-copies in training: " + ", ".join(sorted({**r["near_copies"], **r["same_path"]})) for k, r in report.items() if r["near_copies"] or r["same_path"]}
    if heldout_list:
        listed = {d["name"]: d["sha256"] for d in json.loads(Path(heldout_list).read_text())["documents"]}
        here = {h["name"]: sha256(h["text"]) for h in held}
        for k in sorted(set(listed) | set(here)):
            if listed.get(k) != here.get(k): failed[k] = f"not as listed in {heldout_list}" if k in listed else f"not listed in {heldout_list}"
    return {"corpus": str(corpus), "threshold": threshold, "training_documents": len(train_names), "heldout": report, "failed": failed}


def check_main(argv) -> int:
    "The `check` sub-command: exits 1 if a held-out document has a near-copy in the training documents (or differs from the committed list)."
    p = argparse.ArgumentParser(prog="build_text_corpus.py check", description=check_main.__doc__)
    p.add_argument("--corpus", default="data/debian_mix", help="an unpacked corpus: heldout.jsonl, manifest.json, tokenizer/, rows/ (or train/), train_names.txt")
    p.add_argument("--rows", default="rows", help="the folder of its packed rows to decode when it has no train/ (rows, rows256, ...)")
    p.add_argument("--threshold", type=float, help="the overlap of a near-copy (default: the build's, in manifest.json)")
    p.add_argument("--list", default=HELDOUT_LIST, help="the committed list the held-out documents must match (name, sha256); '' for none")
    p.add_argument("--report", help="write the report (JSON) here")
    a = p.parse_args(argv)
    r = check_corpus(Path(a.corpus), a.rows, a.threshold, a.list or None)
    for k, v in r["heldout"].items():
        print(f"{v['overlap']:.4f} {v['coverage']:.4f} {k}  (best: {v['best']})")
    if a.report: Path(a.report).write_text(json.dumps(r, indent=1))
    worst = max(r["heldout"].items(), key=lambda kv: kv[1]["overlap"])
    print(f"check: {len(r['heldout'])} held-out documents against {r['training_documents']:,} training documents; largest overlap "
          f"{worst[1]['overlap']:.4f} ({worst[0]} with {worst[1]['best']}), threshold {r['threshold']}; "
          + (f"FAILED: {json.dumps(r['failed'], indent=1)}" if r["failed"] else "passed"))
    return 1 if r["failed"] else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["unpack"]: unpack_main(argv[1:]); return 0
    if argv[:1] == ["check"]: return check_main(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Sub-commands: `unpack --parts DIR --out DIR [--rows-block B ...]`, `check --corpus DIR` (see above).")
    p.add_argument("--preset", choices=PRESETS, default="python_docs")
    p.add_argument("--source", default=DEFAULT_SOURCE, help="python_docs: the _sources folder of the python3.11-doc HTML")
    p.add_argument("--debian-root", default="/", help="debian_mix: the folder the three packages were unpacked into (dpkg -x)")
    p.add_argument("--out", help="default: data/<preset>")
    p.add_argument("--heldout", type=int, default=32, help="python_docs: long pages kept for evaluation")
    p.add_argument("--heldout-min-chars", type=int, help="documents at least this long can be held out (python_docs: 40,000; debian_mix: 100,000, kept out of the BPE's sample, the `any` stratum's pool)")
    p.add_argument("--heldout-strata", default=HELDOUT_STRATA, help="debian_mix: the held-out documents, kind:number:min_tokens,...")
    p.add_argument("--near-copy", type=float, default=NEAR_COPY, help="debian_mix: a training document holding this share of a held-out one's shingles is dropped")
    p.add_argument("--heldout-list", default=HELDOUT_LIST, help="debian_mix: where to write the committed list of the held-out documents")
    p.add_argument("--vocab-size", type=int, help="python_docs: 4096; debian_mix: 50,277 (GPT-NeoX's)")
    p.add_argument("--bpe-sample-chars", type=int, default=100_000_000, help="debian_mix: characters of the sample the BPE is trained on")
    p.add_argument("--train-tokens", type=int, default=TRAIN_TOKENS, help="debian_mix: tokens of the training documents (at least; all if they hold fewer)")
    p.add_argument("--part-mib", type=float, default=24, help="debian_mix: largest part, MiB")
    p.add_argument("--block-size", type=int, default=2048, help="debian_mix: tokens of a packed row (the runs' data.block_size)")
    p.add_argument("--text-parts", action="store_true", help="debian_mix: also the training text as xz parts (for `unpack --pack-rows`)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    for k, v in PRESETS[a.preset].items():
        if getattr(a, k) is None: setattr(a, k, v)
    {"python_docs": build_python_docs, "debian_mix": build_debian_mix}[a.preset](a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
