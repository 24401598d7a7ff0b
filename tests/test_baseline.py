"""The committed CI baseline (`matrix/baseline/`) still fits the suite (issue 56 item 4).

`.github/scripts/gate.sh` refuses result sets of another schema or suite version (exit 2), fails on a baseline cell
the candidate lacks, and never gates a cell the baseline lacks. So a new case, a new parameter, a schema or suite
version bump without a baseline update breaks the project's own CI gate, or silently leaves cells ungated: these
tests fail first. To update the baseline, run the newest release of the default matrix
(`python3 -m conformance run --jax 0.12.0.1`) and commit its result file here (matrix/baseline/README.md).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import conformance
from conformance.decide.diff import result_set
from conformance.decide.scope import decision_scope, scoped
from conformance.engine.matrix import case_folders, select_run
from conformance.engine.selection import all_cells
from conformance.results.load import load_results, result_files
from conformance.results.schema import SCHEMA_VERSION

BASELINE = Path(__file__).resolve().parents[1] / "matrix" / "baseline"
UPDATE = "update matrix/baseline: run `python3 -m conformance run --jax 0.12.0.1` and commit its result file"


def _baseline():
    files = result_files(BASELINE)
    assert files, f"no result file in {BASELINE}: the CI gate would be skipped; {UPDATE}"
    return files, result_set(load_results(files), "baseline")


def declared_cells() -> set[str]:
    """Every cell id the suite declares (what a full run of the default matrix stores)."""
    return {cell.id for cell in all_cells(select_run(case_folders(()), None).declared)}


def cell_set_problems(stored: set[str], declared: set[str]) -> list[str]:
    """What keeps a baseline's cells from being the suite's: cells it lacks (never gated) and cells the suite no
    longer declares."""
    problems = []
    if declared - stored:
        problems.append(
            f"{len(declared - stored)} declared cell(s) missing from the baseline (never gated): "
            f"{sorted(declared - stored)[:5]}"
        )
    if stored - declared:
        problems.append(
            f"{len(stored - declared)} baseline cell(s) no longer in the suite: {sorted(stored - declared)[:5]}"
        )
    return problems


def test_the_baseline_is_of_this_schema_and_suite_version():
    files, baseline = _baseline()
    assert baseline.schema_versions == {SCHEMA_VERSION}, f"baseline schema {baseline.schema_versions}; {UPDATE}"
    assert baseline.suite_versions == {conformance.__version__}, f"baseline suite {baseline.suite_versions}; {UPDATE}"


def test_the_baseline_holds_every_declared_cell_and_no_other():
    _, baseline = _baseline()
    declared = declared_cells()
    for platform, run in baseline.runs.items():
        problems = cell_set_problems(set(run.cells), declared)
        assert not problems, f"{platform}: {'; '.join(problems)}; {UPDATE}"


def stale_cells(baseline, scope) -> list[str]:
    """The baseline cells `gate` would leave out as stale: stored with a key this checkout no longer gives (a probe,
    the case model or the child changed since the baseline ran; `decide.scope.scoped`)."""
    return scoped(baseline, scope)[1]


def test_the_baseline_keys_are_the_ones_this_checkout_gives():
    """A stale baseline gates nothing: `gate` leaves out every cell whose stored key differs from this checkout's,
    so after an edit of a probe or of the code every cell shares, the CI gate compared 0 cells and failed."""
    _, baseline = _baseline()
    stale = stale_cells(baseline, decision_scope(case_folders(()), None))
    assert not stale, f"{len(stale)} baseline cell(s) stale, e.g. {stale[:3]}; {UPDATE}"


def test_the_stale_check_can_fail():
    """The key check itself: a baseline cell with another stored key is named as stale."""
    _, baseline = _baseline()
    platform, run = next(iter(baseline.runs.items()))
    cell_id, cell = next(iter(run.cells.items()))
    header = next(f.header for f in run.files for c in f.cells if c is cell)
    changed = dataclasses.replace(cell, key="0" * 64)
    for f in run.files:
        f.cells[:] = [changed if c is cell else c for c in f.cells]
    edited = dataclasses.replace(run, cells={**run.cells, cell_id: changed})
    edited_set = dataclasses.replace(baseline, runs={platform: edited})
    assert header.environment_digest
    assert stale_cells(edited_set, decision_scope(case_folders(()), None)) == [f"{platform} jax {run.jax} {cell_id}"]


@pytest.mark.parametrize("change", ["added", "removed"])
def test_the_cell_set_check_fails_on_a_case_added_or_removed_without_a_baseline_update(change):
    """The check itself can fail: one declared cell more (a new case) or fewer (a removed one) than stored."""
    declared = declared_cells()
    stored = set(declared)
    if change == "added":
        declared = declared | {"values.a_new_case"}
    else:
        stored = stored | {"values.a_removed_case"}
    assert cell_set_problems(stored, declared) and not cell_set_problems(set(declared), set(declared))
