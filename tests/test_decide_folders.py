"""A team's own case folders (`--cases DIR`): namespaced ids and rows, checks, headers, and a real run (e2e)."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import cli
from conformance.core.case import forget_package, load_cases
from conformance.engine.folders import case_folder, case_folders, folder_digest, import_folder, package_folder_entry
from conformance.engine.matrix import RunRequest, load_all_cases, pytest_argv, run_sources
from conformance.engine.runner import Target
from conformance.engine.selection import all_cells
from conformance.engine.session import RunSession
from conformance.errors import ConformanceError
from conformance.results.store import merged_header

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "teamcases"
PROBE = """
from conformance.core.case import Expect, Observation, Section

SECTION = Section("Team §1", "{title}")


@SECTION.case(rows=["solver.sum"], claim="Sums add up.", expect=Expect({{"value": 6}}))
def sum_up():
    return Observation({{"value": 1 + 2 + 3}})
"""


def make_folder(parent: Path, name: str, title: str = "Team numerics", init: bool = True) -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    if init:
        (folder / "__init__.py").write_text("")
    (folder / "numerics.py").write_text(textwrap.dedent(PROBE.format(title=title)))
    return folder


@pytest.fixture
def isolated(monkeypatch):
    """Undo the folders' sys.path entries and forget their packages afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    names = []
    yield names
    for name in names:
        forget_package(name)


def test_ids_and_rows_are_namespaced_by_the_folder_so_two_numerics_modules_do_not_collide(tmp_path, isolated):
    first = case_folder(make_folder(tmp_path / "a", "alphacases", "Alpha numerics"))
    second = case_folder(make_folder(tmp_path / "b", "betacases", "Beta numerics"))
    isolated += ["alphacases", "betacases"]
    cases = [c for f in (first, second) for c in load_cases(import_folder(f))]
    assert [c.id for c in cases] == ["alphacases/numerics.sum_up", "betacases/numerics.sum_up"]
    assert [c.all_rows for c in cases] == [("alphacases.solver.sum",), ("betacases.solver.sum",)]
    assert [c.heading for c in cases] == ["Team §1 Alpha numerics", "Team §1 Beta numerics"]
    assert [c.package for c in cases] == ["alphacases", "betacases"]


@pytest.mark.parametrize(
    "name, init, message",
    [
        ("nocases", False, "has no __init__.py"),
        ("my-cases", True, "must be a Python identifier"),
        ("tests", True, "is a package the suite or JAX imports"),
    ],
)
def test_a_folder_that_cannot_be_a_package_is_one_line(tmp_path, name, init, message):
    with pytest.raises(ConformanceError, match=message):
        case_folder(make_folder(tmp_path, name, init=init))


def test_two_folders_with_one_name_are_refused(tmp_path):
    with pytest.raises(ConformanceError, match="have the same name 'samecases'"):
        case_folders([make_folder(tmp_path / "a", "samecases"), make_folder(tmp_path / "b", "samecases")])


