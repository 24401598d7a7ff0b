"""Expectations with a life cycle: owner, bug, added and expires; the gate on expired and expiring entries; prune."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from conformance import cli
from conformance.decide.expectations import lifecycle, parse_expectations
from conformance.decide.prune import NO_CELL, entry_spans
from conformance.errors import ConformanceError
from tests.synthetic_results import VMAP, cell, write

TODAY = datetime.date(2026, 12, 1)

DATED = """[[expect]]
cell = "numerics.debug_nans_vmap_miss[vmap]"
status = ["conforms"]
bug = "https://github.com/jax-ml/jax/issues/1"
owner = "numerics-team"
added = 2026-09-01
expires = "2026-12-11"
"""


def test_owner_bug_and_dates_are_read_from_toml_dates_or_strings():
    (entry,) = parse_expectations(DATED)
    assert (entry.owner, entry.added, entry.expires) == (
        "numerics-team",
        datetime.date(2026, 9, 1),
        datetime.date(2026, 12, 11),
    )
    assert entry.days_left(TODAY) == 10
    assert entry.who == "owner numerics-team, bug https://github.com/jax-ml/jax/issues/1"


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            'expires = "next spring"',
            "exp.toml:4: expectation entry 1: `expires` is 'next spring', not a date such as 2027-02-01 (YYYY-MM-DD)",
        ),
        (
            "added = 2026-09-01T10:00:00",
            "exp.toml:4: expectation entry 1: `added` is datetime.datetime(2026, 9, 1, 10, 0), not a date",
        ),
        ('bug = "JAX-123"', "exp.toml:4: expectation entry 1: `bug` is 'JAX-123', not a link such as"),
        ("owner = 7", "exp.toml:4: expectation entry 1: `owner` should be a string"),
        (
            "added = 2026-12-01\nexpires = 2026-11-01",
            "exp.toml:5: expectation entry 1: `expires` (2026-11-01) should come after `added` (2026-12-01)",
        ),
    ],
)
def test_a_malformed_owner_bug_or_date_is_one_line_naming_its_line(extra, message):
    with pytest.raises(ConformanceError) as raised:
        parse_expectations(f'[[expect]]\ncell = "a.b"\nstatus = "conforms"\n{extra}\n', "exp.toml")
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "expires, expired, expiring",
    [
        ("2026-12-01", True, False),  # the day it expires
        ("2026-11-02", True, False),
        ("2026-12-02", False, True),  # tomorrow
        ("2026-12-15", False, True),  # 14 days: warned
        ("2026-12-16", False, False),  # 15 days: quiet
    ],
)
def test_lifecycle_on_an_injected_day(expires, expired, expiring):
    entries = parse_expectations(DATED.replace('"2026-12-11"', expires))
    found = lifecycle(entries, TODAY)
    assert (bool(found.expired), bool(found.expiring)) == (expired, expiring)
    assert lifecycle(parse_expectations('[[expect]]\ncell = "a.b"\nstatus = "conforms"\n'), TODAY).expired == []


@pytest.fixture
def sides(tmp_path):
    """The vmap miss appears between the baseline and the candidate: a regression an entry can acknowledge."""
    before = write(tmp_path / "base", "0.7.2", "linux-x86_64", [cell(VMAP, "vmap", "differs", known_issue=True)])
    after = write(tmp_path / "cand", "0.12.0.1", "linux-x86_64", [cell(VMAP, "vmap", "conforms", known_issue=True)])
    return tmp_path, before, after


def _gate(sides, expires: str, capsys) -> tuple[int, str]:
    folder, before, after = sides
    path = folder / "expect.toml"
    path.write_text(DATED.replace('"2026-12-11"', expires), encoding="utf-8")
    code = cli.main(
        [
            "gate",
            "--baseline",
            str(before),
            "--candidate",
            str(after),
            "--expectations",
            str(path),
            "--today",
            "2026-12-01",
        ]
    )
    return code, capsys.readouterr().out


def test_an_expired_entry_fails_the_gate_in_one_line_naming_owner_and_bug(sides, capsys):
    code, out = _gate(sides, "2026-11-30", capsys)
    assert code == 1
    failing = [line for line in out.splitlines() if "expired on" in line]
    assert failing == [
        f"FAIL: expectation {VMAP}[vmap] (line 1) expired on 2026-11-30 (owner numerics-team, bug "
        f"https://github.com/jax-ml/jax/issues/1): renew its `expires` or remove the entry"
    ]
    assert out.rstrip().endswith("FAIL: 1 expectation(s) expired (exit 1)")
    assert "ACKNOWLEDGED REGRESSIONS (1)" in out  # it still says what it acknowledges


def test_an_entry_ten_days_from_expiry_passes_with_a_warning(sides, capsys):
    code, out = _gate(sides, "2026-12-11", capsys)
    assert code == 0
    assert (
        f"warning: expectation {VMAP}[vmap] (line 1) expires on 2026-12-11, in 10 days (owner numerics-team, "
        f"bug https://github.com/jax-ml/jax/issues/1)"
    ) in out.splitlines()
    assert (
        f"expected by expectation {VMAP}[vmap] (line 1); https://github.com/jax-ml/jax/issues/1; "
        f"owner numerics-team; expires 2026-12-11"
    ) in out
    assert "PASS: no regression (1 acknowledged) (exit 0)" in out


def test_the_gate_without_an_expiry_neither_fails_nor_warns(sides, capsys):
    code, out = _gate(sides, "2027-06-01", capsys)
    assert code == 0 and "warning:" not in out and "expired" not in out


def test_today_must_be_a_date(sides, capsys):
    folder, before, after = sides
    with pytest.raises(SystemExit) as raised:
        cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--today", "tomorrow"])
    assert raised.value.code == 2 and "'tomorrow' is not a date such as 2027-02-01" in capsys.readouterr().err


PRUNABLE = f'''# acknowledged changes of the upgrade
fail_on_printed = false

# the vmap miss: fixed upstream since
[[expect]]
cell = "{VMAP}[vmap]"
status = ["conforms"]
bug = "https://github.com/jax-ml/jax/issues/1"

[[expect]]
cell = "values.dtype"
status = ["timeout"]

# a case renamed since
[[expect]]
cell = "values.renamed_away"
status = ["differs"]

[[expect]]
cell = "values.dtype"
status = ["differs"]
jax = "<0.9"

[[expect]]
cell = "values.steady"
status = ["differs"]
platform = "darwin-*"
'''

PRUNE_DIFF = f'''--- a/{{path}}
+++ b/{{path}}
@@ -1,27 +1,6 @@
 # acknowledged changes of the upgrade
 fail_on_printed = false
-
-# the vmap miss: fixed upstream since
-[[expect]]
-cell = "{VMAP}[vmap]"
-status = ["conforms"]
-bug = "https://github.com/jax-ml/jax/issues/1"
 
 [[expect]]
 cell = "values.dtype"
 status = ["timeout"]
-
-# a case renamed since
-[[expect]]
-cell = "values.renamed_away"
-status = ["differs"]
-
-[[expect]]
-cell = "values.dtype"
-status = ["differs"]
-jax = "<0.9"
-
-[[expect]]
-cell = "values.steady"
-status = ["differs"]
-platform = "darwin-*"
'''  # noqa: W293 - a unified diff's blank context line is a lone space


@pytest.fixture
def stored(tmp_path) -> Path:
    """Two stored releases: on the newer the vmap miss is gone (its cell differs) and values.dtype times out."""
    folder = tmp_path / "results"
    write(
        folder,
        "0.8.0",
        "linux-x86_64",
        [cell(VMAP, "vmap", "conforms", known_issue=True), cell("values.dtype", "", "conforms"), cell("values.steady")],
    )
    write(
        folder,
        "0.12.0.1",
        "linux-x86_64",
        [cell(VMAP, "vmap", "differs", known_issue=True), cell("values.dtype", "", "timeout"), cell("values.steady")],
    )
    return folder


def test_prune_prints_the_exact_diff_and_why_and_leaves_the_file(tmp_path, stored, capsys):
    path = tmp_path / "expect.toml"
    path.write_text(PRUNABLE, encoding="utf-8")
    assert cli.main(["expectations", "prune", str(path), "--results", str(stored)]) == 0
    out = capsys.readouterr().out
    reasons, diff = out.split("--- a/", 1)
    assert reasons.splitlines() == [
        f"remove {VMAP}[vmap] (line 5): acknowledgement no longer needed: workaround removable (the cell behaves as "
        f"the chapter documents on linux-x86_64 jax 0.12.0.1)",
        f"remove values.renamed_away (line 15): {NO_CELL}",
        "remove values.dtype (line 19): acknowledgement no longer needed: workaround removable (the cell behaves as "
        "the chapter documents on linux-x86_64 jax 0.8.0)",
        f"remove values.steady (line 24): {NO_CELL}",
    ]
    assert "--- a/" + diff == PRUNE_DIFF.format(path=path)
    assert path.read_text(encoding="utf-8") == PRUNABLE  # printing changes nothing


def test_prune_write_applies_the_diff(tmp_path, stored, capsys):
    path = tmp_path / "expect.toml"
    path.write_text(PRUNABLE, encoding="utf-8")
    assert cli.main(["expectations", "prune", str(path), "--results", str(stored), "--write"]) == 0
    assert "wrote " + str(path) + ": 4 entries removed, 1 kept" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == (
        "# acknowledged changes of the upgrade\nfail_on_printed = false\n\n"
        '[[expect]]\ncell = "values.dtype"\nstatus = ["timeout"]\n'
    )
    assert cli.main(["expectations", "prune", str(path), "--results", str(stored), "--write"]) == 0
    assert capsys.readouterr().out == f"{path}: every entry is still needed (1 kept)\n"


def test_comments_above_an_entry_go_with_it_and_the_last_entry_takes_the_blank_lines_before_it():
    text = "# file\n[[expect]]\na = 1\n\n# one\n[[expect]]\nx = 1\n\n# two\n[[expect]]\ny = 2\n"
    # 0-based: the comment that opens the file stays; "# one" and "# two" go with their entries; the last entry takes
    # the blank line before its comment
    assert entry_spans(text) == [(1, 4), (4, 8), (7, 11)]


def test_prune_of_a_malformed_file_or_missing_results_is_one_line(tmp_path, stored, capsys):
    path = tmp_path / "expect.toml"
    path.write_text('[[expect]]\ncell = "a.b"\nstatus = "passes"\n', encoding="utf-8")
    assert cli.main(["expectations", "prune", str(path), "--results", str(stored)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"jax-conformance: error: {path}:3: expectation entry 1: `status` has 'passes'")
    assert cli.main(["expectations", "prune", str(tmp_path / "nope.toml"), "--results", str(stored)]) == 2
    assert "cannot read the expectations file" in capsys.readouterr().err


def test_the_action_reports_prune_in_the_summary_and_never_fails(tmp_path, stored):
    import subprocess
    import sys

    import yaml

    root = Path(__file__).resolve().parent.parent
    action = yaml.safe_load((root / ".github/actions/conformance/action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if "prune-report.sh" in s.get("run", ""))
    assert step["if"] == "inputs.expectations != ''" and step["env"]["EXPECTATIONS"] == "${{ inputs.expectations }}"
    path = tmp_path / "expect.toml"
    path.write_text(PRUNABLE, encoding="utf-8")
    summary = tmp_path / "summary.md"
    for expectations in (str(path), str(tmp_path / "missing.toml")):
        done = subprocess.run(
            ["bash", str(root / ".github/scripts/prune-report.sh")],
            cwd=root,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHON": sys.executable,
                "EXPECTATIONS": expectations,
                "RESULTS": str(stored),
                "GITHUB_STEP_SUMMARY": str(summary),
            },
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
    text = summary.read_text(encoding="utf-8")
    assert PRUNE_DIFF.format(path=path) in text and text.count("### Expectations the results no longer need") == 2
    assert "`expectations prune` could not run (exit 2):" in text and "cannot read the expectations file" in text
    assert path.read_text(encoding="utf-8") == PRUNABLE


def test_the_gate_markdown_names_the_expired_entry_and_the_warning(sides, tmp_path, capsys):
    folder, before, after = sides
    path = folder / "expect.toml"
    path.write_text(
        DATED.replace('"2026-12-11"', "2026-11-30") + DATED.replace("[vmap]", "").replace('"2026-12-11"', "2026-12-05"),
        encoding="utf-8",
    )
    markdown = tmp_path / "gate.md"
    assert (
        cli.main(
            [
                "gate",
                "--baseline",
                str(before),
                "--candidate",
                str(after),
                "--expectations",
                str(path),
                "--today",
                "2026-12-01",
                "--markdown",
                str(markdown),
            ]
        )
        == 1
    )
    text = markdown.read_text(encoding="utf-8")
    assert "### Expectations expired or expiring" in text
    assert "- FAIL: expectation numerics.debug\\_nans\\_vmap\\_miss\\[vmap\\] (line 1) expired on 2026-11-30" in text
    assert (
        "- warning: expectation numerics.debug\\_nans\\_vmap\\_miss (line 8) expires on 2026-12-05, in 4 days"
    ) in text


# A04: an entry's lines are found as TOML reads the file. A multi-line string whose last line starts with `#` (or
# holds a line `[[expect]]`) is text: the old line patterns took it for the next entry's comment (or header), and the
# pruned file lost a string's end, or, under `python -O`, swallowed a later entry into the first one's reason.
TRICKY = '''fail_on_printed = false

[[expect]]
cell = "values.dtype"
status = ["timeout"]
reason = """still tracked in
#12345"""
[[expect]]
cell = "values.renamed_away"
status = ["differs"]
reason = \'\'\'quoted from the bug:
[[expect]]
# not a comment\'\'\'

