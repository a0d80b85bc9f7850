"""Run a notebook as nbdev_test does (cells flagged `gpu` or `slow` and the export call skipped) and save the outputs
of the cells named by index; the other cells keep their saved outputs, so a diff shows only what was meant to change.
The site shows saved outputs (nbdev_docs does not run demo cells), so a new or changed demo cell needs this.

    python tools/save_outputs.py nbs/eval/01_copy_task.ipynb 38 41     # then nbdev_clean
"""
import json, os, sys
from pathlib import Path

from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell

from run_cells import cell_flags   # tools/ is this script's folder, first on sys.path


def main(argv:list[str]) -> int:
    path, wanted = Path(argv[0]).resolve(), {int(i) for i in argv[1:]}
    nb, saved = read_nb(path), read_nb(path)
    os.chdir(path.parent)
    shell = CaptureShell()
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code": continue
        if cell_flags(c.source) & {"gpu", "slow"} or "nbdev_export" in c.source: continue
        shell.cell(c)
        if shell.exc: print(f"cell {i} failed:\n{c.source[:300]}\n{shell.exc!r}", file=sys.stderr); return 1
        if i not in wanted: c.outputs = json.loads(json.dumps(saved.cells[i].get("outputs", [])))
    write_nb(nb, path)
    print(f"saved the outputs of cells {sorted(wanted)} of {path.name}")
    return 0


if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
