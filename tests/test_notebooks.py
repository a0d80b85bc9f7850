"""Run every notebook through nbdev's own test runner (one pytest test per notebook), and the papermill experiment."""
import json, os, warnings
from configparser import ConfigParser
from pathlib import Path

import nbdev.test as nbt
import papermill as pm
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
NBS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb")   # paper/ (marked .notest) runs below, through papermill
             if "paper" not in p.relative_to(ROOT / "nbs").parts and ".ipynb_checkpoints" not in p.parts)
cfg = ConfigParser(); cfg.read(ROOT / "settings.ini")
SKIP_FLAGS = cfg["DEFAULT"]["tst_flags"].split()       # `slow` and `gpu` cells are skipped, as in nbdev_test


@pytest.fixture
def fresh_dynamo():
    "TorchDynamo's caches and settings as a new process has them (one notebook's compiled models count toward the next's recompile limits)."
    saved = torch._dynamo.config.get_config_copy()
    torch._dynamo.reset()
    yield
    with warnings.catch_warnings():   # the copy holds deprecated keys, which warn when set back
        warnings.simplefilter("ignore", FutureWarning)
        torch._dynamo.config.load_config(saved)


@pytest.fixture
def own_environ():
    "os.environ as it was before the notebook: 04_kernels turns Triton's interpreter on for its process (TRITON_INTERPRET=1), and a later notebook would find Liger's kernels runnable on a CPU."
    saved = dict(os.environ)
    yield
    os.environ.clear(); os.environ.update(saved)


@pytest.mark.parametrize("nb", NBS, ids=lambda p: p.relative_to(ROOT / "nbs").with_suffix("").as_posix())
def test_notebook(nb, fresh_dynamo, own_environ):
    ok, _ = nbt.test_nb(nb, skip_flags=SKIP_FLAGS)
    assert ok, f"{nb.name} failed (traceback above)"


def test_copy_task_notebook_with_papermill(tmp_path):
    run_dir = tmp_path / "run"
    out = pm.execute_notebook(str(ROOT / "nbs/paper/copy_task.ipynb"), str(tmp_path / "out.ipynb"),
                              parameters=dict(max_steps=40, output_dir=str(run_dir),
                                              overrides=["data.copy_task.eval_lengths=[3,15]", "data.copy_task.eval_samples=8"]),
                              kernel_name="python3", cwd=str(tmp_path), progress_bar=False)
    tags = [c.metadata.get("tags", []) for c in out.cells]
    i = next(k for k, t in enumerate(tags) if "parameters" in t)
    assert "injected-parameters" in tags[i + 1]                      # injected after the defaults, so they win
    res = json.loads((run_dir / "copy_eval.json").read_text())
    assert [r["length"] for r in res["results"]] == [3, 15] and res["train_range"] == [1, 10]
    figs = [o for c in out.cells for o in c.get("outputs", []) if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(figs) == 1 and len(figs[0]["data"]["application/vnd.plotly.v1+json"]["data"]) == 3
