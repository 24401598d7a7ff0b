"""`results.outputs`: where a command may write its outputs. An output over a result file (an input, a file of the
results folder, any existing file named like one) or over another output, or one that cannot be written, is refused
in one exact line before any work; everything else is allowed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.errors import ConformanceError
from conformance.results import outputs
from conformance.results.outputs import check_outputs, check_writable

if TYPE_CHECKING:
    import subprocess

RESULT = "0.4.38-linux-x86_64.json"


def refused(*args, **kwargs) -> str:
    with pytest.raises(ConformanceError) as caught:
        check_outputs(*args, **kwargs)
    return str(caught.value)


def test_an_output_over_an_input_is_refused_even_when_the_input_is_not_named_like_a_result(tmp_path):
    given = tmp_path / "mine.json"
    given.write_text("{}")
    assert refused([("-o", given)], inputs=[given]) == f"-o {given} is a result file; write the output elsewhere"


def test_an_output_over_a_result_file_of_an_input_folder_is_refused(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / RESULT).write_text("{}")
    link = tmp_path / "link.md"  # not named like a result: only the folder's listing protects it
    link.symlink_to(folder / RESULT)
    assert refused([("--markdown", link)], inputs=[folder]).startswith(f"--markdown {link} is a result file")


def test_an_output_linked_to_a_result_of_the_results_folder_is_refused(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / RESULT).write_text("{}")
    link = tmp_path / "report.html"
    link.symlink_to(results / RESULT)
    assert refused([("-o", link)], results=results) == f"-o {link} is a result file; write the output elsewhere"


def test_a_new_result_named_file_in_the_results_folder_is_refused(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    out = results / "0.11.2-linux-x86_64.json"
    assert refused([("-o", out)], results=results) == (
        f"-o {out} is named like a result file in a folder of them, so the next command would read it as one; "
        f"write the output elsewhere"
    )
    assert not out.exists()


def test_a_new_result_named_file_in_a_folder_read_or_a_builds_folder_is_refused(tmp_path):
    """Review: `report r --compat-json r/0.13.0-linux-x86_64.json` was accepted (only `results=` was checked), and so
    was bisect's `--json r/builds/python-abc/0.9.0-linux-x86_64.json`; the next command read each as a result file."""
    read = tmp_path / "read"
    read.mkdir()
    (read / RESULT).write_text("{}")
    new = read / "0.13.0-linux-x86_64.json"
    assert "is named like a result file in a folder of them" in refused([("--compat-json", new)], inputs=[read])
    results = tmp_path / "results"
    (results / "builds" / "python-abc").mkdir(parents=True)
    built = results / "builds" / "python-abc" / "0.9.0-linux-x86_64.json"
    assert "is named like a result file in a folder of them" in refused([("--json", built)], results=results)
    check_outputs([("--compat-json", read / "compat.json")], inputs=[read])  # any other name there is fine
    assert not new.exists() and not built.exists()


def test_any_existing_result_named_file_is_refused_without_inputs_or_results(tmp_path):
    out = tmp_path / RESULT
    out.write_text("{}")
    assert refused([("--junit", out)]) == f"--junit {out} is a result file; write the output elsewhere"


def test_an_absent_output_is_skipped_and_the_next_one_still_checked(tmp_path):
    given = tmp_path / RESULT
    given.write_text("{}")
    assert refused([("-o", None), ("--markdown", given)], inputs=[given]).startswith(f"--markdown {given} ")


def test_ordinary_outputs_are_allowed_beside_results(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / RESULT).write_text("{}")
    new_result_name = tmp_path / "elsewhere" / "0.5.0-linux-x86_64.json"  # named like one, but neither there nor new
    check_outputs(
        [
            ("-o", results / "index.html"),
            ("--markdown", tmp_path / "a" / "b" / "page.md"),
            ("--junit", new_result_name),
            ("--compat-json", None),
        ],
        inputs=[results],
        results=results,
    )
    check_outputs([("-o", tmp_path / "index.html")], results=tmp_path / "not-yet-made")
    check_outputs([("-o", tmp_path / "index.html")], results=None)
    assert not (tmp_path / "a").exists()


def test_a_results_path_that_is_a_file_is_not_listed(tmp_path):
    not_a_folder = tmp_path / "results"
    not_a_folder.write_text("x")
    check_outputs([("-o", tmp_path / "index.html")], results=not_a_folder)


def test_two_outputs_naming_one_file_are_refused_naming_both_options(tmp_path):
    first = tmp_path / "out.md"
    second = tmp_path / "sub" / ".." / "out.md"
    assert refused([("-o", first), ("--markdown", second)]) == (
        f"--markdown and -o both name {second}; give each output its own file"
    )
    check_outputs([("-o", first), ("--markdown", tmp_path / "other.md")])


