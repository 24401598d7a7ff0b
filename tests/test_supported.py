"""`supported`: the PEP 440 range of stored releases on which every selected cell behaves, and the cap verdict."""

from __future__ import annotations

import json

import pytest
from packaging.specifiers import SpecifierSet

from conformance import cli
from conformance.decide.diff import cell_change
from conformance.decide.expectations import parse_expectations
from conformance.decide.gate import GOOD, classify
from conformance.decide.supported import marker, parse_current, supported_ranges
from conformance.errors import ConformanceError
from conformance.results.load import load_results
from conformance.results.merge import merge_files
from conformance.results.schema import CellResult
from tests.synthetic_results import VMAP, cell, write

PLATFORM = "linux-x86_64"
COUNTER = "compilation.compile_counter"
PARAMS = ("none", "vmap", "clear", "with", "enter_idiom")
SELECTION = "numerics.debug_nans_vmap_miss or compilation.compile_counter"


def _cells(**status):
    """Every selected cell conforming, except those given (`vmap="differs"`, `counter="timeout"`)."""
    cells = [cell(VMAP, p, status.get(p, "conforms"), known_issue=True) for p in PARAMS]
    return cells + [cell(COUNTER, "", status.get("counter", "conforms"))]


@pytest.fixture
def stored(tmp_path):
    """Five releases: 0.7.2 does not show the vmap miss yet; 0.9.0 miscounts compiles; 0.10.0 times out on the
    counter, which an expectation accepts from 0.10 on; one cell is skipped on 0.12.0.1 (not applicable)."""
    folder = tmp_path / "results"
    write(folder, "0.7.2", PLATFORM, _cells(vmap="differs"))
    write(folder, "0.8.1", PLATFORM, _cells())
    write(folder, "0.9.0", PLATFORM, _cells(counter="differs"))
    write(folder, "0.10.0", PLATFORM, _cells(counter="timeout"))
    write(folder, "0.12.0.1", PLATFORM, _cells(clear="skipped"))
    write(folder, "0.12.0.1+corp.3", PLATFORM, _cells(counter="crash"))  # a local build: not a release
    return folder


EXPECT = f'''[[expect]]
cell = "{COUNTER}"
status = ["timeout"]
jax = ">=0.10"
'''


def _ranges(stored, expectations=(), current=""):
    selected = [(VMAP, p) for p in PARAMS] + [(COUNTER, "")]
    return supported_ranges(
        merge_files(load_results(stored)), selected, expectations, parse_current(current) if current else None, current
    )


def test_the_specifier_of_five_releases_is_exact_and_holds_what_it_says(stored):
    (found,) = _ranges(stored, parse_expectations(EXPECT))
    assert found.specifier == ">=0.8.1,!=0.9.0,<=0.12.0.1"
    assert found.excluded == {"0.7.2": [f"{VMAP}[vmap] (differs)"], "0.9.0": [f"{COUNTER} (differs)"]}
    assert found.left_out == ["0.12.0.1+corp.3"]
    spec = SpecifierSet(found.specifier)
    assert [v for v in found.releases if v in spec] == found.behaving == ["0.8.1", "0.10.0", "0.12.0.1"]


def test_without_the_expectation_the_timeout_excludes_its_release(stored):
    (found,) = _ranges(stored)
    assert found.specifier == ">=0.8.1,!=0.9.0,!=0.10.0,<=0.12.0.1"
    assert found.excluded["0.10.0"] == [f"{COUNTER} (timeout)"]


def test_a_cap_that_can_be_lifted(stored):
    (found,) = _ranges(stored, parse_expectations(EXPECT), "jax<0.10")
    assert found.cap.liftable
    assert found.cap.line == (
        "jax<0.10 can be lifted: every selected cell behaves on 0.10.0–0.12.0.1; note: jax<0.10 "
        "allows 0.7.2, 0.9.0, excluded above"
    )


def test_a_cap_that_cannot_be_lifted_names_the_cells(stored):
    (found,) = _ranges(stored, (), ">=0.8.1,<0.10")
    assert not found.cap.liftable
    assert found.cap.line == (
        f">=0.8.1,<0.10 cannot be lifted: jax 0.10.0 is excluded by {COUNTER} (timeout); every "
        f"selected cell behaves on 0.12.0.1; note: >=0.8.1,<0.10 allows 0.9.0, excluded above"
    )


