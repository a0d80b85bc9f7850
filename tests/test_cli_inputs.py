"""Every console script of settings.ini, given bad arguments: zero, negative, the wrong type, a missing path, a file
where a folder belongs (and a folder where a file belongs). Each must end in one paragraph on stderr (no traceback, no
blank line, ending in a newline, its last line the command's own) and a non-zero exit, before any training or
evaluation: the entry points run in this process (`main(argv)`), on tiny fixtures, offline, in seconds.
`lengen_train`'s numeric fields are taken from the schema itself (`TrainingConfig` and `plugin_sections`), so a field added later, or a plug-in
run feature's, is swept too."""
import configparser, dataclasses, importlib, typing
from pathlib import Path

import pytest

from lengen.config import TrainingConfig, plugin_sections
from lengen.features import run_features
from lengen.experiments.results import fake_result
from lengen.io import call_cli, write_json
from lengen.models.fixtures import tiny_mamba2_run

ROOT = Path(__file__).resolve().parent.parent


def console_scripts() -> dict:
    "settings.ini's console scripts: name -> 'module:function'."
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(ROOT/"settings.ini")
    return dict(s.split("=", 1) for s in cp["DEFAULT"]["console_scripts"].split())


def entry(name:str):
    "The `main(argv)` function of the console script `name`."
    module, fn = console_scripts()[name].split(":")
    return getattr(importlib.import_module(module), fn)


def numeric_fields(cls=None, prefix:str="") -> dict:
    "Every int and float leaf of the schema, plug-in run features' sections included (Optional ones too): dotted key -> int or float."
    if cls is None: return numeric_fields(TrainingConfig) | {k: v for s, c in plugin_sections().items() for k, v in numeric_fields(c, f"{s}.").items()}
    out, hints = {}, typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        t = hints[f.name]
        inner = [a for a in typing.get_args(t) if a is not type(None)]
        base = inner[0] if typing.get_origin(t) is typing.Union and len(inner) == 1 else t
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(default): out |= numeric_fields(type(default), f"{prefix}{f.name}.")
        elif base in (int, float): out[prefix + f.name] = base
    return out


ZERO_OK = {"schedule.warmup_steps", "dataloader_num_workers", "optim.weight_decay", "optim.max_grad_norm", "optim.adam_beta1",
           "optim.adam_beta2", "seed", "data.shuffle_seed", "data.copy_task.eval_seed", "dropout.rate", "residual_dropout.rate",
           "attention_dropout.rate", "eval_extra.window",   # fields where 0 means something (no warm-up, no decay, no clipping, seed 0, no dropout, no window pass)
           *(f.key for f in run_features() if f.off == "0")}   # a run feature that 0 switches off

TRAIN = ["+experiment=copy_demo", "dry_run=true"]   # refused at validation; accepted, it would only print the config


