"""How a whole matrix run spends its time: wall time, cells per second, overhead, the probes that dominate.

    python benchmarks/matrix_run.py RESULTS_DIR [--workers N] [--top 10]
    python benchmarks/matrix_run.py --run all [--workers N]   # run `run --matrix all`, then an unchanged rerun

Reads the result files of a run (each header's `wall_s`, each cell's `duration_s`) and prints, per
version and in all: the wall time of its cells, cells per second, the probes' own summed time and the
overhead ratio `wall / (summed probe time / workers)` (1.0 would be two workers busy all the time with
nothing but probes). It also lists the cells that take the most time across the matrix, with their share.
With `--run MATRIX` it first runs `python -m conformance run --matrix MATRIX --results DIR` in a scratch
folder (environments prepared beforehand, so the run is warm) and then the same command again, unchanged,
and prints both wall times and their ratio. Timings belong to the machine: kept out of the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.envs.index import sort_versions  # noqa: E402
from conformance.results.load import load_results  # noqa: E402


def summarise(folder: Path, workers: int, top: int) -> dict:
    """Per-version and total timings of the result files in `folder`."""
    files = load_results([folder])
    versions, by_cell = {}, defaultdict(float)
    for f in files:
        ran = [c for c in f.cells if not c.reused]
        probe_s = sum(c.duration_s or 0.0 for c in ran)
        versions[f.header.jax] = {
            "cells": len(f.cells),
            "ran": len(ran),
            "wall_s": round(f.header.wall_s, 1),
            "probe_s": round(probe_s, 1),
            "cells_per_s": round(len(ran) / f.header.wall_s, 2) if f.header.wall_s else None,
            "overhead": round(f.header.wall_s / (probe_s / workers), 3) if probe_s else None,
        }
        for c in ran:
            by_cell[c.cell_id] += c.duration_s or 0.0
    wall = sum(v["wall_s"] for v in versions.values())
    probe = sum(v["probe_s"] for v in versions.values())
    cells = sum(v["ran"] for v in versions.values())
    heaviest = sorted(by_cell.items(), key=lambda kv: -kv[1])[:top]
    return {
        "versions": {v: versions[v] for v in sort_versions(versions)},
        "total": {
            "versions": len(versions),
            "cells": cells,
            "wall_s": round(wall, 1),
            "probe_s": round(probe, 1),
            "cells_per_s": round(cells / wall, 2) if wall else None,
            "overhead": round(wall / (probe / workers), 3) if probe else None,
        },
        "heaviest_cells": [
            {"cell": cell, "seconds": round(s, 1), "share": round(s / probe, 3) if probe else None}
            for cell, s in heaviest
        ],
    }


def timed_run(matrix: str, results: Path, workers: int) -> float:
    """Wall seconds of `run --matrix MATRIX` into `results`."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--matrix", matrix, "--results", str(results), "-j", str(workers)],
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return time.perf_counter() - started


def main() -> int:
    """Print the numbers as one JSON object."""
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="?", type=Path, help="a folder of result files of a finished run")
    parser.add_argument("--run", metavar="MATRIX", help="run this matrix first (then an unchanged rerun)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    timings = {}
    folder = args.results
    if args.run:
        folder = folder or Path(tempfile.mkdtemp(prefix="jaxconf-bench-"))
        timings["first_run_s"] = round(timed_run(args.run, folder, args.workers), 1)
        timings["unchanged_rerun_s"] = round(timed_run(args.run, folder, args.workers), 1)
        timings["rerun_ratio"] = round(timings["unchanged_rerun_s"] / timings["first_run_s"], 4)
    if folder is None:
        parser.error("give a results folder, or --run MATRIX")
    print(json.dumps({**summarise(folder, args.workers, args.top), **timings}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
