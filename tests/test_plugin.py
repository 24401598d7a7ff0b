"""The pytest plugin, end to end through pytester: collection, outcomes and the JSON report format."""

from __future__ import annotations

import json

import pytest

from conformance.engine.matrix import PYTEST_PLUGIN
from conformance.engine.runner import SOURCE_ROOT
from conformance.results.schema import SCHEMA_VERSION, CellResult


@pytest.fixture
def run_suite(pytester, monkeypatch):
    """Run pytest on the fixture case package in a subprocess and return (result, json report)."""
    monkeypatch.setenv("PYTHONPATH", SOURCE_ROOT)

    def run(*extra):
        report = pytester.path / "report.json"
        result = pytester.runpytest_subprocess(
            "--pyargs",
            "tests.fixture_cases",
            "--conformance-cases",
            "tests.fixture_cases",
            *PYTEST_PLUGIN,
            "-p",
            "no:cacheprovider",
            "--json-report",
            f"--json-report-file={report}",
            "-v",
            *extra,
        )
        return result, json.loads(report.read_text())

    return run


def test_one_item_per_cell_with_status_words_and_outcomes(run_suite):
    result, report = run_suite("-k", "conforming or differing or echo or unsupported")
    result.stdout.fnmatch_lines(
        [
            "*machinery.py::conforming CONFORMS*",
            "*machinery.py::differing DIFFERS*",
            "*machinery.py::unsupported UNSUPPORTED*",
            "*machinery.py::echo?a? CONFORMS*",
            "*machinery.py::echo?b? CONFORMS*",
        ]
    )
    outcomes = {t["nodeid"].split("::")[1]: t["outcome"] for t in report["tests"]}
    assert outcomes == {
        "conforming": "passed",
        "differing": "failed",
        "echo[a]": "passed",
        "echo[b]": "passed",
        "unsupported": "skipped",
    }


def test_each_test_carries_the_cell_metadata(run_suite):
    _, report = run_suite("-k", "differing")
    (test,) = report["tests"]
    metadata = test["metadata"]
    for key in [
        "case",
        "param",
        "rows",
        "status",
        "observation",
        "expected",
        "diff",
        "details",
        "duration_s",
        "stdout_tail",
        "stderr_tail",
    ]:
        assert key in metadata
    assert metadata["case"] == "machinery.differing"
    assert metadata["rows"] == ["fixture.differs"]
    assert metadata["status"] == "differs"
    assert metadata["diff"] == [{"path": "answer", "expected": 42, "observed": 41, "kind": "changed"}]


def test_report_top_level_describes_the_run(run_suite):
    _, report = run_suite("-k", "conforming")
    head = report["jax_conformance"]
    assert head["schema_version"] == SCHEMA_VERSION
    for key in ["suite_version", "jax", "jaxlib", "numpy", "python", "platform", "started_at", "finished_at"]:
        assert key in head
    assert head["platform"].count("-") >= 1
    assert head["started_at"] <= head["finished_at"]


def test_row_ids_select_cells_with_k(run_suite):
    _, report = run_suite("-k", "fixture.param.b")
    assert [t["nodeid"].split("::")[1] for t in report["tests"]] == ["echo[b]"]


def test_plugin_is_quiet_in_an_unrelated_session(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    assert 1 + 1 == 2\n")
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        *PYTEST_PLUGIN, "-p", "no:cacheprovider", "--json-report", f"--json-report-file={report}"
    )
    result.assert_outcomes(passed=1)
    assert "jax_conformance" not in json.loads(report.read_text())
    assert "jax-conformance" not in result.stdout.str().split("plugins:")[0]


def test_the_plugin_is_loaded_only_where_asked_for(pytester):
    """Installing the tool registers no `pytest11` entry point (issue 60: a user's `pytest --help` gained our
    options); `-p conformance.engine.plugin`, as the CLI and tox.ini pass it, loads it."""
    from pathlib import Path

    from conformance.config import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert "pytest11" not in project["project"].get("entry-points", {})
    assert "conformance.engine.plugin" in (Path(__file__).resolve().parents[1] / "tox.ini").read_text()
    helped = pytester.runpytest_subprocess(*PYTEST_PLUGIN, "--help")
    assert "--jax-python" in helped.stdout.str()


def test_workers_run_cells_ahead_and_keep_order(run_suite):
    _, report = run_suite("-k", "echo or conforming or differing", "--jax-workers", "3")
    assert [t["metadata"]["status"] for t in report["tests"]] == ["conforms", "differs", "conforms", "conforms"]


def test_failure_text_shows_the_diff_and_the_reproduction(run_suite):
    result, _ = run_suite("-k", "differing")
    result.stdout.fnmatch_lines(
        [
            "*answer: expected 42, observed 41 (changed)*",
            "*reproduce: jax-conformance run --jax *-k machinery.differing*",
        ]
    )


HARNESS_FAULTS = """
import os
import pytest
from conformance.engine import session


@pytest.hookimpl(trylast=True)
def pytest_runtest_setup(item):
    if item.name == "conforming":  # removed before pytest's runner pops it at the end of teardown, as the race did
        item.addfinalizer(lambda: os.environ.pop("PYTEST_CURRENT_TEST"))
    if item.name == "echo[a]":
        raise RuntimeError("setup broke")


answer = session.RunSession.result


def result(self, cell):
    if cell.id == "machinery.differing":  # what the worker's race raised, re-raised by the session
        raise KeyError("PYTEST_CURRENT_TEST")
    return answer(self, cell)


session.RunSession.result = result
"""


def test_a_harness_fault_in_any_phase_is_stored_with_its_cause_and_the_full_cell(run_suite, pytester):
    """Issue 57: pytest's runner (teardown), the run session (call) and another plugin's hook (setup) failing around
    a probe each leave an entry with the whole cell and the fault as its `harness` cause; before, two of them had no
    metadata (an `error` the report and the gate could not read) and the third no cause."""
    pytester.makepyfile(harness_faults=HARNESS_FAULTS)
    _, report = run_suite("-k", "conforming or differing or echo", "-p", "harness_faults")
    found = {t["nodeid"].split("::")[1]: t["metadata"] for t in report["tests"]}
    assert sorted(found) == ["conforming", "differing", "echo[a]", "echo[b]"]
    for name, metadata in found.items():
        assert metadata["rows"] and metadata["claim"] and metadata["section"], name
        assert metadata["command"].startswith("jax-conformance run --jax ")
        assert metadata["case"].startswith("machinery.")
    assert (found["conforming"]["status"], found["conforming"]["harness"]) == (
        "conforms",
        "teardown: KeyError: 'PYTEST_CURRENT_TEST'",
    )  # judged before the fault: its status stands
    assert (found["differing"]["status"], found["differing"]["harness"]) == (
        "error",
        "call: KeyError: 'PYTEST_CURRENT_TEST'",
    )
    assert found["differing"]["rows"] == ["fixture.differs"] and found["differing"]["param"] == ""
    assert (found["echo[a]"]["status"], found["echo[a]"]["harness"], found["echo[a]"]["param"]) == (
        "error",
        "setup: RuntimeError: setup broke",
        "a",
    )
    assert (found["echo[b]"]["status"], found["echo[b]"]["harness"]) == ("conforms", "")
    assert "harness failed" in found["echo[a]"]["reason"]
    cells = {name: CellResult.from_json(metadata) for name, metadata in found.items()}  # what the store reads
    assert cells["differing"].harness and cells["echo[a]"].rows == ["fixture.param.a"]