def train_cases() -> list:
    fields = numeric_fields()
    assert {"optim.lr", "seed", "max_steps", "eval_steps", "swa.rope_theta", "data.copy_task.eval_seed"} <= set(fields)
    cases = [("lengen_train", [*TRAIN, f"{k}=-1"], f"`{k}`") for k in fields]
    cases += [("lengen_train", [*TRAIN, f"{k}=0"], f"`{k}`") for k in fields if k not in ZERO_OK]
    typed = ["max_steps", "seed", "eval_steps", "optim.lr", "swa.rope_theta", "data.copy_task.eval_lengths"]   # Hydra types every field alike
    cases += [("lengen_train", [*TRAIN, f"{k}=abc"], f"`{k}`") for k in typed]
    cases += [("lengen_train", [*TRAIN, f"{k}=1.5"], f"`{k}`") for k in ("max_steps", "seed", "per_device_train_batch_size")]
    run = ["+experiment=copy_demo", "max_steps=1", "output_dir={tmp}/train_out"]   # bounded, were a case accepted
    text = ["data.synthetic=''", "data.padded_examples=false", "data.pack_examples=false"]
    cases += [("lengen_train", argv, field) for argv, field in [
        (["+experiment=copy_demo", "output_dir={afile}"], "`output_dir`"), ([*TRAIN, "output_dir="], "`output_dir`"), (["+experiment=copy_demo", "output_dir={afile}/run"], "`output_dir`"),
        ([*run, *text, "data.path={missing}"], "`data.path`"), ([*run, *text, "data.path={afile}"], "`data.path`"),
        ([*run, "model_name_or_path={missing}"], "`model_name_or_path`"), ([*run, "model_name_or_path={afile}"], "`model_name_or_path`"),
        ([*run, "pretrained_tokenizer={missing}"], "`pretrained_tokenizer`"), ([*run, "resume_from_checkpoint={missing}"], "`resume_from_checkpoint`"),
        ([*run, "resume_from_checkpoint={afile}"], "`resume_from_checkpoint`"), ([*run, "eval_extra.dataset_file={missing}"], "`eval_extra.dataset_file`"),
        ([*run, "eval_extra.dataset_file={empty_dir}"], "`eval_extra.dataset_file`"), ([*run, "data.val_sets=[{missing}]"], "`data.val_sets`"),
        ([*run, "data.val_sets=[{afile}]"], "`data.val_sets`"), ([*run, "eval_extra.eval_only=true"], "`model_name_or_path`"),
        (["+experiment=copy_demo", "family=smollm3_3b_swa_cpt", *run[1:]], "`family`"),
        (["+experiment=copy_demo", "regularizer=vpad", *run[1:]], "`regularizer`"), (["+experiment=no_such_run"], "no_such_run"),
        (["--cfg", "jobs"], "`--cfg`"), (["+experiment=copy_demo", "max_stepz=3"], "max_stepz"),
        ([*TRAIN, "trace_nonfinite=maybe"], "`trace_nonfinite`"), ([*TRAIN, "trace_nonfinite=true", "compile.cuda_graphs=false", "compile.torch_compile=true"], "`compile.torch_compile`")]]
    return cases


SITES = [("lengen_sites", ["+experiment=copy_demo", a], field) for a, field in [
    ("max_steps=-1", "`max_steps`"), ("optim.lr=0", "`optim.lr`"), ("seed=x", "`seed`"), ("dropout.rate=-0.5", "`dropout.rate`"),
    ("output_dir={afile}", "`output_dir`"), ("data.val_sets=[{missing}]", "`data.val_sets`")]]

BENCH = [("lengen_bench", argv, field) for argv, field in [
    *[(["tiny-mamba2", opt, v], opt) for opt in ("--seq-len", "--batch", "--steps", "--repeats", "--doc-len", "--peak-tflops") for v in ("0", "-64", "x")],
    (["tiny-mamba2", "--warmup", "-1"], "--warmup"), (["tiny-mamba2", "--warmup", "x"], "--warmup"),
    (["--train-loop", "copy_demo", "--steps", "1"], "--steps"), (["--train-loop", "copy_demo", "--set", "optim.lr=-1"], "`optim.lr`"),
    (["tiny-mamba2", "--out", "{empty_dir}"], "--out"), (["tiny-mamba2", "--out", "{afile}/r.json"], "--out"), (["no-such-shape"], "shape"),
    (["tiny-mamba2", "--variants", "frobnicate"], "--variants"), (["--train-loop", "no_such_run"], "no_such_run"), ([], "--train-loop")]]

