"""The command line: listing, and every bad input as one clear line with a non-zero exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import cli
from conformance.engine import matrix
from conformance.core.case import load_cases
from conformance.engine.selection import all_cells, select_cells
from tests.fake_index import fake_builder


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """Point the CLI at the fake index, with only the given Python versions installed."""

    def install(*pythons):
        monkeypatch.setattr(cli, "EnvironmentBuilder", lambda: fake_builder(tmp_path / "cache", list(pythons)))

    return install


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("jax-conformance: error: ")
    return err[0]


def test_list_shows_cases_rows_and_claims(capsys):
    assert cli.main(["list", "-k", "debug_nans"]) == 0
    out = capsys.readouterr().out
    assert "numerics.debug_nans_vmap_miss [none, vmap, clear, with, enter_idiom]" in out
    assert "numerics.debug_nans.vmap_miss.with" in out
    selected = select_cells(all_cells(load_cases()), "debug_nans")
    assert f"{len(selected)} cells in {len({c.case.id for c in selected})} cases" in out


def test_list_of_everything_names_the_six_headline_behaviours(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for row in [
        "program.closure_constant_miscompile",
        "tracers.hierarchy.subclassing",
        "compile.cache_size.clear",
        "config.traceback_filtering.invalid_value",
        "compile.transfer_guard.cpu",
    ]:
        assert row in out


def test_unknown_jax_version(offline, capsys, tmp_path):
    offline("3.12.1")
    assert cli.main(["run", "--jax", "0.99", "--results", str(tmp_path / "r")]) == 2
    assert "unknown JAX version '0.99'" in one_error_line(capsys)
    assert not (tmp_path / "r").exists()


def test_matrix_that_does_not_parse(capsys, tmp_path):
    bad = tmp_path / "broken.toml"
    bad.write_text("versions = [\n")
    assert cli.main(["run", "--matrix", str(bad)]) == 2
    assert "does not parse as TOML" in one_error_line(capsys)


def test_unknown_matrix_name(capsys):
    assert cli.main(["run", "--matrix", "nightly"]) == 2
    assert "no matrix 'nightly'" in one_error_line(capsys)


def test_no_installed_python_fits(offline, capsys, tmp_path):
    offline("3.11.7")
    assert cli.main(["run", "--jax", "0.12.0.1", "--results", str(tmp_path / "r")]) == 2
    line = one_error_line(capsys)
    assert "no installed Python fits jax 0.12.0.1" in line and "3.11.7" in line


def test_selection_that_matches_nothing(capsys):
    assert cli.main(["list", "-k", "no_such_behaviour"]) == 2
    assert "selects no cell" in one_error_line(capsys)


def test_report_of_a_file_that_is_not_json(capsys, tmp_path):
    bad = tmp_path / "0.1-linux.json"
    bad.write_text("{ not json")
    assert cli.main(["report", str(bad), "-o", str(tmp_path / "index.html")]) == 2
    assert str(bad) in one_error_line(capsys)
    assert not (tmp_path / "index.html").exists()


def test_interrupted_run_keeps_finished_files(monkeypatch, tmp_path, capsys):
    from conformance.envs.builder import JaxEnvironment
    from conformance.envs.interpreters import Interpreter

    builder = fake_builder(tmp_path / "cache", ["3.12.1", "3.13.0"])
    monkeypatch.setattr(
        builder,
        "prepare",
        lambda v: JaxEnvironment(v, Path("/nowhere"), Interpreter("/usr/bin/python3", "3.12.1"), False, 0.0),
    )
    monkeypatch.setattr(cli, "EnvironmentBuilder", lambda: builder)
    results = tmp_path / "results"

    def fake_run_version(env, request, on_event):
        if env.version == "0.12.0.1":
            raise KeyboardInterrupt
        path = results / f"{env.version}-linux-x86_64.json"
        results.mkdir(exist_ok=True)
        path.write_text("{}")
        return matrix.VersionRun(file=None, path=path, wall_s=1.0, cells=11, reused=0, launcher="fork")

    monkeypatch.setattr(matrix, "run_version", fake_run_version)
    status = cli.main(["run", "--jax", "0.4.38", "--jax", "0.12.0.1", "--results", str(results)])
    assert status == 130
    assert "interrupted; kept 1 finished result file(s)" in capsys.readouterr().err
    assert (results / "0.4.38-linux-x86_64.json").exists()


def test_report_to_a_path_that_cannot_be_written(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    golden = str(Path(__file__).parent / "golden")
    assert cli.main(["report", golden, "-o", str(blocker / "index.html")]) == 2
    assert str(blocker) in one_error_line(capsys)


def test_results_folder_that_is_a_file(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["run", "--jax", "0.12.0.1", "--results", str(blocker)]) == 2
    assert "is a file" in one_error_line(capsys)


def test_report_writes_html_and_markdown(capsys, tmp_path):
    golden = str(Path(__file__).parent / "golden")
    html, markdown = tmp_path / "out" / "index.html", tmp_path / "out" / "index.md"
    assert cli.main(["report", golden, "-o", str(html), "--markdown", str(markdown)]) == 0
    assert "jax 0.12.0.1" in html.read_text()
    assert markdown.read_text().startswith("# JAX conformance report")
