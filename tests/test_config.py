"""The team's defaults (`[tool.jax-conformance]` in pyproject.toml, or jax-conformance.toml), `-v`/`-q` and no
abbreviated options (issue 60). No JAX."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import cli
from conformance.cli_parser import build_parser
from conformance.config import load_config
from conformance.engine import matrix
from conformance.report.progress import event_lines

TABLE = """\
[project]
name = "team"

[tool.jax-conformance]
cases = ["team_cases"]
results = "ci/results"
expectations = "ci/expected.toml"
index-url = "https://mirror.example/simple"
find-links = ["wheels"]
pre = true
"""


def test_the_table_is_found_from_a_subfolder_and_its_paths_read_from_its_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text(TABLE)
    (tmp_path / "src" / "deep").mkdir(parents=True)
    config = load_config(tmp_path / "src" / "deep")
    assert config.source == tmp_path / "pyproject.toml"
    assert config.values == {
        "cases": [str(tmp_path / "team_cases")],
        "results": tmp_path / "ci/results",
        "expectations": tmp_path / "ci/expected.toml",
        "index_url": "https://mirror.example/simple",
        "find_links": ["wheels"],
        "pre": True,
    }
    # a jax-conformance.toml in the same folder wins; a nearer pyproject.toml without the table is passed over
    (tmp_path / "jax-conformance.toml").write_text('results = "other"\n')
    (tmp_path / "src" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    assert load_config(tmp_path / "src" / "deep").values == {"results": tmp_path / "other"}
    assert load_config(tmp_path / "src" / "deep").source == tmp_path / "jax-conformance.toml"


def test_command_line_flags_win_and_list_keys_take_more_from_the_command_line(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(TABLE)
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run", "--jax", "0.4.38"])
    assert (args.results, args.index_url, args.pre, args.cases) == (
        tmp_path / "ci/results",
        "https://mirror.example/simple",
        True,
        [str(tmp_path / "team_cases")],
    )
    args = build_parser().parse_args(
        ["run", "--results", "mine", "--index-url", "https://other/simple", "--cases", "more"]
    )
    assert (args.results, args.index_url, args.cases) == (
        Path("mine"),
        "https://other/simple",
        [str(tmp_path / "team_cases"), "more"],
    )
    assert build_parser().parse_args(["gate"]).expectations == tmp_path / "ci/expected.toml"
    assert build_parser().parse_args(["supported"]).results == [tmp_path / "ci/results"]  # a list option there


def test_without_a_configuration_the_defaults_are_the_tools(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run"])
    assert (args.results, args.index_url, args.pre, args.cases) == (Path("results"), "", False, [])


@pytest.mark.parametrize(
    "text, said",
    [
        ("[tool.jax-conformance]\nresult = 'x'\n", "unknown key 'result'"),
        ("[tool.jax-conformance]\ncases = 'one'\n", "`cases` should be a list of non-empty strings, not 'one'"),
        ("[tool.jax-conformance]\npre = 'yes'\n", "`pre` should be true or false"),
        ("[tool.jax-conformance]\nresults = ''\n", "`results` should be a non-empty string"),
        ("[tool.jax-conformance\n", "is not valid TOML"),
    ],
)
def test_a_bad_key_or_value_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, text, said):
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["list"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and str(tmp_path / "pyproject.toml") in err


def test_no_option_is_taken_from_an_abbreviation(capsys):
    """`matrix --js` was `--json`; a later option could change what an abbreviation means (pytest turns it off)."""
    for argv in (["matrix", "--js"], ["run", "--res", "x"], ["chapter", "x.md", "--block"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
    assert "unrecognized arguments: --js" in capsys.readouterr().err


def test_quiet_drops_the_progress_lines_not_the_warnings_and_verbose_names_the_configuration(
    tmp_path, monkeypatch, capsys
):
    ready = matrix.AnsweredFromStorage("0.4.38", 3, Path("r.json"))
    notice = matrix.Notice("set aside a broken file")
    build_parser().parse_args(["run"])
    assert [s for s, _ in event_lines(ready) + event_lines(notice)] == ["stdout", "stderr"]
    build_parser().parse_args(["run", "-q"])
    assert event_lines(ready) == [] and event_lines(notice) == [("stderr", "jax-conformance: set aside a broken file")]
    build_parser().parse_args(["gate", "--quiet"])
    assert event_lines(ready) == []
    build_parser().parse_args(["run"])  # each command line starts over
    assert event_lines(ready) != []
    (tmp_path / "jax-conformance.toml").write_text('results = "r"\n')
    monkeypatch.chdir(tmp_path)
    build_parser().parse_args(["chapter", "-v", "x.md"])
    assert capsys.readouterr().err == f"jax-conformance: defaults from {tmp_path / 'jax-conformance.toml'}: results\n"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "-q", "-v"])
