"""A downstream suite's cells in the releases' result files, through the one results store.

- `stored_suite`: the suite's stored cells on a release when every one of them carries the run's reuse key (then the
  release is answered from storage: neither its suite environment is built nor its tests run); None otherwise.
- `store_suite`: merges a run's cells into `<jax>-<platform>.json` (`results.store.ResultStore`, locked, atomic);
  the suite's stored cells that this run does not have are dropped (a test removed, a selection changed), every
  other cell of the file is kept, and the file's header stays as it was (the probes' run); a new file gets a
  header naming the suite's run.
- `suite_cells`: the suite's cells of a release as stored, whatever their key (what `gate --downstream` judges).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import conformance
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.downstream.cells import LAUNCHER, prefix, test_entry
from conformance.results.load import ResultsError, load_result_file
from conformance.results.schema import CellResult, RunHeader
from conformance.results.store import ResultStore, Stored


def suite_cells(folder: Path, version: str, platform: str, ident: str) -> list[CellResult]:
    """The suite's stored cells on `version` ([] without a readable result file)."""
    path = ResultStore(folder).path_for(version, platform)
    if not path.is_file():
        return []
    try:
        cells = load_result_file(path).cells
    except (ResultsError, OSError):
        return []
    return [c for c in cells if c.case.startswith(prefix(ident))]


def stored_suite(folder: Path, version: str, platform: str, ident: str, key: str) -> list[CellResult] | None:
    """The suite's stored cells when all carry `key` (and there is at least one); None otherwise."""
    cells = suite_cells(folder, version, platform, ident)
    if not cells or any(c.key != key for c in cells):
        return None
    return cells


def store_suite(folder: Path, version: str, platform: str, ident: str, cells: Sequence[CellResult],
                python: str, wall_s: float) -> Stored:
    """Merge the run's cells into the release's result file (see the module's docstring)."""
    store = ResultStore(folder)
    store.refuse_newer_files()
    path = store.path_for(version, platform)
    head: dict[str, Any] = RunHeader(jax=version, platform=platform, suite_version=conformance.__version__,
                                     python=python, case_package=DEFAULT_CASE_PACKAGE, launcher=LAUNCHER,
                                     wall_s=round(wall_s, 3)).to_json()
    if path.is_file():
        try:
            head = load_result_file(path).header.to_json()
        except (ResultsError, OSError):
            pass  # the store sets the unreadable file aside and says so
    data = {"created": time.time(), "duration": wall_s, "exitcode": 0, "root": "", "environment": {}, "summary": {},
            "tests": [test_entry(c) for c in cells], "jax_conformance": head}
    ours = prefix(ident)
    names = {c.case for c in cells}
    return store.merge_run(data, retired=lambda cell_id: cell_id.startswith(ours) and cell_id not in names)
