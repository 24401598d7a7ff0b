"""A downstream suite's tests as cells of a release's result file, and back. Pure.

- Cell id: `downstream/<suite>.t<sha256 of the node id, 16 hex>` (`downstream/chex_0_1_90.t3f...`), no parameter;
  the node id itself is the cell's `claim` and `details.nodeid`. `downstream` is a namespace no case folder may take
  (`core.casefolders.RESERVED_NAMES`), and a probe run never retires these cells (`results.merge.retired_cells`).
  A suite the lock cannot serve on a release is one cell, `downstream/<suite>.install`.
- Status, in the suite's vocabulary, with the downstream word kept in the observation (`{"test": "failed", ...}`):
  passed → conforms, failed → differs, error / collection_error / uninstallable → error, skipped / xfail →
  skipped, timeout, crash and flaky → the same word.
- The observation holds the word, the failure's signature (`signature`, `owner`), the rerun's status and whether a
  crashed test was reached; details hold the node id, the exception's class, message and frames (bounded).
- `warnings`: the DeprecationWarnings and FutureWarnings raised from the library's own (non-test) code, as
  `{"category", "message", "module", "deprecation"}` (`module` the file relative to where it is installed).
- Reuse key: the suite's spec and manifest, the test files' digest (a folder's; a library's are fixed by its pinned
  version in the lock), the swapped lock's digest (the environment), the selection, the plugin's and this package's
  sources, and the suite's version. A run is answered from storage only when every stored cell has the key.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import conformance
from conformance.core.status import PYTEST_OUTCOME, Status
from conformance.downstream.judge import Judged
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.downstream.signature import is_test_file, masked, relative_path, signature
from conformance.results.schema import CellResult

NAMESPACE = "downstream"
LAUNCHER = "downstream"
STATUS_OF = {
    "passed": Status.CONFORMS,
    "failed": Status.DIFFERS,
    "error": Status.ERROR,
    "skipped": Status.SKIPPED,
    "xfail": Status.SKIPPED,
    "collection_error": Status.ERROR,
    "timeout": Status.TIMEOUT,
    "crash": Status.CRASH,
    "uninstallable": Status.ERROR,
    "flaky": Status.FLAKY,
}
# What runs pytest and reads its events: a change there reruns every suite. Signatures are computed when judging,
# from the stored exception and frames, so a better signature needs no rerun.
_SOURCES = ("plugin.py", "outcomes.py", "runner.py")
FRAMES_KEPT = 12


def case_id(ident: str, node: str) -> str:
    """`downstream/<suite>.t<hash>` (or `.install` for the suite's install cell)."""
    if node == UNINSTALLABLE_ID:
        return f"{NAMESPACE}/{ident}.install"
    return f"{NAMESPACE}/{ident}.t{hashlib.sha256(node.encode()).hexdigest()[:16]}"


def prefix(ident: str) -> str:
    """What every cell id of the suite starts with."""
    return f"{NAMESPACE}/{ident}."


def is_downstream(case: str) -> bool:
    """Whether a cell id is a downstream test's."""
    return case.startswith(f"{NAMESPACE}/")


def sources_digest() -> str:
    """Digest of the code that runs and reads a suite: a change reruns every suite."""
    folder = Path(__file__).resolve().parent
    return hashlib.sha256(b"".join((folder / n).read_bytes() for n in _SOURCES)).hexdigest()


def run_key(spec: str, manifest_text: str, files_digest: str, environment: str, selected: Sequence[str] | None) -> str:
    """The reuse key every cell of one (suite, release) run carries (see the module's docstring)."""
    text = json.dumps(
        {
            "suite": spec,
            "manifest": manifest_text,
            "files": files_digest,
            "environment": environment,
            "selected": sorted(selected) if selected is not None else None,
            "code": sources_digest(),
            "version": conformance.__version__,
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def own_warnings(outcome: NodeOutcome, roots: Sequence[str], packages: Sequence[str]) -> list[dict[str, str]]:
    """The deprecation warnings the test raised from the library's own non-test code."""
    found = []
    for warned in outcome.warnings:
        rel = relative_path(str(warned.get("filename", "")), roots)
        if rel is None or rel.split("/", 1)[0] not in packages or is_test_file(rel):
            continue
        entry = {
            "category": str(warned.get("category", "")),
            "message": str(warned.get("message", ""))[:300],
            "module": rel,
            "deprecation": "",
        }
        if entry not in found:
            found.append(entry)
    return found


def to_cell(
    ident: str,
    suite_label: str,
    outcome: NodeOutcome,
    key: str,
    roots: Sequence[str],
    libraries: Mapping[str, Sequence[str]],
    packages: Sequence[str],
    pytest_args: Sequence[str] = (),
) -> CellResult:
    """The cell of one node id's outcome; `pytest_args` (the manifest's own, which the run passed) go into its
    details, so the report's command that reproduces it passes them too."""
    observation: dict[str, Any] = {"test": outcome.status}
    details: dict[str, Any] = {"nodeid": outcome.nodeid, "suite": suite_label}
    if pytest_args:
        details["pytest_args"] = list(pytest_args)
    if outcome.exception:
        sig = signature(outcome.exception, roots, libraries)
        observation.update(signature=sig.text, owner=sig.owner)
        frames = [
            [relative_path(str(f[0]), roots) or str(f[0]), f[1], f[2]]
            for f in (outcome.exception.get("frames") or [])[-FRAMES_KEPT:]
            if len(f) > 2
        ]
        details.update(
            exception=str(outcome.exception.get("type", "")),
            message=str(outcome.exception.get("message", ""))[:2000],
            frames=frames,
        )
    elif outcome.status == "uninstallable":
        observation.update(signature=f"uninstallable: {masked(outcome.reason)}", owner="")
    if outcome.rerun:
        observation["rerun"] = outcome.rerun
    if not outcome.reached:
        observation["reached"] = False
    status = STATUS_OF.get(outcome.status, Status.ERROR)
    return CellResult(
        case=case_id(ident, outcome.nodeid),
        param="",
        rows=[],
        status=status,
        expected={"test": "passed"},
        observation=observation,
        details=details,
        reason=outcome.reason[:500],
        duration_s=round(outcome.duration, 4),
        launcher=LAUNCHER,
        key=key,
        heading=f"Downstream: {suite_label}",
        claim=outcome.nodeid,
        suite_version=conformance.__version__,
        warnings=own_warnings(outcome, roots, packages),
    )


def test_entry(cell: CellResult) -> dict[str, Any]:
    """The pytest-json-report test entry that holds a downstream cell."""
    return {
        "nodeid": f"{cell.case}",
        "lineno": 0,
        "outcome": PYTEST_OUTCOME[cell.status],
        "keywords": [],
        "metadata": cell.to_json(),
    }


def node_of(cell: CellResult) -> str:
    """The node id a downstream cell is about."""
    details = cell.details if isinstance(cell.details, dict) else {}
    if cell.case.endswith(".install"):
        return UNINSTALLABLE_ID
    return str(details.get("nodeid") or cell.claim)


def judged(cell: CellResult, libraries: Mapping[str, Sequence[str]] | None = None) -> Judged:
    """What the judge reads of a stored downstream cell: its word, and its signature computed now from the stored
    exception and frames with `libraries` (name → top-level packages: every suite judged together, so a frame in
    another suite's library is filed under it); the stored signature when no libraries are given."""
    obs = cell.observation if isinstance(cell.observation, dict) else {}
    details = cell.details if isinstance(cell.details, dict) else {}
    words = tuple(
        sorted({f"{w.get('category')}: {masked(str(w.get('message', '')))} @ {w.get('module')}" for w in cell.warnings})
    )
    sig, owner = str(obs.get("signature") or ""), str(obs.get("owner") or "")
    if libraries is not None and details.get("exception"):
        found = signature(
            {
                "type": details.get("exception"),
                "message": details.get("message", ""),
                "frames": details.get("frames") or [],
            },
            None,
            libraries,
        )
        sig, owner = found.text, found.owner
    return Judged(str(obs.get("test") or cell.status.value), sig, owner, bool(obs.get("reached", True)), words)


def durations(cells: Sequence[CellResult]) -> dict[str, float]:
    """Recorded seconds by node id (what `--budget` plans from)."""
    return {node_of(c): c.duration_s for c in cells if node_of(c) != UNINSTALLABLE_ID}


def without_tests(files: Sequence[Any]) -> list[Any]:
    """The result files (`results.schema.ResultFile`) with downstream tests' cells left out: the report's probe
    table, overview and outputs for other tools read these (a suite of 654 tests is not 654 behaviours)."""
    from dataclasses import replace

    kept = []
    for result_file in files:
        probes = [cell for cell in result_file.cells if not is_downstream(cell.case)]
        kept.append(replace(result_file, cells=probes) if len(probes) != len(result_file.cells) else result_file)
    return kept