POSITION = [("lengen_eval_position", argv, field) for argv, field in [
    (["{missing}", "--dataset-file", "{docs}"], "checkpoint"), (["{afile}", "--dataset-file", "{docs}"], "checkpoint"),
    (["{bpe_run}", "--dataset-file", "{missing}"], "--dataset-file"), (["{bpe_run}", "--dataset-file", "{empty_dir}"], "--dataset-file"),
    *[(["{bpe_run}", "--dataset-file", "{docs}", opt, v, "--output-dir", "{tmp}/pos"], opt)
      for opt in ("--max-length", "--batch-size", "--train-length") for v in ("0", "-1", "x")],
    (["{bpe_run}", "--dataset-file", "{docs}", "--output-dir", "{afile}"], "--output-dir"),
    (["{bpe_run}", "--dataset-file", "{docs}", "--max-length", "16", "--device", "tpu", "--output-dir", "{tmp}/pos"], "--device"),
    (["{bpe_run}", "--dataset-file", "{docs}", "--dtype", "int8"], "--dtype"), (["{bpe_run}"], "--dataset-file")]]

COMPARE = [("lengen_compare_position", argv, field) for argv, field in [
    (["{missing}"], "files"), (["{empty_dir}"], "files"), (["{docs}"], "files"), (["{result}", "--labels", "a,b"], "--labels"),
    (["{result}", "--output", "{empty_dir}"], "--output"), (["{result}", "--output", "{afile}/fig.html"], "--output"), ([], "files")]]

COPY = [("lengen_eval_copy", argv, field) for argv, field in [
    (["{missing}"], "checkpoint"), (["{afile}"], "checkpoint"),
    *[(["{copy_run}", "--lengths", "5", opt, v, "--output-dir", "{tmp}/copy"], opt) for opt in ("--samples", "--batch-size") for v in ("0", "-1", "x")],
    *[(["{copy_run}", "--lengths", v, "--output-dir", "{tmp}/copy"], "--lengths") for v in ("0", "-1", "x", "5,-2", "")],
    (["{copy_run}", "--lengths", "5", "--seed", "-1", "--output-dir", "{tmp}/copy"], "--seed"), (["{copy_run}", "--seed", "x"], "--seed"),
    (["{copy_run}", "--lengths", "5", "--output-dir", "{afile}"], "--output-dir"), (["{copy_run}", "--lengths", "5", "--output-dir", "{afile}/x"], "--output-dir"),
    (["{copy_run}", "--lengths", "5", "--device", "tpu", "--output-dir", "{tmp}/copy"], "--device"), (["{copy_run}", "--dtype", "int8"], "--dtype")]]

LM_ARGS = ["--model", "hf", "--model_args", "pretrained={bpe_run},max_length=600", "--tasks", "niah_single_1", "--metadata",
           '{{"max_seq_lengths":[512]}}', "--gen_kwargs", "max_gen_toks=8", "--batch_size", "1", "--device", "cpu", "--output_path", "{tmp}/lm"]

def lm(*replace, extra=()):
    "LM_ARGS with each (option, value) of `replace` set, and `extra` added."
    argv = list(LM_ARGS)
    for opt, value in replace:
        if opt in argv: argv[argv.index(opt) + 1] = value
        else: argv += [opt, value]
    return argv + list(extra)

LM = [("lengen_eval_lm", argv, field) for argv, field in [
    (lm(("--limit", "-1")), "--limit"), (lm(("--limit", "0")), "--limit"), (lm(("--batch_size", "0")), "--batch_size"),
    (lm(("--batch_size", "-4")), "--batch_size"), (lm(("--num_fewshot", "-1")), "--num_fewshot"), (lm(("--max_batch_size", "0")), "--max_batch_size"),
    (lm(("--seed", "-1")), "--seed"), (lm(("--gen_kwargs", "max_gen_toks=0")), "max_gen_toks"), (lm(("--gen_kwargs", "max_gen_toks=-8")), "max_gen_toks"),
    (lm(("--metadata", '{{"max_seq_lengths":[-512]}}')), "max_seq_lengths"), (lm(("--metadata", '{{"max_seq_lengths":[0]}}')), "max_seq_lengths"),
    (lm(("--model_args", "pretrained={bpe_run},max_length=-1")), "max_length"), (lm(("--model_args", "pretrained={missing},max_length=600")), "pretrained"),
    (lm(("--model_args", "pretrained={afile},max_length=600")), "pretrained"), (lm(("--output_path", "{afile}/lm")), "--output_path"),
    (lm(extra=["--haystack-file", "{missing}"]), "--haystack-file"), (lm(extra=["--haystack-file", "{empty_dir}"]), "--haystack-file")]]

