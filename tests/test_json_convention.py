"""One JSON convention (issue 60): every command with a result to hand on takes `--json PATH`, `-` meaning standard
output; then standard output is exactly one JSON document (`json.loads` reads it) and every other line goes to
standard error. The old spellings (`matrix --json` without a value, `api scan --format json`) still work for one
release, each with a one-line note. No JAX needed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli, jsonout
from conformance.cli_parser import build_parser
from conformance.engine.matrix import Selection, VersionRun
from conformance.engine.selection import Cell
from conformance.errors import ConformanceError
from conformance.report.commandjson import cases_json, run_json
from conformance.results.load import load_result_file
from conformance.results.outputs import check_outputs
from tests.synthetic_results import cell, write

FIXTURES = Path(__file__).parent / "fixture_cases"


def subcommands(parser: argparse.ArgumentParser, prefix: str = ""):
    """(`name`, parser) of every subcommand, nested ones (`api scan`) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield f"{prefix}{name}", child
                yield from subcommands(child, f"{prefix}{name} ")


def test_every_json_option_takes_a_path_or_dash_and_says_so():
    """One shape: each `--json` is `--json PATH`, typed as a path, its help naming `-` (standard output)."""
    found = {}
    for name, parser in subcommands(build_parser()):
        for action in parser._actions:
            if "--json" in action.option_strings:
                found[name] = action
    assert {
        "list",
        "run",
        "matrix",
        "diff",
        "gate",
        "bisect",
        "upgrade",
        "api diff",
        "api scan",
        "chapter",
        "perf",
        "downstream",
        "supported",
    } <= set(found)
    for name, action in found.items():
        assert action.metavar == "PATH" and action.type is jsonout.json_path, name
        assert "`-`: to standard output" in action.help, name
    for name, parser in subcommands(build_parser()):  # no other spelling of a JSON output is left undeprecated
        for action in parser._actions:
            if action.choices and "json" in action.choices and "--format" in action.option_strings:
                assert name == "api scan" and "deprecated" in action.help


