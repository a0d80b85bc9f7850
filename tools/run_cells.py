"""Run a notebook's code cells in order in one namespace, the `gpu`-flagged ones included, printing each cell's last
expression — nbdev's test runner for a machine without nbdev (the GPU machine). A failing cell is reported and the
rest still run (one GPU call tells about every cell); exits 1 if any failed.

    python tools/run_cells.py nbs/ops/01_cuda_graphs.ipynb [--skip slow] [--skip-cells 11 12] > gpu_cells.txt
"""
import argparse, ast, json, sys, time, traceback, types


def cell_flags(src:str) -> set[str]:
    return {w for line in src.splitlines() if line.startswith("#|") for w in line[2:].split()}

def run_cell(src:str, ns:dict):
    tree = ast.parse(src)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), ns)
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns) if last else None

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook"); p.add_argument("--skip", nargs="*", default=["slow"], help="flags whose cells are skipped")
    p.add_argument("--skip-cells", nargs="*", type=int, default=[], help="cell indices skipped (e.g. CPU-only demos)")
    a = p.parse_args(argv)
    main_module = sys.modules["__main__"] = types.ModuleType("__main__")   # the cells' globals are `__main__`'s, as in
    ns = vars(main_module)                                                 # Jupyter: TorchDynamo guards look globals up there
    failed = []
    for i, c in enumerate(json.load(open(a.notebook))["cells"]):
        src = "".join(c["source"])
        if c["cell_type"] != "code" or "nbdev_export" in src or cell_flags(src) & set(a.skip) or i in a.skip_cells: continue
        t0 = time.perf_counter()
        try: out = run_cell(src, ns)
        except Exception:
            print(f"--- cell {i} FAILED\n{src}\n", flush=True); traceback.print_exc(); sys.stderr.flush(); failed.append(i); continue
        if out is not None: print(f"--- cell {i} ({time.perf_counter() - t0:.1f} s)\n{out!r}", flush=True)
    print(f"failed cells: {failed}" if failed else "all cells passed"); return 1 if failed else 0


if __name__ == "__main__": sys.exit(main())