def test_each_output_is_checked_as_writable(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    assert refused([("-o", tmp_path / "fine.html"), ("--markdown", folder)]) == (
        f"--markdown {folder} is a folder; name a file"
    )


def test_a_folder_is_not_a_file(tmp_path):
    with pytest.raises(ConformanceError) as caught:
        check_writable(tmp_path, "-o")
    assert str(caught.value) == f"-o {tmp_path} is a folder; name a file"


def test_a_missing_folder_is_made_later_so_its_nearest_existing_parent_is_checked(tmp_path):
    check_writable(tmp_path / "a" / "b" / "c" / "out.html", "-o")
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(ConformanceError) as caught:
        check_writable(blocker / "sub" / "out.html", "--junit")
    assert str(caught.value) == f"--junit {blocker / 'sub' / 'out.html'}: {blocker} is not a writable folder"


def test_a_folder_without_write_permission_is_refused(tmp_path, monkeypatch):
    # The tests may run as root, for whom every folder is writable; so the permission answer is the stand-in here.
    locked = tmp_path / "locked"
    locked.mkdir()
    asked = []

    def access(path, mode):
        asked.append((Path(path), mode))
        return Path(path) != locked

    monkeypatch.setattr(outputs.os, "access", access)
    with pytest.raises(ConformanceError) as caught:
        check_writable(locked / "new" / "out.html", "-o")
    assert str(caught.value) == f"-o {locked / 'new' / 'out.html'}: {locked} is not a writable folder"
    assert asked == [(locked, os.W_OK)]
    check_writable(tmp_path / "out.html", "-o")


def test_inputs_stay_protected_when_a_results_folder_is_given_too(tmp_path):
    given = tmp_path / "mine.json"
    given.write_text("{}")
    results = tmp_path / "results"
    results.mkdir()
    (results / RESULT).write_text("{}")
    assert refused([("-o", given)], inputs=[given], results=results) == (
        f"-o {given} is a result file; write the output elsewhere"
    )


def test_a_build_result_under_the_results_folder_is_protected(tmp_path):
    results = tmp_path / "results"
    (results / "builds" / "python-0123abcd").mkdir(parents=True)
    stored = results / "builds" / "python-0123abcd" / "0.12.0.1+corp.3-linux-x86_64.json"
    stored.write_text("{}")
    link = tmp_path / "verdict.txt"
    link.symlink_to(stored)
    assert refused([("--json", link)], results=results) == f"--json {link} is a result file; write the output elsewhere"


@pytest.mark.parametrize("how", ["json over a result", "issue over a result", "json is a folder", "both the same"])
def test_bisect_refuses_its_outputs_in_one_line_before_the_search(tmp_path, capsys, monkeypatch, how):
    """A01: `bisect --json`/`--issue` naming a result file of the folder bisected, a folder, or each other is refused
    before anything is built or run (the search itself is replaced by a tripwire)."""
    from conformance import cli
    from conformance.decide import bisect_session

    results = tmp_path / "r"
    results.mkdir()
    stored = results / "0.11.2-linux-x86_64.json"
    stored.write_text('{"kept": true}')
    monkeypatch.setattr(cli, "run_any_bisect", lambda *a, **k: pytest.fail("the search started"))
    assert bisect_session.run_bisect is not None
    json_out, issue_out = {
        "json over a result": (stored, None),
        "issue over a result": (None, results / "0.12.0.1-linux-x86_64.json"),
        "json is a folder": (tmp_path, None),
        "both the same": (tmp_path / "out.txt", tmp_path / "out.txt"),
    }[how]
    argv = [
        "bisect",
        "numerics.debug_nans_vmap_miss:vmap",
        "--good",
        "0.8.0",
        "--bad",
        "0.12.0.1",
        "--results",
        str(results),
    ]
    argv += ["--json", str(json_out)] if json_out else []
    argv += ["--issue", str(issue_out)] if issue_out else []
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("jax-conformance: error: --")
    assert {
        "json over a result": "is a result file",
        "issue over a result": "is named like a result file",
        "json is a folder": "is a folder",
        "both the same": "both name",
    }[how] in err[0]
    assert stored.read_text() == '{"kept": true}' and sorted(p.name for p in results.iterdir()) == [stored.name]


def test_an_output_over_a_file_the_command_reads_is_refused(tmp_path):
    """Review of A01: `gate --expectations e.toml --markdown e.toml`, `gate --to-python P --markdown P`, `chapter F
    --json F` and `api diff a.json b.json --json a.json` wrote over what they read, and exited 0."""
    read = tmp_path / "expect.toml"
    read.write_text("")
    link = tmp_path / "same.toml"
    link.symlink_to(read)
    assert (
        refused([("--markdown", read)], reads=[read])
        == f"--markdown {read} is {read}, which this command reads; write the output elsewhere"
    )
    assert "which this command reads" in refused([("--json", link)], reads=[None, read])
    check_outputs([("--json", tmp_path / "other.json")], reads=[read, tmp_path / "missing"])  # nothing else refused


def test_an_output_in_the_census_folder_or_inside_an_output_folder_is_refused(tmp_path):
    """Review of A01: `api diff --json results/api/0.6.0-linux-x86_64.json` wrote over the census the command had just
    stored, and `report --compat-json DIR/wptreport-….json --wptreport DIR` was replaced by a wptreport."""
    results = tmp_path / "results"
    (results / "api").mkdir(parents=True)
    out = results / "api" / "0.6.0-linux-x86_64.json"
    assert refused([("--json", out)], results=results).startswith(f"--json {out} is in the census folder")
    folder = tmp_path / "wpt"
    inside = folder / "wptreport-0.8.0-linux-x86_64.json"
    assert (
        refused([("--compat-json", inside)], folders=[("--wptreport", folder)])
        == f"--compat-json {inside} is inside --wptreport {folder}, whose files that command writes; write it elsewhere"
    )


def test_a_symlink_loop_is_never_a_traceback(tmp_path, capsys):
    """Review: a loop of links, named as an output or as results, gave `RuntimeError: Symlink loop` (Path.resolve)
    and a traceback. As an output it is a path like any other (the link is replaced); as results, one line."""
    from conformance import cli

    loop = tmp_path / "loop1"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    check_outputs([("-o", loop)], results=tmp_path)
    assert cli.main(["report", str(loop), "-o", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0] and str(loop) in err[0]


def test_an_output_equal_to_a_case_module_or_the_matrix_file_or_inside_a_case_folder_is_refused(tmp_path):
    """issue 57: `perf --json PATH` overwrote the team's case module or the --matrix file."""
    cases = tmp_path / "teamcases"
    cases.mkdir()
    (cases / "checks.py").write_text("# a case module\n")
    matrix = tmp_path / "mine.toml"
    matrix.write_text('versions = ["0.12.0.1"]\n')
    reads = outputs.inputs_read([cases], str(matrix))
    assert refused([("--json", cases / "checks.py")], reads=reads) == (
        f"--json {cases / 'checks.py'} is inside {cases}, a folder this command reads; write the output elsewhere"
    )
    assert refused([("--json", cases / "new.json")], reads=reads).startswith(f"--json {cases / 'new.json'} is inside")
    assert refused([("--json", matrix)], reads=reads) == (
        f"--json {matrix} is {matrix}, which this command reads; write the output elsewhere"
    )
    assert refused([("-o", outputs.matrix_path("default"))], reads=outputs.inputs_read()).endswith(
        "which this command reads; write the output elsewhere"
    )  # no --matrix: the default matrix's file
    check_outputs([("--json", tmp_path / "out.json")], reads=reads)  # beside them is fine


def test_a_folder_of_outputs_holding_or_inside_an_input_is_refused(tmp_path):
    listed = tmp_path / "lists" / "pages.toml"
    listed.parent.mkdir()
    listed.write_text("")
    assert refused([], folders=[("--json", tmp_path / "lists")], reads=[listed]) == (
        f"--json {tmp_path / 'lists'} holds {listed}, which this command reads; write the outputs to another folder"
    )
    assert refused([], folders=[("--json", tmp_path / "lists" / "out")], reads=[tmp_path / "lists"]).startswith(
        f"--json {tmp_path / 'lists' / 'out'} is inside {tmp_path / 'lists'}"
    )


def test_the_commands_refuse_an_output_over_what_they_read_before_any_work(tmp_path, capsys):
    from conformance import cli

    cases = tmp_path / "teamcases"
    cases.mkdir()
    module = cases / "checks.py"
    module.write_text("# a case module\n")
    matrix = tmp_path / "mine.toml"
    matrix.write_text('versions = ["0.12.0.1"]\n')
    for argv in (
        ["perf", "--jax", "0.0.1", "--cases", str(cases), "--json", str(module)],
        ["perf", "--matrix", str(matrix), "--json", str(matrix)],
        ["run", "--matrix", str(matrix), "-o", str(matrix), "--results", str(tmp_path / "r")],
    ):
        before = module.read_text() + matrix.read_text()
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("which this command reads" in err or "a folder this command reads" in err)
        assert module.read_text() + matrix.read_text() == before


def _limited(code: str, tmp_path) -> "subprocess.CompletedProcess[str]":
    """Run `code` in a child whose files may not grow past 4 KiB (RLIMIT_FSIZE): writes fail as on a full disk,
    also as root, with no stand-in."""
    import subprocess
    import sys

    prelude = (
        "import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
    )
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)},
    )


