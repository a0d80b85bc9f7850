"""The paper-figure notebooks (nbs/paper/fig*.ipynb) run through papermill with train=False: they redraw their
figure and tables from a results folder. Each test writes a few synthetic records (lengen.experiments.results) with
lengen.experiments.sweep's own writer into a temporary folder and passes it in, so no figure test depends on the committed GPU
results; the last test checks those results themselves."""
import json
from pathlib import Path

import papermill as pm
import pytest

from lengen.experiments.bench import run_bench
from lengen.experiments.results import fake_copy_result, fake_position_result
from lengen.experiments.sweep import write_result
from lengen.io import write_json

ROOT = Path(__file__).resolve().parent.parent
EXP = ROOT / "nbs" / "paper"
PLOTLY = "application/vnd.plotly.v1+json"


def run_nb(name, tmp_path, **parameters):
    return pm.execute_notebook(str(EXP / f"{name}.ipynb"), str(tmp_path / f"{name}.out.ipynb"), parameters=parameters,
                               kernel_name="python3", cwd=str(tmp_path), progress_bar=False)


def outputs(nb, kind):
    "Every output payload of MIME type `kind` (or the text of stream outputs for kind='stream')."
    found = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            if kind == "stream" and o.get("output_type") == "stream": found.append(o["text"])
            elif kind in o.get("data", {}): found.append(o["data"][kind])
    return found


def tables(nb):
    "The HTML tables (DataFrames) among the outputs."
    return [h for h in outputs(nb, "text/html") if "<table" in h]


def test_parameters_cells_are_tagged():
    for nb in sorted(EXP.glob("fig*.ipynb")):
        tags = [c.get("metadata", {}).get("tags", []) for c in json.loads(nb.read_text())["cells"]]
        assert sum("parameters" in t for t in tags) == 1, nb.name


def test_fig1_copy_task(tmp_path):
    for seed, acc in [(0, {10: 1.0, 20: 0.9, 40: 0.2}), (1, {10: 0.9, 20: 0.7, 40: 0.0})]:
        write_result(fake_copy_result("fig1_copy_task", "baseline", seed, acc, (1, 20)), tmp_path / "res")
        write_result(fake_copy_result("fig1_copy_task", "vpad", seed, {k: min(1.0, v + 0.1) for k, v in acc.items()}, (1, 20)),
                     tmp_path / "res")
    nb = run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res"))
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert "injected-parameters" in tags[next(i for i, t in enumerate(tags) if "parameters" in t) + 1]
    figs = outputs(nb, PLOTLY)
    assert len(figs) == 1
    traces = figs[0]["data"]
    assert len(traces) == 3 * 5                        # 3 metric panels x (2 settings x (band + mean) + training range)
    means = [t for t in traces if t.get("mode") == "lines+markers"]
    assert [t["name"] for t in means[:2]] == ["baseline (2 seeds)", "vpad (2 seeds)"]
    assert means[0]["x"] == [10, 20, 40] and means[0]["y"] == pytest.approx([0.95, 0.8, 0.1])
    text = "".join(outputs(nb, "stream"))
    assert "4 runs: baseline (2 seeds), vpad (2 seeds)" in text
    html = tables(nb)
    assert len(html) == 2 and "0.800 (0.700–0.900)" in html[0]
    md = "".join(outputs(nb, "text/markdown"))                             # the paragraphs written from the results
    assert "strings of 1–20 letters" in md and "two seeds, evaluated to length 40" in md
    assert "at 40 letters (2× the longest training string) the best is VPAD with 0.20 (baseline 0.10)" in md
    assert (tmp_path / "res" / "fig1_copy_task" / "fig1_copy_task.html").is_file()


