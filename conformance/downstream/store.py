"""A downstream suite's cells in the releases' result files, through the one results store.

- `stored_suite`: the suite's stored cells on a release when they answer the run: every one carries the run's reuse
  key (or, for a budget's selection, every selected test has a cell with it); then the release is answered from
  storage: neither its suite environment is built nor its tests run.
- `store_suite`: merges a run's cells into `<jax>-<platform>.json` (`results.store.ResultStore`, locked, atomic);
  the suite's stored cells that a whole run does not have are dropped (a test removed; a budget's run drops none, so
  what it left out keeps its recorded duration), every other cell of the file is kept, and the file's header stays
  as it was (the probes' run); a new file gets a header naming the suite's run.
- `suite_cells`: the suite's cells of a release as stored, whatever their key (what `gate --downstream` judges).

A release's cells may lie in its file or in its shard files (`<jax>-<platform>-shard<K>of<N>.json`, written by
`downstream --shard`, one per (suite, release) task, and copied into one folder): a suite's cells are read from the
one file of the release that holds them (`holding_file`: the shard's own file first in a shard's run, then the
release's file, then its shard files in name order), and a run is stored into that same file, so one folder never
holds one suite's tests twice on a release and `report` merges the files without a conflict.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import conformance
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.downstream.cells import LAUNCHER, node_of, prefix, test_entry
from conformance.engine.matrix import version_files
from conformance.results.load import ResultsError, load_result_file
from conformance.results.schema import CellResult, RunHeader, utc_now
from conformance.results.store import ResultStore, Stored


def release_files(folder: Path, version: str, platform: str, shard_suffix: str = "") -> list[Path]:
    """The result files of `version` in `folder`, in the order a suite's cells are looked for: the shard's own file
    (in a shard's run), the release's file, then its shard files in name order."""
    own = ResultStore(folder).path_for(version, platform, shard_suffix) if shard_suffix else None
    found = version_files(Path(folder), version, platform)
    return ([own] if own is not None and own in found else []) + [p for p in found if p != own]


def holding_file(files: Sequence[tuple[Path, Sequence[CellResult]]], ident: str) -> Path | None:
    """The first of `files` (path, its cells) holding a cell of the suite `ident`, None when none does. Pure."""
    return next((path for path, cells in files if any(c.case.startswith(prefix(ident)) for c in cells)), None)


def _read(path: Path) -> list[CellResult]:
    try:
        return load_result_file(path).cells
    except (ResultsError, OSError):
        return []  # unreadable: the store sets it aside when it next writes there


def _suite_file(folder: Path, version: str, platform: str, ident: str, shard_suffix: str) -> tuple[Path | None, list]:
    files = [(path, _read(path)) for path in release_files(folder, version, platform, shard_suffix)]
    path = holding_file(files, ident)
    return path, next((cells for p, cells in files if p == path), [])


def suite_cells(folder: Path, version: str, platform: str, ident: str, shard_suffix: str = "") -> list[CellResult]:
    """The suite's stored cells on `version`, from the one file of the release that holds them ([] when none)."""
    cells = _suite_file(folder, version, platform, ident, shard_suffix)[1]
    return [c for c in cells if c.case.startswith(prefix(ident))]


def stored_suite(
    folder: Path,
    version: str,
    platform: str,
    ident: str,
    key: str,
    selected: Sequence[str] | None = None,
    shard_suffix: str = "",
) -> list[CellResult] | None:
    """The run's stored cells when storage answers it (None otherwise): a whole run when every stored cell of the
    suite carries `key`; a selection (a budget's subset) when a cell with `key` answers every selected node id, its
    own or its module's collection error. Only the cells with `key` are returned."""
    cells = suite_cells(folder, version, platform, ident, shard_suffix)
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
    shard_suffix: str = "",
) -> Stored:
    """Merge the run's cells into the release's file that holds the suite (else its own: the shard's, with
    `shard_suffix`) (see the module's docstring); a run of a selection (`whole` false) retires nothing: the tests it
    left out keep their cells and recorded durations."""
    store = ResultStore(folder)
    store.refuse_newer_files()
    holding = _suite_file(folder, version, platform, ident, shard_suffix)[0]
    if holding is not None:  # where the suite's cells already are: its name past `<jax>-<platform>` (`-shardKofN`)
        shard_suffix = holding.stem[len(store.path_for(version, platform).stem) :]
    path = store.path_for(version, platform, shard_suffix)
    head: dict[str, Any] = RunHeader(
        jax=version,
        platform=platform,
        suite_version=conformance.__version__,
        python=python,
        case_package=DEFAULT_CASE_PACKAGE,
        launcher=LAUNCHER,
        wall_s=round(wall_s, 3),
        started_at=utc_now(seconds_ago=wall_s),
        finished_at=utc_now(),
    ).to_json()
    if path.is_file():
        try:
            earlier = load_result_file(path).header.to_json()
        except (ResultsError, OSError):
            pass  # the store sets the unreadable file aside and says so
        else:
            # The file's own header stays (its release's run); its times span that run and this suite's, so the
            # report's column says when its last result was written.
            earlier["started_at"] = min(filter(None, (earlier.get("started_at"), head["started_at"])))
            earlier["finished_at"] = max(filter(None, (earlier.get("finished_at"), head["finished_at"])))
            head = earlier
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
    return store.merge_run(
        data,
        retired=lambda cell_id: whole and cell_id.startswith(ours) and cell_id not in names,
        shard_suffix=shard_suffix,
    )
