"""The recorded cell durations that balance a sharded run, read from stored result files.

Every shard of a run must split the cells the same way, so the durations come from a source
that is the same on every machine: the committed baseline results (`matrix/baseline/`) unless
another folder or file is named. Never the results folder being written, which differs between
machines and changes as shards finish. Missing or unreadable sources give no durations, and the
split falls back to its hash order (`engine.shards`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from conformance.envs.matrix import MATRIX_DIR
from conformance.results.load import ResultsError, read_results_tolerantly
from conformance.results.schema import ResultFile

BASELINE_DIR = MATRIX_DIR / "baseline"


def durations_from(files: Iterable[ResultFile]) -> dict[str, float]:
    """Mean recorded duration of every cell over `files`; cells never timed are left out.

    A reused result keeps the duration of the run that produced it. Pure.
    """
    seen: dict[str, list[float]] = {}
    for result_file in sorted(files, key=lambda f: f.source):
        for cell in result_file.cells:
            if cell.duration_s and cell.duration_s > 0:
                seen.setdefault(cell.cell_id, []).append(float(cell.duration_s))
    return {cell: round(sum(values) / len(values), 3) for cell, values in seen.items()}


def recorded_durations(source: str | os.PathLike | None = None) -> dict[str, float]:
    """Mean duration per cell id recorded in `source` (a result file or a folder; default the baseline)."""
    path = Path(source) if source else BASELINE_DIR
    if not path.exists():
        return {}
    try:
        return durations_from(read_results_tolerantly(path).files)
    except ResultsError:  # a folder without result files
        return {}