HELMET = [("lengen_eval_helmet", argv, "--helmet-src") for argv in (
    ["--helmet-src", "{missing}", "--config", "icl", "--model_name_or_path", "{copy_run}"],
    ["--helmet-src", "{afile}", "--config", "icl", "--model_name_or_path", "{copy_run}"],
    ["--helmet-src", "{empty_dir}", "--config", "icl", "--model_name_or_path", "{missing}", "--output_dir", "{afile}"])]
HELMET += [("lengen_eval_helmet", ["--config", "icl"], "--model_name_or_path")]

ICL = [("lengen_helmet_icl_config", ["--tokenizer", "{bpe_run}", "--output", "{tmp}/icl.yaml", "--input-length", "1024", *argv], field)
       for argv, field in [*[([opt, v], opt) for opt in ("--input-length", "--samples") for v in ("0", "-1", "x")],
                           (["--seed", "-1"], "--seed"), (["--seed", "x"], "--seed"), (["--surplus", "-0.5"], "--surplus"),
                           (["--surplus", "x"], "--surplus"), (["--output", "{empty_dir}"], "--output"), (["--output", "{afile}/x.yaml"], "--output"),
                           (["--helmet-src", "{missing}"], "--helmet-src")]]

EXPORT = [("lengen_export", argv, field) for argv, field in [
    (["{missing}", "{tmp}/rel"], "RUN_OR_CHECKPOINT"), (["{afile}", "{tmp}/rel"], "RUN_OR_CHECKPOINT"), (["{empty_dir}", "{tmp}/rel"], "RUN_OR_CHECKPOINT"),
    (["{copy_run}", "{afile}"], "OUT"), (["{copy_run}", "{afile}/rel"], "OUT"), (["{copy_run}", "{copy_run}"], "OUT"),
    (["{copy_run}", "{tmp}/rel", "--dtype", "int8"], "--dtype"), (["{copy_run}"], "OUT")]]

SWEEP_ARGS = ["fig1_copy_task", "--results-root", "{tmp}/res", "--work-root", "{tmp}/work"]
SWEEP = [("lengen_sweep", [*SWEEP_ARGS, *argv], field) for argv, field in [
    *[([opt, v], opt) for opt in ("--max-parallel", "--time-limit") for v in ("0", "-1", "x")], (["--time-limit", "nan"], "--time-limit"),
    (["--seeds", "-1"], "--seeds"), (["--seeds", "x"], "--seeds"), (["--seeds", ""], "--seeds"), (["--only", ""], "--only"), (["--seeds", "4294967296"], "--seeds"),
    (["--min-left", "-1", "--time-limit", "60"], "--min-left"), (["--min-left", "x"], "--min-left"),
    (["--results-root", "{afile}"], "--results-root"), (["--results-root", "{afile}/res"], "--results-root"), (["--work-root", "{afile}"], "--work-root"),
    (["--only", "nope"], "--only"), (["--max-parallel", "auto"], "--max-parallel")]]   # auto: no GPU here, no peak recorded
SWEEP += [("lengen_sweep", argv, field) for argv, field in [
    (["fig9"], "sweep"), (["fig2_position_loss", "--data-root", "{missing}", "--results-root", "{tmp}/res"], "data.path"),
    (["fig2_position_loss", "--data-root", "{afile}", "--results-root", "{tmp}/res"], "data.path"), ([], "sweeps"),
    *[(["--throughput", "copy_demo", opt, v], opt) for opt in ("--runs", "--steps") for v in ("0", "-1", "x")],
    (["--throughput", "copy_demo", "--out", "{empty_dir}"], "--out"), (["--throughput", "copy_demo", "--out", "{afile}/t.json"], "--out"),
    (["--throughput", "copy_demo", "--set", "optim.lr=-1"], "`optim.lr`")]]

