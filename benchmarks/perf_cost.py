"""What the performance tier costs: a perf session's wall time, per child process and per workload, and its
rerun answered from the stored samples.

    python benchmarks/perf_cost.py [--jax VERSION ...] [-k EXPR] [--rounds N] [--json FILE]

In a fresh results folder it runs `perf` on the releases (default 0.8.3 and 0.12.0.1; environments prepared with
the project's builder first, timed apart) with `--rounds` (default 5): one fresh process per release and round,
every selected workload in each. Then once more, answered from storage (nothing sampled). It prints one JSON
object: the seconds of each, the processes started, seconds per process and per workload sample, and what the
tier would add to the daily `all` run (27 releases) at that rate. The default `run` adds nothing: it never runs
workloads. Timings belong to the machine, so they live here and never in a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.envs.builder import EnvironmentBuilder  # noqa: E402
from conformance.perf.command import PerfCommand, run_perf_command  # noqa: E402
from conformance.perf.sides import select_workloads  # noqa: E402

ALL_RELEASES = 27


def measure(versions: list[str], expression: str | None, rounds: int) -> dict[str, object]:
    """The session's and its rerun's seconds, and the rates derived from them."""
    builder = EnvironmentBuilder()
    started = time.monotonic()
    for version in versions:
        builder.prepare(version)
    prepared = time.monotonic() - started
    workloads = len(select_workloads((), expression)[0])
    processes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="jaxconf-perfcost-") as folder:
        command = PerfCommand(tuple(versions), Path(folder), expression=expression, rounds=rounds, max_rounds=rounds)
        started = time.monotonic()
        run_perf_command(command, builder, lambda line: processes.append(line) if line.startswith("round") else None)
        session = time.monotonic() - started
        started = time.monotonic()
        run_perf_command(command, builder, lambda line: None)
        rerun = time.monotonic() - started
    per_process = session / max(len(processes), 1)
    return {
        "releases": versions,
        "workloads": workloads,
        "rounds": rounds,
        "environments_s": round(prepared, 1),
        "session_s": round(session, 1),
        "processes": len(processes),
        "per_process_s": round(per_process, 1),
        "per_workload_sample_s": round(per_process / max(workloads, 1), 2),
        "rerun_from_storage_s": round(rerun, 2),
        "all_matrix_estimate_s": round(per_process * rounds * ALL_RELEASES),
    }


def main() -> int:
    """Parse, measure, print (and write) the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", action="append", metavar="VERSION")
    parser.add_argument("-k", dest="expression")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = measure(args.jax or ["0.8.3", "0.12.0.1"], args.expression, args.rounds)
    text = json.dumps(found, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
