"""Spawn against fork: wall time per version, the cost of one cell, and whether observations agree.

    python benchmarks/launchers.py [--matrix quick | --jax VERSION ...] [-j N]

For each version it runs every cell twice, once with `--launch spawn` and once with
`--launch fork`, through the same run session the CLI uses, and prints per version: both
wall times, their ratio, the median time of the cells the fork run forked under each launcher,
and how many cells' status or observation differ between the two (must be 0). Last, the
parent's peak memory while a fixture probe prints without end until its time limit.
Timings belong to the machine, so they live here and never in a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.core.case import find_case, load_cases  # noqa: E402
from conformance.engine.plugin import describe_target  # noqa: E402
from conformance.engine.runner import Target  # noqa: E402
from conformance.engine.selection import Cell, all_cells  # noqa: E402
from conformance.engine.session import RunSession  # noqa: E402
from conformance.envs.builder import EnvironmentBuilder  # noqa: E402
from conformance.envs.matrix import load_matrix  # noqa: E402
from conformance.report.terminal import text_table  # noqa: E402


def compare(version: str, workers: int) -> list:
    """One row of the table for `version`."""
    env = EnvironmentBuilder().prepare(version)
    described = describe_target(env.python)
    target = Target(env.python, described["platform"], described["jax"])
    cells = all_cells(load_cases())
    runs = {}
    for launcher in ("spawn", "fork"):
        started = time.monotonic()
        result = RunSession(target, launcher=launcher, workers=workers).run(cells)
        runs[launcher] = (time.monotonic() - started, {r.cell_id: r for r in result.results})
    # The cells the fork run really forked (a lone cell with variables of its own, or one that needs a fresh
    # interpreter, is spawned there too).
    eligible = {k for k, r in runs["fork"][1].items() if r.launcher == "fork"}
    differing = sum(
        (a.status, a.observation) != (runs["fork"][1][k].status, runs["fork"][1][k].observation)
        for k, a in runs["spawn"][1].items()
    )
    median = {
        name: statistics.median(r.duration_s for k, r in results.items() if k in eligible) if eligible else 0
        for name, (_, results) in runs.items()
    }
    spawn_s, fork_s = runs["spawn"][0], runs["fork"][0]
    return [
        version,
        len(cells),
        len(eligible),
        f"{spawn_s:.1f}",
        f"{fork_s:.1f}",
        f"{spawn_s / fork_s:.2f}",
        f"{median['spawn']:.3f}",
        f"{median['fork']:.3f}",
        f"{median['spawn'] / median['fork']:.1f}" if median["fork"] else "-",
        differing,
    ]


def runaway_peak_kib() -> int:
    """The parent's peak resident memory after a fixture probe printed without end until its limit."""
    fixture = find_case("machinery.printing_forever", "tests.fixture_cases")
    target = Target(sys.executable, "linux-x86_64", None, "tests.fixture_cases")
    RunSession(target, launcher="spawn").run([Cell(fixture, "")])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser()
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--matrix", default="quick")
    which.add_argument("--jax", action="append")
    parser.add_argument("-j", dest="workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    versions = args.jax or list(load_matrix(args.matrix).versions)
    header = [
        "jax",
        "cells",
        "forked",
        "spawn s",
        "fork s",
        "ratio",
        "cell spawn s",
        "cell fork s",
        "cell ratio",
        "observations differing",
    ]
    print(text_table(header, [compare(v, args.workers) for v in versions]))
    print(f"\nparent peak memory with a probe printing without end for 4 s: {runaway_peak_kib() / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
