"""What running a chapter as written costs on one release, against the sum of its probes.

    python benchmarks/chapter_cost.py [CHAPTER] [--jax VERSION] [--probes RESULTS] [--run-probes] [--timeout S]

Runs every block of the chapter once on the release (one process, its environment prepared beforehand and not
timed, nothing answered from storage), and reads what its probes cost from result files: the sum of every probe
cell's `duration_s` (each cell's own child, start included), and the run's wall time, from the release's file in
RESULTS (default results/, else matrix/baseline/). With --run-probes the probes run now too (`run --rerun -j 1`
into a temporary folder), so both are measured on the same machine under the same load. Prints one JSON object.
Never a test: timings belong to the machine, not to correctness (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.chapter.cells import is_block_cell  # noqa: E402
from conformance.chapter.read import read_chapter, read_skip_list  # noqa: E402
from conformance.chapter.session import run_blocks  # noqa: E402
from conformance.chapter.skiplist import block_limits, skip_reasons  # noqa: E402
from conformance.chapter.statuses import block_outcomes  # noqa: E402
from conformance.envs.builder import EnvironmentBuilder  # noqa: E402
from conformance.results.load import load_result_file  # noqa: E402

SEED = ROOT.parent / "shared" / "seeds" / "000_074f18c932eb1ee6.txt"


def chapter_cost(chapter_path: Path, version: str, timeout_s: float) -> dict:
    """Run the chapter once on `version`: wall time, the blocks' own time, the heaviest blocks, the statuses."""
    chapter = read_chapter(chapter_path)
    _, skips, limit_entries = read_skip_list(chapter_path)
    reasons, limits = skip_reasons(chapter.blocks, skips)[0], block_limits(chapter.blocks, limit_entries)[0]
    env = EnvironmentBuilder().prepare(version)
    started = time.perf_counter()
    ran = run_blocks(
        chapter.blocks,
        {b.index for b in chapter.blocks if reasons.get(b.id) or b.skip},
        env.python,
        timeout_s,
        limits={b.index: limits[b.id] for b in chapter.blocks if b.id in limits},
    )
    wall = time.perf_counter() - started
    outcomes = block_outcomes(chapter.blocks, ran.results, reasons, timeout_s, limits)
    durations = sorted(
        ((o.duration_s, b.id, b.first_code[:60]) for b, o in zip(chapter.blocks, outcomes.values())), reverse=True
    )
    statuses: dict[str, int] = {}
    for outcome in outcomes.values():
        statuses[outcome.status.value] = statuses.get(outcome.status.value, 0) + 1
    return {
        "blocks": len(chapter.blocks),
        "wall_s": round(wall, 1),
        "processes": ran.processes,
        "blocks_s": round(sum(d for d, _, _ in durations), 1),
        "heaviest": [{"block": block, "s": round(d, 1), "code": code} for d, block, code in durations[:5]],
        "statuses": statuses,
    }


def probes_cost(path: Path) -> dict:
    """The probes' cost recorded in a result file: cells, the sum of their durations, the run's wall time."""
    loaded = load_result_file(path)
    probes = [c for c in loaded.cells if not is_block_cell(c)]
    return {
        "file": str(path),
        "cells": len(probes),
        "sum_duration_s": round(sum(c.duration_s for c in probes), 1),
        "wall_s": loaded.header.wall_s,
        "launcher": loaded.header.launcher,
    }


def run_probes_now(version: str) -> dict:
    """Run every probe of `version` now, one at a time, into a temporary folder; their recorded cost."""
    with tempfile.TemporaryDirectory(prefix="chapter-cost-") as folder:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "conformance",
                "run",
                "--jax",
                version,
                "--rerun",
                "-j",
                "1",
                "--results",
                folder,
                "-o",
                str(Path(folder) / "report.html"),
            ],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return probes_cost(next(Path(folder).glob(f"{version}-*.json")))


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser()
    parser.add_argument("chapter", nargs="?", type=Path, default=SEED)
    parser.add_argument("--jax", default="0.12.0.1")
    parser.add_argument("--probes", type=Path, default=ROOT / "results")
    parser.add_argument("--run-probes", action="store_true")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    recorded = [folder / f"{args.jax}-linux-x86_64.json" for folder in (args.probes, ROOT / "matrix" / "baseline")]
    found = next((p for p in recorded if p.is_file()), None)
    measured = {
        "jax": args.jax,
        "chapter": chapter_cost(args.chapter, args.jax, args.timeout),
        "probes_recorded": probes_cost(found) if found else None,
    }
    if args.run_probes:
        measured["probes_now"] = run_probes_now(args.jax)
    for key in ("probes_recorded", "probes_now"):
        if measured.get(key):
            measured[f"chapter_over_{key}_sum"] = round(
                measured["chapter"]["wall_s"] / measured[key]["sum_duration_s"], 2
            )
    print(json.dumps(measured, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
