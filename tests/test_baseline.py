"""The committed CI baseline (`matrix/baseline/`) still fits the suite (issue 56 item 4).

`.github/scripts/gate.sh` refuses result sets of another schema or suite version (exit 2), fails on a baseline cell
the candidate lacks, and never gates a cell the baseline lacks. So a new case, a new parameter, a schema or suite
version bump without a baseline update breaks the project's own CI gate, or silently leaves cells ungated: these
tests fail first. To update the baseline, run the newest release of the default matrix
(`python3 -m conformance run --jax 0.12.0.1`) and commit its result file here (matrix/baseline/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import conformance
from conformance.decide.diff import result_set
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
        problems.append(f"{len(declared - stored)} declared cell(s) missing from the baseline (never gated): "
                        f"{sorted(declared - stored)[:5]}")
    if stored - declared:
        problems.append(f"{len(stored - declared)} baseline cell(s) no longer in the suite: "
                        f"{sorted(stored - declared)[:5]}")
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
