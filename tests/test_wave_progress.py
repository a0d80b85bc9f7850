"tools/wave_progress.py: a wave's progress JSON from the sweep script's returned log, on a made-up wave of two runs."
import importlib.util, io, json, tarfile
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("wave_progress", Path(__file__).parents[1]/"tools"/"wave_progress.py")
wave_progress = importlib.util.module_from_spec(spec); spec.loader.exec_module(wave_progress)

LOG = """the sweep may run 1297 s (it began 32 s after this machine's first call)
--- 08:15:54: 0.0 min into the wave
no run folders in /tmp/full_sweep/runs
GPU memory used, total; utilization: 0 MiB, 81559 MiB, 0 %
--- 08:18:06: 2.2 min into the wave
copy_confirmatory/vpad-seed103: not done; 2.0 min since it began; step 3100 of 20000, evaluations: generation 1, last loss 0.004164, peak GPU memory 17.47 GiB; running
copy_noise_floor/baseline-seed105: not done; 2.0 min since it began; step 3350 of 20000, evaluations: generation 1, last loss 0.004215, peak GPU memory 17.29 GiB; running
GPU memory used, total; utilization: 57583 MiB, 81559 MiB, 100 %
13 runs to do, 5 done already; 3 at a time under CUDA MPS
--- 08:20:18: 4.4 min into the wave
copy_confirmatory/vpad-seed103: not done; 4.2 min since it began; step 6600 of 20000, evaluations: generation 3 (41 s), last loss 0.001141, peak GPU memory 17.5 GiB; running
copy_noise_floor/baseline-seed105: done; 4.2 min since it began; step 7150 of 20000, evaluations: generation 3, last loss 0.0008857, peak GPU memory 17.29 GiB; running
GPU memory used, total; utilization: 57600 MiB, 81559 MiB, 100 %
"""
SWEEP_LOG = "copy_noise_floor/baseline-seed105: done after 741.3 s\ncopy_confirmatory/vpad-seed103: done after 758.9 s\n"
RUN_LOG = "lengen_train: the first step took {} s (kernel compilation and autotuning; later steps are the speed)\n"

def add(tar, name, text):
    data = text.encode(); info = tarfile.TarInfo(name); info.size = len(data); tar.addfile(info, io.BytesIO(data))

@pytest.fixture
def wave(tmp_path):
    "A call's returned files and the two runs' records, as the sweep script and lengen_sweep write them."
    files, results = tmp_path/"files", tmp_path/"results"
    files.mkdir(); (files/"progress_log.txt").write_text(LOG)
    with tarfile.open(files/"full_sweep_logs.tgz", "w:gz") as tar:
        add(tar, "sweep.log", SWEEP_LOG)
        add(tar, "runs/copy_confirmatory/vpad-seed103/sweep.log", RUN_LOG.format(5.7))
        add(tar, "runs/copy_noise_floor/baseline-seed105/sweep.log", RUN_LOG.format(5.6))
    for sweep, run, peak in (("copy_confirmatory", "vpad-seed103", 18.29), ("copy_noise_floor", "baseline-seed105", 18.11)):
        (results/sweep).mkdir(parents=True, exist_ok=True)
        (results/sweep/f"{run}.json").write_text(json.dumps({"peak_gpu_gib": peak, "provenance": {"commit": "e4d4da8", "gpu": "NVIDIA H100 80GB HBM3"}}))
    return files, results

def test_wave_progress(wave):
    out = wave_progress.wave_progress(*wave, "a made-up wave", "2026-12-07", True, "auto", budget_left=1529)
    assert out["runs"] == ["vpad-seed103", "baseline-seed105"] and out["sweeps"] == ["copy_confirmatory", "copy_noise_floor"]
    assert out["first_step_seconds"] == [5.7, 5.6] and out["final_peak_gpu_gib"] == [18.29, 18.11]
    assert [r["minutes"] for r in out["reports"]] == [2.2, 4.4]   # the report before any run folder is left out
    assert out["began_minutes"] == [0.2, 0.2]
    assert [r["step"] for r in out["reports"]] == [[3100, 3350], [6600, 7150]]
    assert out["reports"][1]["peak_gpu_gib"] == [17.5, 17.29] and out["reports"][1]["gpu_memory_used_mib"] == 57600
    assert (out["commit"], out["device"], out["gpu_memory_total_mib"]) == ("e4d4da8", "NVIDIA H100 80GB HBM3", 81559)
    w = out["window"]
    assert (w["sweep_may_run_s"], w["began_after_first_call_s"], w["first_run_ended_s"], w["budget_left_s"]) == (1297, 32, 741.3, 1529)
    assert "machine_start_s" not in w and "machine_start_s" not in w["note"]   # not given: not recorded

def test_machine_start(wave):
    "The machine's start (the first call's held_s less its wall_s), where given, is kept in the window and named in its note."
    w = wave_progress.wave_progress(*wave, "w", "2026-12-07", True, "auto", budget_left=1349, machine_seconds=1109, machine_start=479)["window"]
    assert (w["budget_left_s"], w["machine_seconds"], w["machine_start_s"]) == (1349, 1109, 479) and "machine_start_s: held seconds" in w["note"]

