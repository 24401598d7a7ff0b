"""The outputs registry (`report.formats`): a format is its module and one entry. A throwaway format registered here
(the registry patched, no other module touched) becomes an option of `report`, is checked like every output, and is
written; and the layers between the command line and the files (cli.py, cli_parser.py, report/render.py,
report/html.py) name no format of their own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conformance
from conformance import cli
from conformance.errors import ConformanceError
from conformance.report import formats
from conformance.report.formats import FORMATS, OutputFormat, outputs_said, requested
from conformance.report.outputs import ReportData
from tests.test_report import GOLDEN

PACKAGE = Path(conformance.__file__).resolve().parent
LAYERS = ("cli.py", "cli_parser.py", "report/render.py", "report/html.py")


def runs_text(data: ReportData) -> str:
    """The throwaway format: one line per run of the report."""
    return "".join(f"{column.jax} on {column.platform}\n" for column in data.model.columns)


def per_run(data: ReportData) -> list[tuple[str, str]]:
    """The throwaway folder format: one file per run."""
    return [(f"{column.jax}.txt", f"{column.platform}\n") for column in data.model.columns]


@pytest.fixture
def registered(monkeypatch):
    """Two throwaway formats in the registry, for this test only: a file and a folder."""
    monkeypatch.setitem(FORMATS, "runs", OutputFormat("runs", "--runs", "also write the runs, one a line", runs_text))
    monkeypatch.setitem(
        FORMATS,
        "per_run",
        OutputFormat(
            "per_run", "--per-run", "also write a file per run into DIR", per_run, folder=True, label="per run"
        ),
    )


def test_a_registered_format_is_an_option_of_report_and_is_written(registered, tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    shown = capsys.readouterr().out
    assert "--runs PATH" in shown and "also write the runs, one a line" in shown and "--per-run DIR" in shown
    page, runs, folder = tmp_path / "index.html", tmp_path / "runs.txt", tmp_path / "per-run"
    assert (
        cli.main(
            [
                "report",
                str(GOLDEN),
                "-o",
                str(page),
                "--runs",
                str(runs),
                "--per-run",
                str(folder),
                "--junit",
                str(tmp_path / "junit.xml"),
            ]
        )
        == 0
    )
    assert runs.read_text(encoding="utf-8") == "0.4.38 on linux-x86_64\n0.12.0.1 on linux-x86_64\n"
    assert sorted(p.name for p in folder.iterdir()) == ["0.12.0.1.txt", "0.4.38.txt"]
    assert (folder / "0.4.38.txt").read_text(encoding="utf-8") == "linux-x86_64\n"
    assert capsys.readouterr().out.splitlines() == [
        f"report: {page}",
        f"junit: {tmp_path / 'junit.xml'}",
        f"runs: {runs}",
        f"per run: {folder}",
    ]
    assert page.exists() and (tmp_path / "junit.xml").exists()


@pytest.mark.parametrize(
    "option, where, said",
    [
        ("--runs", "a result file", "is a result file"),
        ("--runs", "the page", "both name"),
        ("--per-run", "a .json name", "is named like a file; it takes a folder"),
        ("--per-run", "the results", "holds result files"),
    ],
)
def test_a_registered_format_is_checked_like_every_output_before_any_work(
    registered, tmp_path, capsys, option, where, said
):
    page = tmp_path / "index.html"
    path = {
        "a result file": sorted(GOLDEN.glob("*.json"))[0],
        "the page": page,
        "a .json name": tmp_path / "x.json",
        "the results": GOLDEN,
    }[where]
    assert cli.main(["report", str(GOLDEN), "-o", str(page), option, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and option in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_every_output_is_rendered_before_anything_is_written(monkeypatch, tmp_path, capsys):
    def refuses(data: ReportData) -> str:
        raise ConformanceError("the throwaway format refuses this report")

    monkeypatch.setitem(FORMATS, "refusing", OutputFormat("refusing", "--refusing", "never written", refuses))
    argv = [
        "report",
        str(GOLDEN),
        "-o",
        str(tmp_path / "index.html"),
        "--junit",
        str(tmp_path / "junit.xml"),
        "--refusing",
        str(tmp_path / "r.txt"),
    ]
    assert cli.main(argv) == 2
    assert "the throwaway format refuses this report" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # neither the page nor the JUnit that comes before it


def test_an_output_over_the_history_file_is_refused(registered, tmp_path, capsys):
    history = tmp_path / "history.json"
    history.write_text('{"entries": []}', encoding="utf-8")
    assert (
        cli.main(
            ["report", str(GOLDEN), "-o", str(tmp_path / "i.html"), "--history", str(history), "--runs", str(history)]
        )
        == 2
    )
    assert "--runs" in capsys.readouterr().err and history.read_text(encoding="utf-8") == '{"entries": []}'


def test_an_output_the_registry_does_not_hold_is_one_error_naming_the_formats(tmp_path):
    from conformance.report.html import write_report
    from conformance.results.load import load_results

    with pytest.raises(ConformanceError, match="no output format 'markdwon'; the formats are markdown, junit"):
        write_report(load_results(GOLDEN), tmp_path / "i.html", cases=[], outputs={"markdwon": tmp_path / "i.md"})
    assert list(tmp_path.iterdir()) == []


def test_requested_keeps_the_registry_order_and_leaves_out_what_was_not_asked_for(registered):
    values = {"per_run": "d", "junit": None, "runs": "r.txt", "markdown": "m.md", "output": "i.html"}
    assert list(requested(values).items()) == [
        ("markdown", Path("m.md")),
        ("runs", Path("r.txt")),
        ("per_run", Path("d")),
    ]
    assert outputs_said(Path("i.html"), requested(values)).splitlines() == [
        "report: i.html",
        "markdown: m.md",
        "runs: r.txt",
        "per run: d",
    ]


def test_no_format_takes_the_name_of_another_report_option():
    """A format's name is its option's dest: one equal to another option's (`output`, `history`) would take its
    place silently, so the registry's names are checked against the real parser's."""
    from conformance.cli_parser import build_parser

    commands = next(a for a in build_parser()._actions if a.choices and "report" in a.choices)
    dests = [action.dest for action in commands.choices["report"]._actions]
    assert sorted(d for d in dests if d in FORMATS) == sorted(FORMATS)  # every format an option, once
    assert len(dests) == len(set(dests))


def names_in_code(source: str) -> set[str]:
    """The string constants (docstrings left out) and attribute names of a module's code."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    }
    return found | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def test_the_layers_between_the_command_line_and_the_files_name_no_format():
    """A format added touches its module and the registry: cli.py, cli_parser.py, render.py and html.py name no
    format's option or name (`--markdown` and `args.markdown` are also `gate`'s and `upgrade`'s own option)."""
    own = {"--markdown", "markdown"}  # gate --markdown, upgrade --markdown: their decision's Markdown, not a format
    named = {
        layer: sorted(
            names_in_code((PACKAGE / layer).read_text(encoding="utf-8"))
            & ({f.option for f in FORMATS.values()} | set(FORMATS)) - own
        )
        for layer in LAYERS
    }
    assert named == {layer: [] for layer in LAYERS}
    assert names_in_code('"""doc."""\nx = args.junit + "--wptreport"') == {"junit", "--wptreport"}  # it can fail
    assert len(formats.output_formats()) == len(FORMATS) >= 4