[[expect]]
cell = "values.dtype"
status = ["differs"]
reason = "one line with a \\" and a # inside"
jax = "<0.9"

# closing notes of the file
# (kept when the last entry goes)
'''


def test_entry_spans_follow_toml_strings_not_line_patterns():
    # 0-based: entry 1 keeps its string's last line `#12345"""`; entry 2's string holds a `[[expect]]` line and a `#`
    # line; entry 3 ends at its last key, before the closing comments
    assert entry_spans(TRICKY) == [(2, 7), (7, 14), (13, 19)]


@pytest.mark.parametrize("optimized", [False, True])
def test_prune_write_keeps_every_string_and_entry_whole(tmp_path, stored, optimized):
    import subprocess
    import sys

    path = tmp_path / "expect.toml"
    path.write_text(TRICKY, encoding="utf-8")
    flags = ["-O"] if optimized else []
    done = subprocess.run(
        [
            sys.executable,
            *flags,
            "-m",
            "conformance",
            "expectations",
            "prune",
            str(path),
            "--results",
            str(stored),
            "--write",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert done.returncode == 0, done.stderr
    assert "2 entries removed, 1 kept" in done.stdout
    assert (
        path.read_text(encoding="utf-8")
        == '''fail_on_printed = false

[[expect]]
cell = "values.dtype"
status = ["timeout"]
reason = """still tracked in
#12345"""