def test_leases(wave):
    "Each call's lease is kept in order, and the machine's start comes from the first: its held seconds less its wall seconds."
    leases = [{"held_s": 301.4, "wall_s": 4.2, "budget_left_s": 1316}, {"held_s": 850.0, "wall_s": 540.3, "budget_left_s": 768}]
    w = wave_progress.wave_progress(*wave, "w", "2026-12-08", True, "auto", leases=leases)["window"]
    assert (w["machine_start_s"], w["leases"]) == (297, leases) and "leases: each call's reply" in w["note"]
    assert wave_progress.wave_progress(*wave, "w", "2026-12-08", True, "auto", machine_start=300, leases=leases)["window"]["machine_start_s"] == 300   # given: kept

def test_start_line_given(wave):
    "A log written before the script kept the start's line takes it from --start-line; with neither, no window."
    files, results = wave
    (files/"progress_log.txt").write_text(LOG.split("\n", 1)[1])
    assert "window" not in wave_progress.wave_progress(files, results, "w", "2026-12-07", True, 1200)
    w = wave_progress.wave_progress(files, results, "w", "2026-12-07", True, 1200, "the sweep may run 900 s (it began 40 s after this machine's first call)")["window"]
    assert (w["sweep_may_run_s"], w["began_after_first_call_s"], w["min_left_s"]) == (900, 40, 1200)

def test_mixed_commits_refused(wave):
    files, results = wave
    rec = results/"copy_noise_floor"/"baseline-seed105.json"
    rec.write_text(json.dumps({"peak_gpu_gib": 18.0, "provenance": {"commit": "0000000", "gpu": "NVIDIA H100 80GB HBM3"}}))
    with pytest.raises(SystemExit, match="several commits or GPUs"): wave_progress.wave_progress(files, results, "w", "2026-12-07", True, "auto")

def test_unread_lines_refused(wave):
    "A run's line in a format the parser does not read is an error, not a dropped report."
    files, results = wave
    (files/"progress_log.txt").write_text(LOG.replace("peak GPU memory 17.5 GiB", "peak memory 17.5 GiB"))
    with pytest.raises(SystemExit, match="does not read"): wave_progress.wave_progress(files, results, "w", "2026-12-07", True, "auto")

def test_second_round(wave):
    "A run that began after the first report (a second round) follows the first round's, with None in the reports before its first line."
    files, results = wave
    lines = LOG.splitlines()
    second = lines[10].replace("vpad-seed103", "vpad-seed104").replace("4.2 min since", "0.5 min since").replace("step 6600", "step 1200")
    (files/"progress_log.txt").write_text(LOG + "--- 08:22:31: 6.6 min into the wave\n" + "\n".join(lines[10:12] + [second, lines[12]]) + "\n")
    with tarfile.open(files/"full_sweep_logs.tgz", "r:gz") as tar: members = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}
    with tarfile.open(files/"full_sweep_logs.tgz", "w:gz") as tar:
        for name, text in {**members, "sweep.log": SWEEP_LOG + "copy_confirmatory/vpad-seed104: done after 512.0 s\n",
                           "runs/copy_confirmatory/vpad-seed104/sweep.log": RUN_LOG.format(5.9)}.items(): add(tar, name, text)
    (results/"copy_confirmatory"/"vpad-seed104.json").write_text(json.dumps({"peak_gpu_gib": 18.3, "provenance": {"commit": "e4d4da8", "gpu": "NVIDIA H100 80GB HBM3"}}))
    out = wave_progress.wave_progress(files, results, "w", "2026-12-07", True, "auto")
    assert out["runs"] == ["vpad-seed103", "baseline-seed105", "vpad-seed104"] and out["began_minutes"] == [0.2, 0.2, 6.1]
    assert [r["step"] for r in out["reports"]] == [[3100, 3350, None], [6600, 7150, None], [6600, 7150, 1200]]
    assert out["reports"][2]["peak_gpu_gib"] == [17.5, 17.29, 17.5] and out["first_step_seconds"] == [5.7, 5.6, 5.9]
    assert out["window"]["first_run_ended_s"] == 741.3   # the first round's first end, not the second round's shorter run

def test_first_round_without_a_first_line(wave):
    "A run that began before the first report but had no progress line in it is of the first round, and that report is left out."
    files, results = wave
    (files/"progress_log.txt").write_text(LOG.replace(LOG.splitlines()[6] + "\n", "copy_noise_floor/baseline-seed105: not done; no progress file yet\n"))
    out = wave_progress.wave_progress(files, results, "w", "2026-12-07", True, "auto")
    assert out["runs"] == ["vpad-seed103", "baseline-seed105"] and out["began_minutes"] == [0.2, 0.2]
    assert [r["minutes"] for r in out["reports"]] == [4.4]

def test_resumed_line_read():
    "A resumed run's line (progress_line's '(resumed at step N)' after its minutes) is read, not refused."
    line = ("copy_confirmatory/vpad-seed1: not done; 3.0 min since it began (resumed at step 500); step 900 of 2000, evaluations: none, "
            "last loss 0.1, peak GPU memory 1.5 GiB; running")
    assert wave_progress.reports(f"--- 01:02:03: 3.1 min into the wave\n{line}\n")[0]["runs"] == {("copy_confirmatory", "vpad-seed1"): (900, 1.5, 3.0)}
