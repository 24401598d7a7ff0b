"""Render a synthetic results set at scale: how long the report takes and how big it is.

    python benchmarks/report_scale.py [--cases 300] [--versions 40] [--platforms 3]

Builds `cases × versions × platforms` cell results in memory (most conform, some differ with a
diff, a few crash with output tails), renders the HTML report, and prints the render time
and the file size. The goal is under 3 s and under 10 MB for 300 × 40 × 3.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.core.case import Case, Expect, Param  # noqa: E402
from conformance.core.status import Status  # noqa: E402
from conformance.report.html import write_report  # noqa: E402
from conformance.results.schema import CellResult, ResultFile, RunHeader  # noqa: E402

PLATFORMS = ["linux-x86_64", "darwin-arm64", "windows-amd64", "linux-arm64"]


def synthetic_probe():
    """A stand-in probe."""
    return {"value": 1}


def synthetic(cases: int, versions: int, platforms: int) -> tuple[list[ResultFile], list[Case]]:
    """Result files and declared cases of the requested size."""
    declared = [Case(id=f"section{i % 10}.case{i}", section=f"§{i % 10}", heading=f"§{i % 10} Section {i % 10}",
                     claim=f"Claim number {i}, one sentence long enough to look like a real one.",
                     params=(Param("", (f"section{i % 10}.row{i}",), Expect({"value": 1, "name": "x"})),),
                     probe=synthetic_probe) for i in range(cases)]
    files = []
    for v in range(versions):
        version = f"0.{4 + v // 10}.{v % 10}"
        for p in PLATFORMS[:platforms]:
            cells = []
            for i, case in enumerate(declared):
                kind = (i * 7 + v * 3) % 50
                if kind == 0:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.CRASH, expected={"value": 1, "name": "x"},
                                      reason="the child died by SIGSEGV", stderr_tail="Fatal Python error\n" * 20,
                                      duration_s=0.4)
                elif kind < 6:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.DIFFERS, expected={"value": 1, "name": "x"},
                                      observation={"value": 2, "name": "x"},
                                      diff=[{"path": "value", "expected": 1, "observed": 2, "kind": "changed"}],
                                      details={"message": f"observed {v}"}, duration_s=0.2)
                else:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.CONFORMS, expected={"value": 1, "name": "x"},
                                      observation={"value": 1, "name": "x"}, duration_s=0.1)
                cells.append(cell)
            header = RunHeader(jax=version, platform=p, suite_version="bench", finished_at=f"2026-01-01T00:{v:02d}")
            files.append(ResultFile(header, cells, f"{version}-{p}.json"))
    return files, declared


def main() -> int:
    """Render and print the numbers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--versions", type=int, default=40)
    parser.add_argument("--platforms", type=int, default=3)
    args = parser.parse_args()
    files, cases = synthetic(args.cases, args.versions, args.platforms)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        out = write_report(files, Path(folder) / "index.html", cases=cases, generated_at="bench")
        seconds = time.perf_counter() - started
        size = out.stat().st_size
    cells = args.cases * args.versions * args.platforms
    print(f"{args.cases} cases x {args.versions} versions x {args.platforms} platforms = {cells} cells: "
          f"rendered in {seconds:.2f} s, {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
