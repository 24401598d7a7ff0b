"""Pure: the JSON of the commands whose result had none before issue 60: `list --json` (the selected cases),
`run --json` (the run's outcome) and `matrix --json` (the versions). Each document names its `format` and `version`
(docs/result-format.md#what-list-run-and-matrix-hand-on); `jsonout.write_json` writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from conformance.core.status import Status
from conformance.engine.selection import Cell
from conformance.report.terminal import status_counts

CASES_FORMAT, RUN_FORMAT, MATRIX_FORMAT, VERSION = (
    "jax-conformance-cases",
    "jax-conformance-run",
    "jax-conformance-matrix",
    1,
)


def dumps(data: dict[str, Any]) -> str:
    """The document as written: indented, one trailing newline."""
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def cases_json(cells: Sequence[Cell]) -> dict[str, Any]:
    """`list --json`: each selected case once, in order, with its cells (ids), section, kind, claim and rows."""
    cases: dict[str, dict[str, Any]] = {}
    for cell in cells:
        case = cell.case
        entry = cases.setdefault(
            case.id,
            {
                "id": case.id,
                "section": case.section,
                "known_issue": case.has_known_issue,
                "claim": case.claim,
                "rows": list(case.all_rows),
                "cells": [],
            },
        )
        entry["cells"].append(cell.id)
    return {"format": CASES_FORMAT, "version": VERSION, "cells": len(cells), "cases": list(cases.values())}


def run_json(
    finished: Sequence[Any],
    failed: Sequence[str],
    results: Path,
    selection: Any,
    shard: str | None = None,
    report: Path | None = None,
) -> dict[str, Any]:
    """`run --json`: per finished release (a `matrix.VersionRun`) its label, platform, result file, counts per
    status, cells run and reused; the targets that produced no results (named); the cells selected and chosen (of
    the shard, when sharded; `selection`, a `matrix.RunSelection`); where the results and the report are."""
    releases = []
    for run in finished:
        head = run.file.header
        counts = status_counts(run.file.cells)
        releases.append(
            {
                "jax": head.jax,
                "platform": head.platform,
                "python": head.python,
                "result_file": str(run.path),
                "counts": {s.value: counts[s.value] for s in Status},
                "cells": run.cells,
                "ran": run.cells - run.reused,
                "reused": run.reused,
                "wall_s": round(run.wall_s, 3),
            }
        )
    return {
        "format": RUN_FORMAT,
        "version": VERSION,
        "passed": not failed,
        "selected": len(selection.selected),
        "chosen": len(selection.chosen),
        "shard": shard or None,
        "results": str(results),
        "report": str(report) if report else None,
        "releases": releases,
        "failed": list(failed),
    }


def matrix_json(versions: Sequence[str]) -> dict[str, Any]:
    """`matrix --json PATH|-`: the versions, oldest first."""
    return {"format": MATRIX_FORMAT, "version": VERSION, "versions": list(versions)}
