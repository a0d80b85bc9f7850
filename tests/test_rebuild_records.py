"tools/rebuild_records.py: a copy record rebuilt from what a run prints equals the record the run wrote, to the log's precision."
import importlib.util, json, shutil, tarfile
from pathlib import Path

import pytest

from lengen.eval.copy_task import format_length_table
from lengen.experiments.launch import plan_line, status_line
from lengen.experiments.sequential import run_value

ROOT = Path(__file__).parents[1]
spec = importlib.util.spec_from_file_location("rebuild_records", ROOT/"tools"/"rebuild_records.py")
rebuild_records = importlib.util.module_from_spec(spec); spec.loader.exec_module(rebuild_records)
PROTOCOL = json.loads((ROOT/"results"/"copy_confirmatory"/"protocol.json").read_text())
METRICS = rebuild_records.METRICS
WHY = "a made-up loss"
WAVE9_WHY = "the machine wrote the record, but the sweep script's last call packed another sweep's folder (fixed in d6e05bd)"

def printed(record:dict) -> dict[str, str]:
    "The files a sweep's machine returns for `record`'s run (full_sweep_logs.tgz), as the trainer, the evaluation and the sweep print them."
    curve, folder = record["copy"]["curve"], f"runs/{record['sweep']}/{record['name']}-seed{record['seed']}"
    lines = ["lengen_train: the first step took 5.8 s", "{'loss': '3.409', 'grad_norm': '2.135', 'learning_rate': '4.9e-05', 'epoch': '0.0016'}"]
    for step in sorted({r["step"] for r in curve}):
        ev = {f"copy/{m}@{r['length']}": f"{r[m]:.4g}" for r in curve if r["step"] == step for m in METRICS}
        lines.append(str(ev | {"epoch": f"{step / 31250:.4g}"}))   # the Trainer's log line: each value to 4 significant digits
    lines.append(format_length_table(record["copy"]["results"], record["copy"]["train_range"]))
    summary = {k: record[k] for k in ("train_loss", "rows_per_step", "train_tokens", "peak_gpu_gib", "provenance")}
    summary |= {"global_step": record["steps"], "world_size": 1, "tokens_per_step": None, "train_seconds": record["train_seconds"] + 0.04}
    return {f"{folder}/sweep.log": "\n".join(lines) + "\n", f"{folder}/train_summary.json": json.dumps(summary),
            f"{folder}/lengen_progress.json": json.dumps({"status": "finished", "evaluation_seconds": record.get("evaluation_seconds")}),
            "sweep.log": plan_line(record["concurrent_runs"] * 3 + 1, 0, record["concurrent_runs"], mps=True) + "\n"
                         + status_line({"run": f"{record['sweep']}/{record['name']}-seed{record['seed']}", "status": "done", "seconds": record["wall_seconds"]}) + "\n"}

def current(record:dict) -> dict:
    "`record` as the code that ran wave 9 writes it: with the evaluation's seconds (`evaluation_seconds`, before `copy`)."
    out = {k: v for k, v in record.items() if k not in ("copy", "provenance", "evaluation_seconds")}
    return out | {"evaluation_seconds": {"generation": 117.54, "copy": 21.36}, "copy": record["copy"], "provenance": record["provenance"]}

@pytest.fixture
def written() -> dict:
    "A committed record its run wrote (seed 103's baseline), as wave 9's code writes records."
    return current(json.loads((ROOT/"results"/"copy_confirmatory"/"baseline-seed103.json").read_text()))

@pytest.fixture
def results(tmp_path):
    "Results with one other record of the setting (its shape), not the one to rebuild."
    (tmp_path/"copy_confirmatory").mkdir()
    shutil.copy(ROOT/"results"/"copy_confirmatory"/"baseline-seed102.json", tmp_path/"copy_confirmatory")
    return tmp_path

def test_rebuilt_equals_written(results, written):
    "Every field but the accuracies' last digits comes back; exact match, and so the protocol's metric, exactly."
    files = printed(written)
    test_runs = rebuild_records.finished_runs(files)
    assert test_runs == [("copy_confirmatory", "baseline-seed103")]
    rec = rebuild_records.rebuild(files, *test_runs[0], results, "logs.tgz", WHY)
    assert rec.pop("rebuilt")["setting_from"] == "results/copy_confirmatory/baseline-seed102.json"
    assert list(rec) == list(written)   # the same fields in the same order
    assert {k: v for k, v in rec.items() if k != "copy"} == {k: v for k, v in written.items() if k != "copy"}
    for part, tol in (("curve", 5e-5), ("results", 5e-4)):
        got, want = rec["copy"][part], written["copy"][part]
        assert [(r.get("step"), r["length"], r["n"], r["exact_match_accuracy"]) for r in got] == \
               [(r.get("step"), r["length"], r["n"], r["exact_match_accuracy"]) for r in want]
        assert max(abs(g[m] - w[m]) for g, w in zip(got, want) for m in METRICS[1:]) <= tol
    assert run_value(rec, PROTOCOL) == run_value(written, PROTOCOL) > 0

def test_disagreeing_table_refused(results, written):
    "A final table that does not match the last in-training evaluation (a misread log) stops the rebuild."
    written["copy"]["results"][6]["exact_match_accuracy"] -= 0.01
    with pytest.raises(SystemExit, match="disagree"): rebuild_records.rebuild(printed(written), "copy_confirmatory", "baseline-seed103", results, "logs.tgz", WHY)

def test_misplaced_evaluation_refused(results, written):
    "An evaluation line out of place (a log appended to after a resume, say) is refused by its epoch, not given another step."
    files = printed(written)
    name = "runs/copy_confirmatory/baseline-seed103/sweep.log"
    lines = files[name].splitlines()
    first = next(i for i, l in enumerate(lines) if l.startswith(rebuild_records.EVAL_LINE))
    files[name] = "\n".join(lines[:first] + lines[first + 1:first + 2] + lines[first:first + 1] + lines[first + 2:])   # the first two swapped
    with pytest.raises(SystemExit, match="epoch does not match"): rebuild_records.rebuild(files, "copy_confirmatory", "baseline-seed103", results, "logs.tgz", WHY)

def test_other_layout_refused(results, written):
    "A setting's record of another memory layout than the tree's code does not lend the rebuilt record its shape."
    shape = results/"copy_confirmatory"/"baseline-seed102.json"
    shape.write_text(json.dumps(json.loads(shape.read_text()) | {"memory_layout": 1}))
    with pytest.raises(SystemExit, match="memory layout 1"): rebuild_records.rebuild(printed(written), "copy_confirmatory", "baseline-seed103", results, "logs.tgz", WHY)

def test_committed_records_rebuild_from_their_logs():
    "The records rebuilt from wave 9's committed logs are what the tool makes of those logs today, with the setting record each names (nobody edited them by hand; later seeds do not move them)."
    logs = ROOT/"results"/"gpu"/"copy_wave9_h100_logs.tgz"
    with tarfile.open(logs) as tar: files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    runs = rebuild_records.finished_runs(files)
    assert sorted(runs) == [("copy_confirmatory", f"{n}-seed104") for n in ("baseline", "pre_norm", "weight_decay")]
    for sweep, run in runs:
        committed = json.loads((ROOT/"results"/sweep/f"{run}.json").read_text())
        assert rebuild_records.rebuild(files, sweep, run, ROOT/"results", "results/gpu/copy_wave9_h100_logs.tgz", WAVE9_WHY,
                                       setting_from=ROOT/committed["rebuilt"]["setting_from"]) == committed
