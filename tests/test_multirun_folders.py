"""A multirun launched again with other values of settings a resume may change (`lengen.config.RESUME_MAY_CHANGE`: a
longer `max_steps`, another `logging_steps`) finds the folders of its first launch (`lengen.compose.job_dirname`) and
continues its runs from their checkpoints, instead of training new runs from scratch beside them. Two 2- and 3-step
runs of the CPU-sized copy experiment, through `lengen_train -m` as a user types it, offline."""
import json, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lengen_train(*argv, cwd) -> subprocess.CompletedProcess:
    "`lengen_train ARGV` in a process of its own (Hydra's launcher configures the logging of the process it runs in)."
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1", "WANDB_MODE": "disabled"}
    return subprocess.run([sys.executable, "-m", "lengen.train.cli", *map(str, argv)], capture_output=True, text=True, cwd=cwd, env=env)


def launch_grid(tmp_path, sweep:str, *more) -> subprocess.CompletedProcess:
    "`lengen_train -m` of the copy experiment at seed 0 into tmp_path/grid (checkpoints every 2 steps), Hydra's sweep folder `sweep`, with `more`."
    return lengen_train("-m", "+experiment=copy_demo", "seed=0", "save_steps=2", "compile.cuda_graphs=false", "data.copy_task.eval_samples=4",
                        "data.copy_task.eval_lengths=[3]", f"output_dir={tmp_path/'grid'}", *more, f"hydra.sweep.dir={tmp_path/sweep}", cwd=tmp_path)


def assert_continued_to_3(run:Path):
    "The run in `run` was continued once, from its step 2 to step 3, and finished there."
    resumes = json.loads((run/"lengen_resumes.json").read_text())
    assert [(r["step"], r["changed"]["max_steps"]) for r in resumes] == [(2, [2, 3])]   # continued from step 2, to step 3
    assert json.loads((run/"train_summary.json").read_text())["global_step"] == 3


def test_longer_max_steps_continues_in_the_same_folder(tmp_path):
    grid = tmp_path/"grid"
    first = launch_grid(tmp_path, "sweep1", "max_steps=2", "logging_steps=1")
    assert first.returncode == 0, first.stderr[-2000:]
    folders = [p.name for p in grid.iterdir()]
    assert folders == ["compile.cuda_graphs=False,seed=0"]   # the run's settings, less those a resume may change
    run = grid/folders[0]
    (run/"train_summary.json").unlink()   # as if stopped after its last checkpoint (a finished run: the test below)
    again = launch_grid(tmp_path, "sweep2", "max_steps=3", "logging_steps=2")
    assert again.returncode == 0, again.stderr[-2000:]
    assert [p.name for p in grid.iterdir()] == folders                                   # no second folder beside it
    assert_continued_to_3(run)


def test_finished_run_says_so_and_a_longer_max_steps_continues_it(tmp_path):
    grid = tmp_path/"grid"
    first = launch_grid(tmp_path, "sweep1", "max_steps=2", "logging_steps=1")
    assert first.returncode == 0, first.stderr[-2000:]
    run = grid/"compile.cuda_graphs=False,seed=0"
    same = launch_grid(tmp_path, "sweep2", "max_steps=2", "logging_steps=1")
    assert same.returncode == 0, same.stderr[-2000:]
    assert f"lengen_train: finished earlier: {run}: a finished run of 2 steps" in same.stdout, same.stdout[-2000:]
    longer = launch_grid(tmp_path, "sweep3", "max_steps=3", "logging_steps=1")   # the finished run, continued
    assert longer.returncode == 0, longer.stderr[-2000:]
    assert "lengen_train: 1 runs: 1 done" in longer.stdout, longer.stdout[-2000:]
    assert [p.name for p in grid.iterdir()] == [run.name]
    assert_continued_to_3(run)