CORPUS_OUT = ["--out", "{tmp}/corpus", "--heldout-list", "{tmp}/heldout.json"]
CORPUS = [("lengen_build_corpus", argv, field) for argv, field in [
    *[([opt, v], opt) for opt in ("--heldout", "--vocab-size", "--bpe-sample-chars", "--train-tokens", "--block-size", "--part-mib") for v in ("0", "-1", "x")],
    (["--seed", "-1"], "--seed"), (["--near-copy", "0"], "--near-copy"), (["--near-copy", "1.5"], "--near-copy"), (["--preset", "pile"], "--preset"),
    (["--source", "{missing}", "--out", "{tmp}/py"], "--source"), (["--source", "{empty_dir}", "--out", "{tmp}/py"], "--source"),
    (["--out", "{afile}"], "--out"), (["--preset", "debian_mix", "--debian-root", "{missing}", *CORPUS_OUT], "--debian-root"),
    (["--preset", "debian_mix", "--debian-root", "{afile}", *CORPUS_OUT], "--debian-root"),
    (["--preset", "debian_mix", "--heldout-strata", "any:32", *CORPUS_OUT], "--heldout-strata"),
    (["--preset", "debian_mix", "--heldout-strata", "fish:1:2", *CORPUS_OUT], "--heldout-strata"),
    (["--preset", "debian_mix", "--vocab-size", "70000", "--debian-root", "{empty_dir}", *CORPUS_OUT], "--vocab-size"),
    (["--preset", "debian_mix", "--out", "{tmp}/corpus", "--heldout-list", "{empty_dir}"], "--heldout-list"),
    (["unpack", "--parts", "{missing}", "--out", "{tmp}/u"], "--parts"), (["unpack", "--parts", "{afile}", "--out", "{tmp}/u"], "--parts"),
    (["unpack", "--parts", "{empty_dir}", "--out", "{afile}"], "--out"), (["unpack", "--parts", "{empty_dir}", "--out", "{tmp}/u", "--rows-block", "0"], "--rows-block"),
    (["unpack", "--parts", "{empty_dir}"], "--out"), (["unpack", "--parts", "{empty_dir}", "--out", "{tmp}/u", "--pack-rows", "64"], "--pack-rows"),
    (["check", "--corpus", "{missing}", "--list", ""], "--corpus"), (["check", "--corpus", "{empty_dir}", "--list", ""], "--corpus"),
    (["check", "--corpus", "{empty_dir}", "--list", "{missing}"], "--list"), (["check", "--corpus", "{empty_dir}", "--threshold", "2"], "--threshold"),
    (["check", "--corpus", "{empty_dir}", "--list", "", "--report", "{empty_dir}"], "--report")]]

CASES = [*train_cases(), *SITES, *BENCH, *POSITION, *COMPARE, *COPY, *LM, *HELMET, *ICL, *EXPORT, *SWEEP, *CORPUS]


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict:
    "The fixtures the arguments name: a file, a missing path, an empty folder, tiny runs, documents, a position result."
    tmp = tmp_path_factory.mktemp("cli")
    (tmp/"afile").write_text("not a folder\n"); (tmp/"empty_dir").mkdir()
    docs = tmp/"docs.jsonl"
    docs.write_text("".join(f'{{"text": "def f{i}(x):\\n    return x + {i} # a short document of python code"}}\n' for i in range(3)))
    result = write_json({"checkpoint": "x", "per_position_ce": [1.0, 2.0], "doc_counts": [1, 1], "train_length": None}, tmp/"result.json")
    return {"tmp": str(tmp), "afile": str(tmp/"afile"), "missing": str(tmp/"missing"), "empty_dir": str(tmp/"empty_dir"),
            "docs": str(docs), "result": str(result), "copy_run": str(tiny_mamba2_run(tmp/"copy_run", vocab="char")),
            "bpe_run": str(tiny_mamba2_run(tmp/"bpe_run"))}