def test_fig1_without_results(tmp_path):
    nb = run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "empty"))
    text = "".join(outputs(nb, "stream"))
    assert "No results yet in" in text and "No paper-scale results yet in" in text
    assert outputs(nb, PLOTLY) == []
    assert ["".join(m) for m in outputs(nb, "text/markdown")] == [
        "**The confirmatory study** (protocol: `results/copy_confirmatory/PROTOCOL.md`): no confirmatory look yet. It plans looks "
        "at 8, 16, 24 fresh seeds a setting; look 1 needs 40 runs and 0 are recorded."]


PATH = {"kernels.liger": False, "data.pack_examples": True, "mamba2_fused_kernels": True}
BASE_EM, VPAD_EM = {50: 1.0, 75: 0.5, 100: 0.0, 150: 0.0}, {50: 1.0, 75: 1.0, 100: 0.5, 150: 0.0}   # 0.25 and 0.5625 over 50-150


def write_paper_scale(root, seeds=6, path_of=lambda name, seed: PATH):
    "Paper-scale copy records: every seed of vpad copies further than the baseline's (the same seed), evaluated 3 times in training."
    for seed in range(seeds):
        for name, em in (("baseline", BASE_EM), ("vpad", VPAD_EM)):
            acc = {L: max(0.0, v - seed / 100) if L == 100 else v for L, v in em.items()}   # seeds differ a little
            write_result(fake_copy_result("copy_full_scale", name, seed, {10: 1.0, **acc, 1000: 0.0},
                                          curve={s: acc for s in (16000, 18000, 20000)}, code_path=path_of(name, seed)), root)


def test_fig1_paper_scale(tmp_path):
    write_paper_scale(tmp_path / "res")
    nb = run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res"))
    assert "No results yet in" in "".join(outputs(nb, "stream"))          # the reduced sweep has none
    figs = outputs(nb, PLOTLY)
    assert len(figs) == 3                                                  # (a) the tests, (b) accuracy vs length, (c) during training
    assert "code path: data.pack_examples, mamba2_fused_kernels on; kernels.liger off" in figs[0]["layout"]["title"]["text"].replace("<br>", " ")
    assert len(figs[1]["data"]) == 3 * 5
    summary = json.loads((tmp_path / "res" / "copy_full_scale" / "summary.json").read_text())
    vp = summary["settings"]["vpad"]["AUC50_150"]
    assert vp["n_seeds"] == 6 and vp["test"] == "Welch t, 6 vs 6 seeds"
    assert summary["settings"]["baseline"]["AUC50_150"]["mean"] == 0.25
    assert vp["mean"] == pytest.approx(0.5625 - 0.375 * sum(range(6)) / 6 / 100)   # 100 letters weighs (25/2 + 50/2)/100 in the area
    assert vp["ci_low"] <= vp["mean"] <= vp["ci_high"] and summary["code_path"] == PATH
    md = "".join("".join(m) for m in outputs(nb, "text/markdown"))
    assert "12 completed runs (seeds: the baseline 6, VPAD 6)" in md and "The runs (12: baseline (6 seeds), vpad (6 seeds))" in md
    assert "estimates only (no test)" in md and "* VPAD: 0.55" in md and "(no test)" in md
    assert not any(w in md for w in ("extends", "shortens", "significant", "Holm"))   # a pilot states no test
    assert "no confirmatory look yet" in md
    html = tables(nb)
    assert len(html) == 2 and "p (Holm)" not in html[0] and "diff [CI]" in html[0]
    for f in ("copy_full_scale.html", "copy_full_scale_training.html", "copy_full_scale_tests.html"):
        assert (tmp_path / "res" / "copy_full_scale" / f).is_file(), f