# closing notes of the file
# (kept when the last entry goes)
'''
    )


def test_a_file_whose_entries_cannot_be_told_apart_is_one_line_not_a_traceback(tmp_path, stored, capsys):
    # two entries on one line each: `[[expect]]` is not alone on its line, so no span can be found for them
    path = tmp_path / "expect.toml"
    path.write_text(
        '[[expect]]\ncell = "values.renamed_away"\nstatus = ["differs"]\n'
        '[[ expect ]] # second\ncell = "values.dtype"\nstatus = ["timeout"]\n',
        encoding="utf-8",
    )
    assert cli.main(["expectations", "prune", str(path), "--results", str(stored), "--write"]) == 0
    assert path.read_text(encoding="utf-8") == '[[ expect ]] # second\ncell = "values.dtype"\nstatus = ["timeout"]\n'


def test_a_section_heading_set_apart_by_a_blank_line_stays_when_the_entry_above_it_goes():
    """Review of A04: a comment block separated from the next entry by a blank line (a section's heading) was deleted
    with the entry above it."""
    text = (
        '[[expect]]\ncell = "values.renamed_away"\nstatus = ["differs"]\n\n# --- numerics ---\n\n'
        '# its own comment\n[[expect]]\ncell = "values.dtype"\nstatus = ["timeout"]\n'
    )
    assert entry_spans(text) == [(0, 4), (5, 10)]


def test_headers_and_lines_are_read_as_toml_reads_them():
    """Review of A04: a U+2028 in a string or comment split a line for `str.splitlines` (not for TOML), a quoted
    `[["expect"]]` header was not seen, and an entry's label said `line 0` when a string held `[[expect]]`."""
    from conformance.decide.expectations import parse_expectations

    text = (
        '# a note\u2028 that continues\n[["expect"]]\ncell = "values.dtype"\nstatus = ["timeout"]\n'
        'reason = """a\n[[expect]]\nb"""\n\n[[expect]]\ncell = "values.steady"\nstatus = ["differs"]\n'
    )
    assert "\u2028" in text and entry_spans(text) == [(1, 8), (7, 11)]
    assert [e.label for e in parse_expectations(text)] == ["values.dtype (line 2)", "values.steady (line 9)"]