def test_list_json_on_stdout_is_one_document_and_the_listing_goes_to_stderr(capsys):
    assert cli.main(["list", "--cases", str(FIXTURES), "-k", "fixture_cases", "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert (data["format"], data["version"]) == ("jax-conformance-cases", 1)
    assert data["cells"] == sum(len(case["cells"]) for case in data["cases"]) > 0
    assert all(case["id"].startswith("fixture_cases/") for case in data["cases"])
    assert f"{data['cells']} cells in {len(data['cases'])} cases" in captured.err


def test_list_json_to_a_file_leaves_stdout_to_the_listing(tmp_path, capsys):
    out = tmp_path / "cases.json"
    assert cli.main(["list", "--cases", str(FIXTURES), "-k", "fixture_cases", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"json: {out}" in captured.out and json.loads(out.read_text())["format"] == "jax-conformance-cases"


@pytest.mark.parametrize("spelling", ["./-", ".//-", "-/"])
def test_a_file_named_dash_spelled_another_way_is_a_file_not_standard_output(spelling, tmp_path, monkeypatch, capsys):
    """Only `-` itself is standard output: `Path` shortens `./-` to `-`, which was read as standard output."""
    assert jsonout.is_stdout(jsonout.json_path("-"))
    assert not jsonout.is_stdout(jsonout.json_path(spelling))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["list", "--cases", str(FIXTURES), "-k", "fixture_cases", f"--json={spelling}"]) == 0
    captured = capsys.readouterr()
    assert json.loads((tmp_path / "-").read_text())["format"] == "jax-conformance-cases"
    assert f"json: {tmp_path / '-'}" in captured.out and "cells in" in captured.out


def test_a_path_with_a_space_around_the_dash_is_that_file_as_written(tmp_path, monkeypatch, capsys):
    """Only `-` itself is standard output: `' -'` (a stray space in a script) is a file of that name, never read as
    `-` after trimming, so what a script wrote is where it said."""
    assert jsonout.json_path(" -") == Path(" -") and not jsonout.is_stdout(jsonout.json_path(" -"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["list", "--cases", str(FIXTURES), "-k", "fixture_cases", "--json", " -"]) == 0
    assert json.loads((tmp_path / " -").read_text())["format"] == "jax-conformance-cases"
    assert "cells in" in capsys.readouterr().out and not (tmp_path / "-").exists()


def test_cases_json_lists_each_case_once_with_its_cells_in_order():
    case = type("C", (), {"id": "m.c", "section": "§1", "has_known_issue": True, "claim": "x", "all_rows": ("r",)})()
    case.cell_id = lambda param: f"m.c[{param}]"
    data = cases_json([Cell(case, "a"), Cell(case, "b")])
    assert data["cells"] == 2 and len(data["cases"]) == 1
    assert data["cases"][0]["cells"] == ["m.c[a]", "m.c[b]"] and data["cases"][0]["known_issue"] is True


def test_matrix_json_dash_is_versioned_and_the_bare_flag_keeps_the_old_list_with_a_note(capsys):
    assert cli.main(["matrix", "0.5.0,0.4.38", "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {
        "format": "jax-conformance-matrix",
        "version": 1,
        "versions": ["0.4.38", "0.5.0"],
    }
    assert cli.main(["matrix", "0.5.0,0.4.38", "--json"]) == 0  # deprecated: the old output, and one note
    captured = capsys.readouterr()
    assert json.loads(captured.out) == ["0.4.38", "0.5.0"]
    notes = captured.err.strip().splitlines()
    assert len(notes) == 1 and "deprecated" in notes[0] and "will need PATH or `-`" in notes[0]
    assert cli.main(["matrix", "0.5.0,0.4.38"]) == 0
    assert capsys.readouterr().out.split() == ["0.4.38", "0.5.0"]


def test_matrix_json_before_the_names_is_read_as_the_old_flag_when_the_value_is_only_names(tmp_path, capsys):
    """`matrix --json "0.5.0,0.4.38"` meant the flag and then NAMES; a value that is a file name is a PATH."""
    assert cli.main(["matrix", "--json", "0.5.0,0.4.38"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == ["0.4.38", "0.5.0"] and "deprecated" in captured.err
    out = tmp_path / "0.5.0"  # a folder in the name: a path, never versions
    assert cli.main(["matrix", "0.5.0", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["versions"] == ["0.5.0"]


def test_matrix_json_with_a_ci_plan_is_one_line_exit_2(capsys, tmp_path):
    assert cli.main(["matrix", "0.4.38", "--ci-jobs", "2", "--json", str(tmp_path / "v.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give one of them" in err[0]
    assert not (tmp_path / "v.json").exists()


def test_diff_and_gate_json_dash_print_one_document_and_their_text_to_stderr(tmp_path, capsys):
    before = write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.x", status="conforms")])
    after = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x", status="differs")])
    assert cli.main(["diff", str(before), str(after), "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["kind"] == "diff" and "a.x" in captured.err
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--json", "-"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["kind"] == "gate" and data["passed"] is False and "REGRESSION" in captured.err
    assert sys.stdout is not sys.stderr  # the redirection ended with the command


def test_the_output_check_lets_dash_through_as_a_file_and_refuses_it_as_a_folder(tmp_path):
    results = tmp_path / "results"
    check_outputs([("--json", Path("-")), ("-o", tmp_path / "r.html")], results=results)  # no file named -
    with pytest.raises(ConformanceError, match="standard output"):
        check_outputs([], folders=[("--json", Path("-"))])
    assert not Path("-").exists()


def test_write_json_to_dash_reaches_the_real_stdout_while_other_text_goes_to_stderr(capsys):
    with jsonout.human_text_to_stderr(True):
        print("progress")
        said = jsonout.write_json("-", '{"a": 1}')
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"a": 1} and captured.err == "progress\n" and said == "json: stdout"
    with jsonout.human_text_to_stderr(False):
        print("progress")
    assert capsys.readouterr().out == "progress\n"


def test_with_json_dash_a_child_process_writes_its_stdout_to_stderr_too(tmp_path):
    """`run` starts pytest, `chapter` its runner: their standard output must not reach the JSON's (measured: a
    run's pytest progress dots came before the document until the file descriptor itself was moved)."""
    script = tmp_path / "child.py"
    script.write_text(
        "import subprocess, sys\n"
        "from conformance import jsonout\n"
        "with jsonout.human_text_to_stderr(True):\n"
        "    print('parent text')\n"
        "    subprocess.run([sys.executable, '-c', 'print(\"child text\")'], check=True)\n"
        "    jsonout.write_json('-', '{\"a\": 1}')\n"
        "print('after')\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"a": 1}\nafter\n'
    assert "parent text" in done.stderr and "child text" in done.stderr


def test_run_json_counts_each_status_per_release_and_names_the_failed(tmp_path):
    path = write(
        tmp_path / "r",
        "0.7.2",
        "linux-x86_64",
        [cell("a.x", status="conforms"), cell("a.y", status="differs"), cell("a.z", status="differs")],
    )
    done = VersionRun(load_result_file(path), path, 1.5, 3, 1, "fork")
    selection = Selection(declared=[], selected=[object()] * 3, chosen=[object()] * 3)
    data = run_json([done], ["jax 0.8.0"], tmp_path / "r", selection, None, tmp_path / "r" / "report.html")
    assert (data["format"], data["version"], data["passed"]) == ("jax-conformance-run", 1, False)
    (release,) = data["releases"]
    assert release["counts"]["conforms"] == 1 and release["counts"]["differs"] == 2 and release["counts"]["error"] == 0
    assert (release["ran"], release["reused"], release["result_file"]) == (2, 1, str(path))
    assert data["failed"] == ["jax 0.8.0"] and data["report"].endswith("report.html")
    assert run_json([done], [], tmp_path / "r", selection)["passed"] is True


def test_only_json_takes_dash_as_standard_output_other_outputs_named_dash_are_files_and_checked(tmp_path, monkeypatch):
    # `--markdown -` and `-o -` stay a file named `-`: two of them on one path are refused as any two outputs are
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConformanceError, match="--markdown and -o both name -"):
        check_outputs([("-o", Path("-")), ("--markdown", Path("-")), ("--json", Path("-"))])
    check_outputs([("--json", Path("-")), ("-o", Path("-"))])  # `--json -` is no file: no clash with `-o -`