def test_a_results_folder_that_cannot_take_a_file_is_one_line_before_any_work(tmp_path):
    """issue 57: a full or read-only results folder was found only after a perf round was sampled."""
    done = _limited(
        f"from conformance.results.outputs import check_results_writable\n"
        f"check_results_writable(__import__('pathlib').Path({str(tmp_path / 'r')!r}))",
        tmp_path,
    )
    assert "ConformanceError: the results folder" in done.stderr and "cannot be written (File too large" in done.stderr
    assert list(tmp_path.iterdir()) == []  # the probe file is removed
    outputs.check_results_writable(tmp_path / "r" / "new")  # unlimited: fine, and nothing is left
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("")
    for results in (tmp_path / "file", tmp_path / "file" / "under"):
        with pytest.raises(ConformanceError, match="--results .* is not a folder|cannot be written"):
            outputs.check_results_writable(results)


@pytest.mark.parametrize("command", ["run", "perf"])
def test_run_and_perf_refuse_a_results_folder_that_cannot_be_written_before_building(tmp_path, command):
    done = _limited(
        f"import sys\nfrom conformance import cli\nsys.exit(cli.main([{command!r}, '--jax', '0.0.1', "
        f"'--results', {str(tmp_path / 'r')!r}]))",
        tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(
        f"jax-conformance: error: the results folder {tmp_path / 'r'} cannot be written "
        f"(File too large, writing a test file in {tmp_path})"
    )
    assert done.stderr.count("\n") == 1 and "jax 0.0.1" not in done.stdout


def test_a_write_that_fails_on_a_full_disk_names_its_file(tmp_path):
    done = _limited(
        f"from conformance.atomic import write_text_atomically\n"
        f"try:\n    write_text_atomically({str(tmp_path / 'big.json')!r}, 'x' * 100000)\n"
        f"except OSError as exc:\n    print(exc.filename, exc.strerror)",
        tmp_path,
    )
    assert done.stdout.strip() == f"{tmp_path / 'big.json'} File too large", done.stderr
    assert list(tmp_path.iterdir()) == []


def test_gate_diff_upgrade_and_bisect_refuse_an_output_over_a_case_module_or_the_scanned_code(tmp_path, capsys):
    """issue 57, found again by an independent review: `gate`, `gate --perf`, `diff`, `upgrade` and both `bisect`s
    wrote `--json`/`--markdown` over the team's case module or a scanned file of its code, exit 0."""
    import shutil

    from conformance import cli
    from tests import synthetic_results

    cases = tmp_path / "team57cases"  # a name no other test's package takes (a folder may not shadow one)
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "teamcases", cases)
    module = cases / "nan_guard.py"
    code = tmp_path / "code"
    code.mkdir()
    (code / "model.py").write_text("import jax\n\nstep = jax.tree_map\n")
    a = synthetic_results.write(tmp_path / "a", "0.11.2", "linux-x86_64", [])
    b = synthetic_results.write(tmp_path / "b", "0.12.0.1", "linux-x86_64", [])
    sides = ["--baseline", str(a), "--candidate", str(b)]
    for argv in (
        ["gate", *sides, "--cases", str(cases), "--json", str(module)],
        ["gate", *sides, "--cases", str(cases), "--markdown", str(cases / "__init__.py")],
        ["gate", "--from", "0.11.2", "--to", "0.12.0.1", "--perf", "--cases", str(cases), "--json", str(module)],
        ["diff", str(a), str(b), "--cases", str(cases), "--json", str(module)],
        ["upgrade", "--from", "0.11.2", "--to", "0.12.0.1", "--cases", str(cases), "--json", str(module)],
        ["upgrade", "--from", "0.11.2", "--to", "0.12.0.1", "--scan", str(code), "--markdown", str(code / "model.py")],
        [
            "bisect",
            "team57cases.nan_guard",
            "--good",
            "0.11.2",
            "--bad",
            "0.12.0.1",
            "--cases",
            str(cases),
            "--json",
            str(module),
        ],
        [
            "bisect",
            "w",
            "--metric",
            "run_s",
            "--good",
            "0.11.2",
            "--bad",
            "0.12.0.1",
            "--cases",
            str(cases),
            "--issue",
            str(module),
        ],
    ):
        before = module.read_text() + (cases / "__init__.py").read_text() + (code / "model.py").read_text()
        assert cli.main([*argv, "--results", str(tmp_path / "r")]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "this command reads" in err, (argv, err)
        assert module.read_text() + (cases / "__init__.py").read_text() + (code / "model.py").read_text() == before
