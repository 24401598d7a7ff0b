"""Merging a new run into a version's stored file: other cells kept, retired cells dropped."""

from __future__ import annotations

from conformance.engine.matrix import retired_in
from conformance.core.case import load_cases
from conformance.engine.selection import all_cells
from conformance.results.merge import merge_files, merge_report_json, retired_cells, retired_stored_cells


def entry(case: str, param: str = "", status: str = "conforms") -> dict:
    return {"nodeid": f"x::{case}", "outcome": "passed", "metadata": {"case": case, "param": param, "status": status}}


def cell_ids(report: dict) -> list[str]:
    ids = []
    for test in report["tests"]:
        meta = test["metadata"]
        ids.append(f"{meta['case']}[{meta['param']}]" if meta["param"] else meta["case"])
    return ids


def test_a_subset_run_keeps_every_other_stored_cell():
    stored = {"tests": [entry("a.one"), entry("a.two", "p"), entry("a.two", "q")]}
    new = {"tests": [entry("a.two", "p", "differs")]}
    merged = merge_report_json(stored, new)
    assert cell_ids(merged) == ["a.two[p]", "a.one", "a.two[q]"]
    assert merged["tests"][0]["metadata"]["status"] == "differs"
    assert merged["summary"]["total"] == 3


def test_cells_of_deleted_cases_or_parameters_are_dropped_and_other_packages_kept():
    stored = {"tests": [entry("a.one"), entry("a.gone"), entry("a.two", "old"), entry("team/t.x"), entry("other/t.y")]}
    new = {"tests": [entry("a.two", "p")]}
    merged = merge_report_json(stored, new, retired=retired_cells(["a.one", "a.two[p]"]))
    assert cell_ids(merged) == ["a.two[p]", "a.one", "team/t.x", "other/t.y"]
    assert retired_stored_cells(stored, new, retired_cells(["a.one", "a.two[p]"])) == ["a.gone", "a.two[old]"]
    team = merge_report_json(stored, {"tests": []}, retired=retired_cells(["team/t.z"], "team"))
    assert cell_ids(team) == ["a.one", "a.gone", "a.two[old]", "other/t.y"]


def test_the_built_in_package_retires_only_what_it_no_longer_declares():
    retired = retired_in(None)
    declared = all_cells(load_cases())
    assert not any(retired(cell.id) for cell in declared)
    assert retired("numerics.no_such_case") and retired(f"{declared[0].case.id}[no_such_param]")
    assert not retired("teamcases/numerics.anything")


def test_a_case_folder_retires_only_its_own_cells():
    from conformance.engine.folders import CaseFolder
    from conformance.engine.runner import SOURCE_ROOT
    from pathlib import Path

    folder = CaseFolder(Path(SOURCE_ROOT, "examples", "teamcases").resolve())
    retired = retired_in(folder)
    declared = all_cells(load_cases("teamcases"))
    assert declared and not any(retired(cell.id) for cell in declared)
    assert retired("teamcases/gone.case") and not retired("numerics.no_such_case")


def test_a_case_folder_does_not_retire_the_cells_of_a_folder_whose_name_it_begins():
    retired = retired_cells(["team/t.x"], "team")
    assert retired("team/t.gone")
    assert not retired("team/t.x")
    assert not retired("teamcases/t.gone") and not retired("teamx/t.y") and not retired("a.one")


def test_merge_files_lets_the_file_finished_last_win_whatever_the_order_given():
    from tests.synthetic_results import cell, files

    early = files(
        "0.8.3", "linux-x86_64", [cell("a.x", status="differs"), cell("a.y")], finished="2026-11-29T10:00:00+00:00"
    )
    late = files("0.8.3", "linux-x86_64", [cell("a.x", status="conforms")], finished="2026-11-29T11:00:00+00:00")
    late.source = "late.json"
    early.source = "early.json"
    for order in ([early, late], [late, early]):
        (run,) = merge_files(order)
        assert run.cells["a.x"].status.value == "conforms"
        assert set(run.cells) == {"a.x", "a.y"}
        (conflict,) = run.conflicts
        assert conflict.cell_id == "a.x" and conflict.statuses == {"early.json": "differs", "late.json": "conforms"}


def test_the_summary_counts_every_outcome_and_a_missing_one_as_unknown():
    stored = {"tests": [entry("a.one"), {"nodeid": "x::a.two", "metadata": {"case": "a.two", "param": ""}}]}
    new = {"tests": [{**entry("a.three"), "outcome": "failed"}]}
    merged = merge_report_json(stored, new)
    assert merged["summary"] == {"failed": 1, "passed": 1, "unknown": 1, "total": 3, "collected": 3}
    assert merge_report_json(None, {})["summary"] == {"total": 0, "collected": 0}
    assert cell_ids(merge_report_json(stored, {})) == ["a.one", "a.two"]


def test_an_entry_the_plugin_never_judged_is_the_cell_of_its_node_id():
    lost = {"nodeid": "conformance/cases/numerics.py::vmap_miss[p]", "outcome": "error"}
    unnamed = {"nodeid": "not a cell node", "outcome": "error"}
    stored = {"tests": [lost, unnamed, entry("a.one")]}
    merged = merge_report_json(
        stored, {"tests": [entry("numerics.vmap_miss", "p")]}, retired=retired_cells(["numerics.vmap_miss[p]", "a.one"])
    )
    assert merged["tests"][1:] == [entry("a.one")]  # the rerun replaced it; the unnamed entry is no cell
    kept = merge_report_json(stored, {"tests": []}, retired=lambda cell_id: False)
    assert kept["tests"] == [lost, entry("a.one")]
    assert retired_stored_cells(stored, {"tests": []}, retired_cells(["a.one"])) == ["numerics.vmap_miss[p]"]
    metadata_list = {"nodeid": "x::y", "metadata": ["case"]}
    assert merge_report_json({"tests": [metadata_list]}, {})["tests"] == []


def test_a_parameter_holding_a_slash_stays_a_built_in_cell():
    retired = retired_cells(["a.b[p]"])
    assert retired("a.b[x/y]") and retired("a.b[x/[1]]")
    assert not retired("team/a.b[p]") and not retired("a.b[p]")


def test_a_conflict_names_files_without_their_folders_on_any_system():
    from conformance.results.merge import Conflict

    conflict = Conflict(
        "0.8.3",
        "linux-x86_64",
        "a.x",
        {"C:\\runs\\one.json": "differs", "/tmp/r/two.json (entry 2)": "conforms", "three.json": "error"},
    )
    assert conflict.describe() == (
        "jax 0.8.3 linux-x86_64 a.x: differs in one.json, conforms in two.json (entry 2), error in three.json"
    )
