"""A downstream suite's cells in the releases' result files, through the one results store.

- `stored_suite`: the suite's stored cells on a release when they answer the run: every one carries the run's reuse
  key (or, for a budget's selection, every selected test has a cell with it); then the release is answered from
  storage: neither its suite environment is built nor its tests run.
- `store_suite`: merges a run's cells into `<jax>-<platform>.json` (`results.store.ResultStore`, locked, atomic);
  the suite's stored cells that a whole run does not have are dropped (a test removed; a budget's run drops none, so
  what it left out keeps its recorded duration), every other cell of the file is kept, and the file's header stays
  as it was (the probes' run); a new file gets a header naming the suite's run.
- `suite_cells`: the suite's cells of a release as stored, whatever their key (what `gate --downstream` judges).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import conformance
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.downstream.cells import LAUNCHER, node_of, prefix, test_entry
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


def stored_suite(
    folder: Path, version: str, platform: str, ident: str, key: str, selected: Sequence[str] | None = None
) -> list[CellResult] | None:
    """The run's stored cells when storage answers it (None otherwise): a whole run when every stored cell of the
    suite carries `key`; a selection (a budget's subset) when a cell with `key` answers every selected node id, its
    own or its module's collection error. Only the cells with `key` are returned."""
    cells = suite_cells(folder, version, platform, ident)
    ours = [c for c in cells if c.key == key]
    if not ours or (selected is None and len(ours) != len(cells)):
        return None
    if selected is not None:
        answered = {node_of(c) for c in ours}
        if any(n not in answered and n.split("::", 1)[0] not in answered for n in selected):
            return None
    return ours


def store_suite(
    folder: Path,
    version: str,
    platform: str,
    ident: str,
    cells: Sequence[CellResult],
    python: str,
    wall_s: float,
    whole: bool = True,
) -> Stored:
    """Merge the run's cells into the release's result file (see the module's docstring); a run of a selection
    (`whole` false) retires nothing: the tests it left out keep their cells and recorded durations."""
    store = ResultStore(folder)
    store.refuse_newer_files()
    path = store.path_for(version, platform)
    head: dict[str, Any] = RunHeader(
        jax=version,
        platform=platform,
        suite_version=conformance.__version__,
        python=python,
        case_package=DEFAULT_CASE_PACKAGE,
        launcher=LAUNCHER,
        wall_s=round(wall_s, 3),
    ).to_json()
    if path.is_file():
        try:
            head = load_result_file(path).header.to_json()
        except (ResultsError, OSError):
            pass  # the store sets the unreadable file aside and says so
    data = {
        "created": time.time(),
        "duration": wall_s,
        "exitcode": 0,
        "root": "",
        "environment": {},
        "summary": {},
        "tests": [test_entry(c) for c in cells],
        "jax_conformance": head,
    }
    ours = prefix(ident)
    names = {c.case for c in cells}
    return store.merge_run(data, retired=lambda cell_id: whole and cell_id.startswith(ours) and cell_id not in names)