@pytest.fixture(autouse=True)
def nothing_runs(monkeypatch):
    "A case that got through would start a sweep's training processes: they fail the test instead."
    launch, throughput = (importlib.import_module(f"lengen.experiments.{m}") for m in ("launch", "throughput"))
    def started(*a, **k): raise AssertionError("a run was started")
    for module, name in ((launch, "run_one"), (throughput, "concurrent_throughput"), (launch, "launch_sweep")): monkeypatch.setattr(module, name, started)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1"); monkeypatch.setenv("TQDM_DISABLE", "1")


def test_every_console_script_is_swept():
    assert sorted({prog for prog, *_ in CASES}) == sorted(console_scripts())


@pytest.mark.parametrize("prog,argv,field", CASES, ids=[f"{p} {' '.join(a)}"[:120] for p, a, _ in CASES])
def test_refused_in_one_paragraph(prog, argv, field, paths):
    code, err = call_cli(entry(prog), *[a.format(**paths) for a in argv])
    lines = err.rstrip("\n").splitlines()
    assert code not in (0, None), f"exit status {code}: accepted\n{err}"
    assert lines and err.endswith("\n") and "Traceback" not in err, err
    assert all(l.strip() for l in lines), f"more than one paragraph:\n{err}"          # no blank line
    assert lines[-1].startswith(f"{prog}: "), err                                       # the command's own last word
    assert field in err, f"{field!r} not named:\n{err}"


def test_sweep_refuses_runs_that_do_not_fit(paths, monkeypatch):
    """Five shipped copy runs on one GPU of 79.2 GiB (made up, as nvidia-smi would report it), a record of another sweep
    holding the baseline's peak of 20.1 GiB: four at once are refused in one paragraph that names `--max-parallel`, the
    largest count that fits, the peak and its record; auto with no peak recorded is refused, naming the experiments."""
    launch = importlib.import_module("lengen.experiments.launch")
    monkeypatch.setattr(launch, "visible_gpus", lambda: ["0"])
    monkeypatch.setattr(launch, "gpu_memory_gib", lambda gpus: [79.2] * len(gpus))
    tmp = Path(paths["tmp"])
    baseline = "copy_jelassi_mamba2_45m_baseline"   # at its shipped size (`run_shape`): the runs' own
    write_json({**fake_result("copy_full_scale", "baseline", 3), "experiment": baseline, **launch.run_shape(baseline), "peak_gpu_gib": 20.1},
               tmp/"fit_res"/"copy_full_scale"/"baseline-seed3.json")
    def sweep_with(root, *argv):
        return call_cli(entry("lengen_sweep"), "copy_confirmatory", "--seeds", "100", "--results-root", root, "--work-root", tmp/"fit_work", *argv)
    for root, argv, words in [
            (tmp/"fit_res", ["--max-parallel", "4", "--mps"], ["`--max-parallel` = 4. Valid values: a whole number from 1 to 3 here, or auto.",
                                                               "1 GPU of 79.2 GiB holds 3 runs of 22.6 GiB", "20.1 GiB in ",
                                                               "baseline-seed3.json", "none was started"]),
            (tmp/"no_peaks", ["--max-parallel", "auto"], ["`--max-parallel` = 'auto'", "copy_jelassi_mamba2_45m_baseline, ", "give a number"])]:
        code, err = sweep_with(root, *argv)
        assert code == 2 and err.endswith("\n") and err.count("\n") == 1 and err.startswith("lengen_sweep: invalid configuration: "), err
        for w in words: assert w in err, (w, err)
