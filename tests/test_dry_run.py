"""`lengen_train ... dry_run=true` refuses what the run would refuse before it trains (`lengen.train.trainer.check_run`),
as the command line reports it: one paragraph naming the field, exit status 2; 0 only when the run would start."""
import os, subprocess, sys
from pathlib import Path

import datasets, torch

from lengen.data import small_bpe_tokenizer

ROOT = Path(__file__).resolve().parent.parent


def dry_run(*overrides, cwd) -> subprocess.CompletedProcess:
    "`lengen_train +experiment=copy_demo dry_run=true OVERRIDES` in a process of its own, offline."
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "WANDB_MODE": "disabled"}
    return subprocess.run([sys.executable, "-m", "lengen.train.cli", "+experiment=copy_demo", "dry_run=true",
                           f"output_dir={cwd/'run'}", *overrides], capture_output=True, text=True, cwd=cwd, env=env)


def test_a_valid_dry_run_prints_the_config(tmp_path):
    r = dry_run(cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("model_name_or_path: ''"), r.stderr[-2000:]
    assert not (tmp_path/"run").exists()   # nothing left behind


def test_swa_on_a_mamba2_is_refused(tmp_path):
    r = dry_run("swa.enabled=true", cwd=tmp_path)
    assert r.returncode == 2 and "`swa.enabled` = True" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


def test_liger_without_cuda_is_refused(tmp_path):
    if torch.cuda.is_available(): return   # a GPU runs Liger's kernels
    r = dry_run("kernels.liger=true", cwd=tmp_path)
    assert r.returncode == 2 and "`kernels.liger` = True" in r.stderr, r.stderr[-2000:]


def test_a_folder_holding_a_finished_run_is_refused_naming_it(tmp_path):
    (tmp_path/"run").mkdir(); (tmp_path/"run"/"train_summary.json").write_text('{"global_step": 7}')
    r = dry_run(cwd=tmp_path)
    assert r.returncode == 2 and "It holds a finished run of 7 steps" in r.stderr, r.stderr[-2000:]


def local_data_run(data_path, tmp_path) -> list[str]:
    "The overrides that make `copy_demo` train on the local text of `data_path`, with a small BPE saved in `tmp_path`."
    small_bpe_tokenizer(256).save_pretrained(str(tmp_path/"tok"))
    return ["data.synthetic=''", f"data.path={data_path}", f"pretrained_tokenizer={tmp_path/'tok'}"]


def test_a_missing_data_folder_is_refused_naming_it(tmp_path):
    r = dry_run(*local_data_run(tmp_path/"no_such_corpus", tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and "`data.path` = " in r.stderr and "no_such_corpus" in r.stderr, r.stderr[-2000:]


def test_a_folder_without_data_files_is_refused_naming_it(tmp_path):
    (tmp_path/"notes").mkdir(); (tmp_path/"notes"/"readme.txt").write_text("no data here")
    r = dry_run(*local_data_run(tmp_path/"notes", tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and "`data.path` = " in r.stderr and "It holds neither" in r.stderr, r.stderr[-2000:]


def test_a_wrong_text_column_is_refused_naming_it(tmp_path):
    datasets.Dataset.from_dict({"body": ["a first document", "a second one"]}).save_to_disk(str(tmp_path/"docs"))
    local = local_data_run(tmp_path/"docs", tmp_path)
    r = dry_run(*local, cwd=tmp_path)
    assert r.returncode == 2 and "`data.text_column` = 'text'" in r.stderr and "body" in r.stderr, r.stderr[-2000:]
    r = dry_run(*local, "data.text_column=body", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]   # the same data, read by their column: the run would start