def test_fig1_paper_scale_few_seeds(tmp_path):
    "Four seeds: the pilot's estimates, and no claim."
    write_paper_scale(tmp_path / "res", seeds=4)
    md = "".join("".join(m) for m in outputs(run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res")), "text/markdown"))
    assert "* VPAD: 0.56" in md and "at 4 seeds." in md and "extends" not in md


def test_fig1_refuses_mixed_code_paths(tmp_path):
    liger = lambda name, seed: {**PATH, "kernels.liger": seed == 5}   # one run took Liger's kernels
    write_paper_scale(tmp_path / "res", path_of=liger)
    with pytest.raises(pm.PapermillExecutionError, match="code paths"):
        run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res"))
    nb = run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res"), allow_mixed_paths=True)
    assert "2 code paths mixed (allow_mixed_paths)" in outputs(nb, PLOTLY)[0]["layout"]["title"]["text"].replace("<br>", " ")


def write_confirmatory(root, seeds, shift:dict, engine="standalone"):
    "Confirmatory records: exact match falls from 1 at 50 letters to 0 at 100 + a seed's jitter + the setting's shift (letters)."
    jitter = [0, 3, -2, 5, -4, 1, -1, 2, 4, -3, 0, 2, -5, 3, 1, -2]
    for name, extra in shift.items():
        for seed in seeds:
            end = 100 + jitter[seed - 100] + extra
            em = {L: min(1.0, max(0.0, (end - L) / (end - 50))) for L in (50, 60, 70, 75, 80, 90, 100, 110, 125, 150)}
            rec = fake_copy_result("copy_confirmatory", name, seed, em, curve={s: em for s in (16000, 18000, 20000)},
                                   code_path={**PATH, "engine": engine})
            rec["provenance"].update(commit="c" * 40, versions={"torch": "2.11.0"}, dirty=False)
            write_result(rec, root)


def test_fig1_confirmatory_looks(tmp_path):
    """A made-up confirmatory study: pre-linear dropout copies 25 letters further, VPAD as far as the baseline. Look 1 closes VPAD
    for futility, look 2 rejects for pre-linear dropout, and the page says so in the protocol's words."""
    write_confirmatory(tmp_path / "res", range(100, 108), {"baseline": 0, "pre_linear": 25, "vpad": 0, "weight_decay": -10, "pre_norm": 0})
    md = "".join("".join(m) for m in outputs(run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res")), "text/markdown"))
    assert "look 1 of 3 done (8 seeds a setting); look 2 has 0 of its 16 runs recorded." in md
    assert "* Pre-linear dropout: no decision yet (Δ AUC50_150 +0.1" in md and "* VPAD: no significant difference at 8 seeds" in md
    write_confirmatory(tmp_path / "res", range(108, 116), {"baseline": 0, "pre_linear": 25})
    md = "".join("".join(m) for m in outputs(run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res")), "text/markdown"))
    assert "look 2 of 3 done (16 seeds a setting); it has ended." in md
    assert "* Pre-linear dropout extends copying (Δ AUC50_150 +0.1" in md and ", look 2 of 3 at 16 seeds a setting, p " in md
    assert "* Weight decay (exploratory, not tested by the protocol): Δ AUC50_150 -0.0" in md


def test_fig1_refuses_another_engine(tmp_path):
    write_confirmatory(tmp_path / "res", range(100, 102), {"baseline": 0, "vpad": 0}, engine="stacked")
    with pytest.raises(pm.PapermillExecutionError, match="provenance.code_path.engine"):
        run_nb("fig1_copy_task", tmp_path, results_root=str(tmp_path / "res"))


def test_copy_pilot(tmp_path):
    "The pilot's analysis runs from the committed records (fewer simulated studies here) and agrees with the protocol's inputs."
    nb = run_nb("copy_pilot", tmp_path, n_sims=100)
    assert "protocol.json agrees with the pilot" in "".join(outputs(nb, "stream"))


def write_position_results(sweep, root):
    "Two seeds each of baseline (its loss doubles past 8 positions) and vpad (flat), trained on 8 tokens, to 64."
    for seed in (0, 1):
        write_result(fake_position_result(sweep, "baseline", seed, [3.0 + seed] * 8 + [6.0] * 56, 8), root)
        write_result(fake_position_result(sweep, "vpad", seed, [3.0 + seed] * 64, 8), root)


def test_fig2_position_loss(tmp_path):
    write_position_results("fig2_position_loss", tmp_path / "r")
    nb = run_nb("fig2_position_loss", tmp_path, results_root=str(tmp_path / "r"))
    figs = outputs(nb, PLOTLY)
    assert len(figs) == 1
    names = [t.get("name") for t in figs[0]["data"]]
    assert "baseline (2 seeds)" in names and "vpad (2 seeds)" in names and "training length 8" in names
    table = tables(nb)[0]
    assert "(32, 64]" in table and "6.000" in table and "3.500 (3.000–4.000)" in table
    text = "".join(outputs(nb, "stream"))
    assert "4 runs: baseline (2 seeds), vpad (2 seeds)" in text and "No paper-scale results yet in" in text
    md = "".join(outputs(nb, "text/markdown"))                             # the paragraphs written from the results
    assert ("cross-entropy over the first 8 positions is 3.500 without a regularizer and 3.500 with VPAD; over positions "
            "8–16 it is 6.000 and 3.500") in md
    assert (tmp_path / "r" / "fig2_position_loss" / "fig2_position_loss.html").is_file()


def test_fig2_paper_scale(tmp_path):
    write_position_results("position_85m", tmp_path / "r")
    nb = run_nb("fig2_position_loss", tmp_path, results_root=str(tmp_path / "r"))
    assert "No results yet in" in "".join(outputs(nb, "stream"))          # the reduced sweep has none
    figs = outputs(nb, PLOTLY)
    assert len(figs) == 1
    names = [t.get("name") for t in figs[0]["data"]]
    assert "baseline (2 seeds)" in names and "vpad (2 seeds)" in names and "training length 8" in names
    table = tables(nb)
    assert len(table) == 1 and "(32, 64]" in table[0] and "3.500 (3.000–4.000)" in table[0]
    md = "".join(outputs(nb, "text/markdown"))
    assert "4 runs: baseline (2 seeds), vpad (2 seeds)" in md
    assert ("* **baseline (2 seeds)**: cross-entropy 3.500 (3.000–4.000) over the first 8 positions (the training length), 6.000 "
            "(6.000–6.000) over positions 33–64 (up to 8× the training length): +2.500 nats.") in md
    assert "**Against the baseline**, window by window" in md and "VPAD -2.500 to +0.000 nats." in md
    assert "* VPAD: no significant difference at 2 seeds; rise of the loss from positions T/2–T to 4T–8T" in md
    assert "These runs were evaluated without the window control" in md and "(its seeds here: +3.000, +2.000)" in md
    summary = json.loads((tmp_path / "r" / "position_85m" / "summary.json").read_text())
    assert summary["baseline_fails"] is None and summary["settings"]["vpad"]["rise_4T_8T"]["diff"] == pytest.approx(-2.5)
    assert "evaluated on 2 held-out documents to 65 positions" in md
    assert (tmp_path / "r" / "position_85m" / "position_85m.html").is_file()


def windowed_row(step, T, hurt, docs=3, spread=0.02):
    "A `position_curve` row to 8T of a run read whole and in windows: each document `hurt` (± spread) nats worse read whole past T."
    bins = [[0, 1]] + [[2 ** k, 2 ** (k + 1)] for k in range(T.bit_length() + 2)]
    documents = [{"positions": 8 * T, "bin_ce": [3.0] * len(bins),
                  "bin_ce_window": [3.0 - (hurt + spread * (i - 1) if lo >= T else 0.0) for lo, hi in bins]} for i in range(docs)]
    return {"step": step, "train_tokens": 1000 * step, "train_loss": 4.0 - step / 10, "seconds": 5.0, "bins": bins, "window": T,
            "bin_ce": [3.0] * len(bins), "per_document": {"bins": bins, "documents": documents}}


def test_fig2_failure_search(tmp_path):
    "Failure-search records with both reads at every checkpoint: full − window against tokens, the onset table, the rule's verdict."
    T = 8
    for seed, hurts in ((0, (-0.05, 0.02, 0.3)), (1, (0.0, 0.2, 0.4))):
        rec = fake_position_result("failure_search", "S16_T8", seed, [3.0] * 64, T)   # (a configuration outside the protocol's plan)
        rec["train_tokens"] = 3000
        rec["position_curve"] = [windowed_row(s, T, h) for s, h in zip((1, 2, 3), hurts)]
        rec["position"].update(window=T, per_document=rec["position_curve"][-1]["per_document"], per_position_ce_window=[3.0] * 64,
                               seconds=2.0, window_seconds=1.0)
        rec["wall_seconds"] = 100.0 if seed == 0 else None   # seed 1: a record without its wall time
        write_result(rec, tmp_path / "r")
    nb = run_nb("fig2_position_loss", tmp_path, results_root=str(tmp_path / "r"))
    fig = [f for f in outputs(nb, PLOTLY) if f["layout"]["title"]["text"].startswith("The failure search: full")][0]
    assert len(fig["data"]) == 2 and fig["data"][1]["y"] == pytest.approx([0.0, 0.2, 0.4])
    table = tables(nb)[-1]
    assert "0M (step 2)" in table and "0M (step 3)" in table   # seed 0: positive from step 2, above the margin from step 3
    assert "18 s (18%)" in table and "not recorded" in table   # three checkpoints' 5 s and the final model's 2 + 1 s, of 100 s
    md = "".join(outputs(nb, "text/markdown"))
    assert "Next, in the protocol's order: S16_T256; then S16_T128 and small_T256; T64 only if budget is left over." in md, md
    assert "Outside the protocol's plan, so not part of the search: **S16_T8** (T = 8, 0.0M training tokens, 2 of 2 seeds; on one synthetic, one run at a time, commit not recorded): The baseline fails past its training length by the rule" in md, md
    assert (tmp_path / "r" / "failure_search" / "failure_search.html").is_file()


def test_fig3_regularizer_cost(tmp_path):
    write_json(run_bench("tiny-mamba2", ["baseline", "vpad"], seq_len=32, batch=1, steps=1, warmup=0), tmp_path / "b" / "tiny.json")
    (tmp_path / "b" / "other.json").write_text("[1, 2]")
    nb = run_nb("fig3_regularizer_cost", tmp_path, bench_root=str(tmp_path / "b"))
    figs = outputs(nb, PLOTLY)
    assert len(figs) == 1 and len(figs[0]["data"]) == 1
    bars = figs[0]["data"][0]
    assert bars["type"] == "bar" and bars["x"] == ["baseline", "vpad"] and bars["y"][0] == 1.0
    assert "not lengen_bench reports, left out: other.json" in "".join(outputs(nb, "stream"))
    assert "vpad" in tables(nb)[0]
    assert (tmp_path / "b" / "fig3_regularizer_cost.html").is_file()


def strings(obj):
    "Every string in a JSON value, keys included."
    if isinstance(obj, str): yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items(): yield k; yield from strings(v)
    elif isinstance(obj, list):
        for v in obj: yield from strings(v)


def test_committed_results_are_portable():
    "Every results JSON parses, names no path of the machine that wrote it, and a sweep record sits where its sweep puts it."
    files = sorted((ROOT / "results").rglob("*.json"))
    assert len(files) >= 40
    for f in files:
        data = json.loads(f.read_text())
        machine = [s for s in strings(data) if s.startswith("/") or any(d in s for d in ("/root/", "/tmp/", "/work/", "/home/"))]
        assert not machine, f"{f.relative_to(ROOT)} names machine paths: {machine[:3]}"
        for r in (data if isinstance(data, list) else [data]):
            if isinstance(r, dict) and {"sweep", "name", "seed"} <= set(r):
                assert f == ROOT / "results" / r["sweep"] / f"{r['name']}-seed{r['seed']}.json", f