def test_the_command_prints_range_exclusions_and_verdict(stored, tmp_path, capsys):
    path = tmp_path / "expect.toml"
    path.write_text(EXPECT, encoding="utf-8")
    assert (
        cli.main(
            [
                "supported",
                "-k",
                SELECTION,
                "--results",
                str(stored),
                "--expectations",
                str(path),
                "--current",
                "jax<0.10",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        f"{PLATFORM}: jax>=0.8.1,!=0.9.0,<=0.12.0.1",
        "  6 selected cell(s) on 5 stored release(s), 0.7.2 to 0.12.0.1",
        f"  excluded jax 0.7.2: {VMAP}[vmap] (differs)",
        f"  excluded jax 0.9.0: {COUNTER} (differs)",
        "  left out (not releases): 0.12.0.1+corp.3",
        "  current jax<0.10 can be lifted: every selected cell behaves on 0.10.0–0.12.0.1; note: jax<0.10 allows "
        "0.7.2, 0.9.0, excluded above",
    ]
    assert (
        cli.main(
            [
                "supported",
                "-k",
                SELECTION,
                "--results",
                str(stored),
                "--expectations",
                str(path),
                "--format",
                "constraints",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == "jax>=0.8.1,!=0.9.0,<=0.12.0.1\n"


def test_a_cell_missing_from_a_release_excludes_it_and_platforms_get_markers(tmp_path, capsys):
    folder = tmp_path / "results"
    write(folder, "0.8.1", PLATFORM, _cells())
    write(folder, "0.9.0", PLATFORM, _cells()[:-1])
    write(folder, "0.9.0", "darwin-arm64", _cells())
    assert cli.main(["supported", "-k", SELECTION, "--results", str(folder), "--format", "constraints"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        'jax>=0.9.0,<=0.9.0; sys_platform == "darwin" and platform_machine == "arm64"',
        'jax>=0.8.1,<=0.8.1; sys_platform == "linux" and platform_machine == "x86_64"',
    ]
    assert cli.main(["supported", "-k", SELECTION, "--results", str(folder)]) == 0
    assert f"  excluded jax 0.9.0: {COUNTER} (not stored)" in capsys.readouterr().out.splitlines()


def test_no_behaving_release_is_said_and_constrains_to_nothing(tmp_path, capsys):
    folder = tmp_path / "results"
    write(folder, "0.7.2", PLATFORM, _cells(vmap="differs"))
    assert cli.main(["supported", "-k", SELECTION, "--results", str(folder)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"{PLATFORM}: no stored release on which every selected cell behaves"
    assert cli.main(["supported", "-k", SELECTION, "--results", str(folder), "--format", "constraints"]) == 0
    assert capsys.readouterr().out == "jax<0\n"


@pytest.mark.parametrize(
    "text, message",
    [
        ("numpy<2", "--current 'numpy<2' is about numpy; give a specifier on jax"),
        ("jax below 0.10", "--current 'jax below 0.10' is not a specifier on jax"),
        ("<<0.10", "--current '<<0.10' is not a specifier on jax"),
    ],
)
def test_a_bad_current_specifier_is_one_line(text, message):
    with pytest.raises(ConformanceError) as raised:
        parse_current(text)
    assert str(raised.value).startswith(message)


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    assert cli.main(["supported", "-k", "no_such_case_anywhere", "--results", str(tmp_path)]) == 2
    assert "selects no cell" in capsys.readouterr().err
    assert cli.main(["supported", "--current", "numpy<2", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize(
    "platform, expected",
    [
        ("linux-arm64", 'sys_platform == "linux" and platform_machine == "aarch64"'),
        ("windows-amd64", 'sys_platform == "win32" and platform_machine == "AMD64"'),
        ("linux-x86_64-cuda", 'sys_platform == "linux" and platform_machine == "x86_64"'),
    ],
)
def test_platform_markers(platform, expected):
    assert marker(platform) == expected


@pytest.mark.parametrize(
    "current, liftable, line",
    [
        (
            ">=0.9,<0.10",
            True,
            ">=0.9,<0.10 can be lifted: every selected cell behaves on 0.10.0–0.12.0.1; note: "
            ">=0.9,<0.10 allows 0.9.0, excluded above; note: >=0.9,<0.10 also excludes 0.8.1, on which "
            "every selected cell behaves",
        ),
        ("jax>=0.8.1,!=0.9.0", False, "jax>=0.8.1,!=0.9.0 caps no stored release: nothing to lift"),
    ],
)
def test_cap_verdict_notes_a_lower_bound_that_excludes_behaving_releases(stored, current, liftable, line):
    (found,) = _ranges(stored, parse_expectations(EXPECT), current)
    assert (found.cap.liftable, found.cap.line) == (liftable, line)


def _fixed_on_0_13(tmp_path, counter_after="conforms"):
    """0.12.0.1 (documented) shows the vmap miss; on 0.13.0 it no longer shows (`differs` on a known-issue row)."""
    folder = tmp_path / "results"
    write(folder, "0.12.0.1", PLATFORM, _cells())
    write(folder, "0.13.0", PLATFORM, _cells(vmap="differs", counter=counter_after))
    return folder


def test_a_known_issue_fixed_after_the_documented_release_does_not_cap_the_range(tmp_path):
    """issue 56 item 5: the wrong edit is a fixed known issue capping the range below the fix."""
    (found,) = _ranges(_fixed_on_0_13(tmp_path), current="jax<0.13")
    assert found.specifier == ">=0.12.0.1,<=0.13.0" and found.excluded == {}
    assert found.fixed == {"0.13.0": [f"{VMAP}[vmap]"]}
    assert found.cap.liftable
    # gate calls the same change good news: the two commands agree
    change = cell_change(
        PLATFORM,
        CellResult.from_json(cell(VMAP, "vmap", "conforms", known_issue=True)),
        CellResult.from_json(cell(VMAP, "vmap", "differs", known_issue=True)),
        "0.12.0.1",
        "0.13.0",
    )
    assert classify(change)[0] == GOOD


def test_the_old_reading_excludes_the_release_of_the_fix(tmp_path):
    folder = _fixed_on_0_13(tmp_path)
    selected = [(VMAP, p) for p in PARAMS] + [(COUNTER, "")]
    (found,) = supported_ranges(
        merge_files(load_results(folder)), selected, (), parse_current("jax<0.13"), "jax<0.13", fixes_exclude=True
    )
    assert found.specifier == ">=0.12.0.1,<=0.12.0.1" and found.excluded == {"0.13.0": [f"{VMAP}[vmap] (differs)"]}
    assert found.fixed == {} and not found.cap.liftable


@pytest.mark.parametrize("version, known_issue", [("0.12.0.1", True), ("0.11.2", True), ("0.13.0", False)])
def test_only_a_known_issue_after_the_documented_release_counts_as_fixed(tmp_path, version, known_issue):
    """A known issue that differs on the documented release or an older one, and a plain row that differs after
    it, still exclude their release."""
    folder = tmp_path / "results"
    write(folder, version, PLATFORM, [cell(VMAP, "vmap", "differs", known_issue=known_issue)])
    (found,) = supported_ranges(merge_files(load_results(folder)), [(VMAP, "vmap")])
    assert found.excluded == {version: [f"{VMAP}[vmap] (differs)"]} and found.fixed == {}


def test_the_command_says_a_fix_is_allowed_and_takes_the_old_reading(tmp_path, capsys):
    folder = _fixed_on_0_13(tmp_path)
    assert cli.main(["supported", "-k", SELECTION, "--results", str(folder), "--current", "jax<0.13"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{PLATFORM}: jax>=0.12.0.1,<=0.13.0"
    assert (
        f"  allowed jax 0.13.0: known issue changed: maybe fixed (a fix is no reason to cap; --fixes-exclude "
        f"excludes it): {VMAP}[vmap]"
    ) in lines
    assert "  current jax<0.13 can be lifted: every selected cell behaves on 0.13.0" in lines
    assert cli.main(["supported", "-k", SELECTION, "--results", str(folder), "--fixes-exclude"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{PLATFORM}: jax>=0.12.0.1,<=0.12.0.1\n") and "allowed jax" not in out


def test_the_command_hands_on_its_ranges_as_json_on_stdout_and_text_on_stderr(stored, tmp_path, capsys):
    """`supported --json -` (issue 60): the same range, exclusions and cap verdict as the text, as one document."""
    path = tmp_path / "expect.toml"
    path.write_text(EXPECT, encoding="utf-8")
    assert (
        cli.main(
            [
                "supported",
                "-k",
                SELECTION,
                "--results",
                str(stored),
                "--expectations",
                str(path),
                "--current",
                "jax<0.10",
                "--json",
                "-",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert (data["format"], data["version"]) == ("jax-conformance-supported", 1)
    (platform,) = data["platforms"]
    assert platform["specifier"] == ">=0.8.1,!=0.9.0,<=0.12.0.1" and platform["cells"] == 6
    assert platform["behaving"] == ["0.8.1", "0.10.0", "0.12.0.1"]
    assert platform["excluded"] == {"0.7.2": [f"{VMAP}[vmap] (differs)"], "0.9.0": [f"{COUNTER} (differs)"]}
    assert platform["left_out"] == ["0.12.0.1+corp.3"] and platform["cap"]["liftable"] is True
    assert f"{PLATFORM}: jax>=0.8.1,!=0.9.0,<=0.12.0.1" in captured.err
    assert (
        cli.main(
            ["supported", "-k", SELECTION, "--results", str(stored), "--json", str(next(stored.glob("0.8.1-*.json")))]
        )
        == 2
    )  # never over a result file
    assert "is a result file" in capsys.readouterr().err