def test_a_missing_folder_exits_2(tmp_path, capsys):
    assert cli.main(["list", "--cases", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_list_shows_the_folders_cases(tmp_path, capsys, isolated):
    folder = make_folder(tmp_path, "listcases")
    isolated.append("listcases")
    assert cli.main(["list", "--cases", str(folder), "-k", "listcases"]) == 0
    out = capsys.readouterr().out
    assert "listcases/numerics.sum_up" in out and "listcases.solver.sum" in out and "1 cells in 1 cases" in out


def test_a_folder_cell_runs_in_a_real_child_with_the_folder_on_its_path(tmp_path, isolated):
    folder = case_folder(make_folder(tmp_path, "childcases"))
    isolated.append("childcases")
    (cell,) = all_cells(load_cases(import_folder(folder)))
    target = Target(sys.executable, "linux-x86_64", "0.8.0", "childcases", (str(folder.path),))
    (found,) = RunSession(target, launcher="spawn").run([cell]).results
    assert (found.case, found.status.value, found.observation) == (
        "childcases/numerics.sum_up",
        "conforms",
        {"value": 6},
    )
    assert found.command == "jax-conformance run --jax 0.8.0 --cases CASES_DIR -k childcases/numerics.sum_up"


def test_headers_record_the_folder_and_a_hash_of_its_sources(tmp_path, isolated):
    folder = make_folder(tmp_path, "hashcases")
    isolated.append("hashcases")
    import_folder(case_folder(folder))
    (entry,) = package_folder_entry("hashcases")
    assert entry == {"name": "hashcases", "hash": folder_digest(folder)}
    (folder / "helpers.py").write_text("X = 1\n")
    assert folder_digest(folder) != entry["hash"]
    assert package_folder_entry("conformance.cases") == []


def test_a_merged_header_keeps_every_folder_that_ran():
    stored = {
        "case_package": "conformance.cases",
        "case_folders": [{"name": "a", "hash": "1"}, {"name": "b", "hash": "2"}],
    }
    new = {"case_package": "b", "case_folders": [{"name": "b", "hash": "3"}]}
    head = merged_header(stored, new)
    assert head["case_folders"] == [{"name": "a", "hash": "1"}, {"name": "b", "hash": "3"}]
    assert head["case_package"] == "conformance.cases"


@pytest.mark.e2e
def test_the_example_folder_runs_end_to_end_against_the_newest_environment_and_gates(tmp_path, capsys, isolated):
    """The README's worked example on the newest JAX: the team's known issue reproduces, and a rerun reuses it."""
    from conformance.envs.builder import EnvironmentBuilder
    from conformance.envs.matrix import load_matrix

    isolated.append("teamcases")
    newest = load_matrix("default").versions[-1]
    EnvironmentBuilder().prepare(newest)
    team = tmp_path / "teamcases"  # a copy: the test changes one of its files
    shutil.copytree(EXAMPLE, team, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "results"
    argv = [
        "run",
        "--jax",
        newest,
        "--cases",
        str(team),
        "-k",
        "teamcases",
        "--results",
        str(results),
        "-o",
        str(tmp_path / "report.html"),
        "-j",
        "2",
    ]
    assert cli.main(argv) == 0
    assert "Team §1 Our NaN guard" in (tmp_path / "report.html").read_text()  # its own section in the report
    (path,) = results.glob("*.json")
    data = json.loads(path.read_text())
    cells = {t["metadata"]["case"]: t["metadata"] for t in data["tests"]}
    assert set(cells) == {"teamcases/nan_guard.nan_guard_after_vmap", "teamcases/nan_guard.runtime_error_class"}
    guard = cells["teamcases/nan_guard.nan_guard_after_vmap"]
    assert guard["rows"] == ["teamcases.nan_guard.after_vmap"] and guard["known_issue"] is True
    assert guard["status"] == "conforms", guard  # the known issue reproduces on the newest release
    assert cells["teamcases/nan_guard.runtime_error_class"]["status"] == "conforms"
    assert data["jax_conformance"]["case_folders"] == [{"name": "teamcases", "hash": folder_digest(team)}]
    capsys.readouterr()
    assert cli.main(argv) == 0  # unchanged: the stored cells answer, the folder's hash included in their keys
    assert f"jax {newest}: all 2 selected cells answered by stored results" in capsys.readouterr().out
    assert json.loads(path.read_text()) == data
    (team / "helpers_note.py").write_text("# a helper of the folder changed\n")
    assert cli.main(argv) == 0  # its cells' keys hold the folder's files: they run again, nothing from storage
    again = json.loads(path.read_text())
    assert not any(t["metadata"]["reused"] for t in again["tests"])
    capsys.readouterr()
    assert cli.main(["gate", "--baseline", str(path), "--candidate", str(path)]) == 0
    assert "PASS" in capsys.readouterr().out


def test_a_run_starts_one_pytest_per_case_package_with_selected_cells(tmp_path, isolated):
    folder = case_folder(make_folder(tmp_path, "runcases"))
    isolated.append("runcases")
    cells = all_cells(load_cases(import_folder(folder)))
    assert run_sources(cells, [folder]) == [folder]
    builtin = all_cells(load_cases())[:1]
    assert run_sources(builtin + cells, [folder]) == [None, folder]
    env = type("Env", (), {"python": "/env/bin/python"})()
    request = RunRequest(versions=("0.8.0",), results=tmp_path, workers=2, retries=1, expression="x")
    argv = pytest_argv(env, tmp_path / "out.json", request, folder)
    assert argv[3:6] == [str(folder.path), "--conformance-cases", "runcases"]


def test_the_report_gives_a_folders_cases_their_own_section(tmp_path, isolated):
    from tests.synthetic_results import cell, write

    folder = case_folder(make_folder(tmp_path, "reportcases", "Report numerics"))
    isolated.append("reportcases")
    cases = load_all_cases([folder])
    write(
        tmp_path / "results", "0.8.3", "linux-x86_64", [cell("reportcases/numerics.sum_up", observation={"value": 6})]
    )
    report, problems = cli.render_report(tmp_path / "results", tmp_path / "report.html", cases=cases)
    text = report.read_text()
    assert problems == [] and "Team §1 Report numerics" in text and "reportcases/numerics.sum_up" in text


def test_a_folder_cell_that_lost_its_result_keeps_its_namespace():
    from conformance.results.schema import result_file_from_json

    report = {
        "jax_conformance": {
            "schema_version": 2,
            "jax": "0.8.3",
            "platform": "linux-x86_64",
            "case_package": "teamcases",
        },
        "tests": [{"nodeid": "../team/teamcases/nan_guard.py::probe[p]", "outcome": "failed"}],
    }
    (lost,) = result_file_from_json(report).cells
    assert (lost.case, lost.param, lost.status.value) == ("teamcases/nan_guard.probe", "p", "error")
