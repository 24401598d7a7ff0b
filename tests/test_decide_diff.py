"""`diff`: cells whose status or observation differ between two result sets, per platform, with field-level diffs."""

from __future__ import annotations

import pytest

from conformance import cli
from conformance.decide.diff import diff_sets, result_set, version_mismatch
from conformance.errors import ConformanceError
from tests.synthetic_results import VMAP, cell, files, write


def _sets(before, after):
    return result_set(before, "baseline"), result_set(after, "candidate")


def test_status_and_observation_changes_are_listed_with_the_field_that_differs():
    before = files(
        "0.7.2",
        "linux-x86_64",
        [
            cell(VMAP, "vmap", "differs", {"old_jit": "caught", "new_jit": "caught"}, known_issue=True),
            cell("values.same", "", "conforms"),
            cell("values.message", "", "differs", {"msg": "a"}),
        ],
    )
    after = files(
        "0.12.0.1",
        "linux-x86_64",
        [
            cell(VMAP, "vmap", "conforms", {"old_jit": "missed", "new_jit": "caught"}, known_issue=True),
            cell("values.same", "", "conforms"),
            cell("values.message", "", "differs", {"msg": "b"}),
        ],
    )
    found = diff_sets(*_sets([before], [after]))
    assert [c.cell_id for c in found.changes] == [f"{VMAP}[vmap]", "values.message"]
    assert found.unchanged == 1
    vmap = found.changes[0]
    assert vmap.statuses == "differs -> conforms"
    assert [(d.path, d.expected, d.observed) for d in vmap.differences] == [("old_jit", "caught", "missed")]
    assert (vmap.baseline_jax, vmap.candidate_jax) == ("0.7.2", "0.12.0.1")


def test_cells_and_platforms_on_one_side_only():
    before = [files("0.7.2", "linux-x86_64", [cell("a.gone")]), files("0.7.2", "darwin-arm64", [cell("a.x")])]
    after = [files("0.8.3", "linux-x86_64", [cell("a.new")]), files("0.8.3", "windows-amd64", [cell("a.x")])]
    found = diff_sets(*_sets(before, after))
    assert {c.cell_id: c.statuses for c in found.changes} == {
        "a.gone": "conforms -> absent",
        "a.new": "absent -> conforms",
    }
    assert found.only_in_baseline == ["darwin-arm64"] and found.only_in_candidate == ["windows-amd64"]


def test_each_platform_compares_its_own_versions():
    before = [
        files("0.7.2", "linux-x86_64", [cell("a.x", status="conforms")]),
        files("0.7.1", "darwin-arm64", [cell("a.x", status="conforms")]),
    ]
    after = [
        files("0.8.3", "linux-x86_64", [cell("a.x", status="differs")]),
        files("0.8.2", "darwin-arm64", [cell("a.x", status="conforms")]),
    ]
    (change,) = diff_sets(*_sets(before, after)).changes
    assert (change.platform, change.baseline_jax, change.candidate_jax) == ("linux-x86_64", "0.7.2", "0.8.3")


def test_shards_of_one_run_merge_into_one_set():
    shards = [files("0.8.3", "linux-x86_64", [cell("a.one")]), files("0.8.3", "linux-x86_64", [cell("a.two")])]
    merged = result_set(shards, "candidate")
    assert set(merged.runs["linux-x86_64"].cells) == {"a.one", "a.two"}


def test_two_versions_on_one_platform_are_refused_in_one_line():
    with pytest.raises(ConformanceError, match="holds jax 0.7.2 and 0.8.3 for linux-x86_64"):
        result_set(
            [files("0.7.2", "linux-x86_64", [cell("a.x")]), files("0.8.3", "linux-x86_64", [cell("a.x")])], "baseline"
        )


def test_version_mismatch_names_suite_and_schema():
    before, after = _sets(
        [files("0.7.2", "linux-x86_64", [cell("a.x")], suite="0.1.0", schema=1)],
        [files("0.8.3", "linux-x86_64", [cell("a.x")])],
    )
    said = version_mismatch(before, after)
    assert "suite 0.1.0 in the baseline but 0.2.0" in said and "schema 1 in the baseline but 2" in said
    assert version_mismatch(before, before) is None


def test_cli_diff_takes_files_or_folders(tmp_path, capsys):
    write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.x", observation={"n": 1})])
    write(tmp_path / "a", "0.7.2", "darwin-arm64", [cell("a.x", observation={"n": 1})])
    b = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x", observation={"n": 2})])
    assert cli.main(["diff", str(tmp_path / "a"), str(b)]) == 0
    out = capsys.readouterr().out
    assert "linux-x86_64 a.x: conforms -> conforms (jax 0.7.2 -> 0.8.3)" in out
    assert "n: 1 -> 2" in out and "darwin-arm64 is only in the baseline (not compared)" in out
    assert "1 cell(s) differ, 0 unchanged" in out


def test_cli_diff_of_an_unreadable_file_exits_2(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{")
    assert cli.main(["diff", str(tmp_path / "bad.json"), str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not JSON" in err


def test_a_side_without_an_observation_shows_its_reason_not_a_diff(tmp_path, capsys):
    before = write(
        tmp_path / "a",
        "0.7.2",
        "linux-x86_64",
        [cell("a.x", status="unsupported", observation=None, reason="jax.debug.log does not exist")],
    )
    data = before.read_text().replace('"observation": {"ok": true}', '"observation": null')
    before.write_text(data)
    after = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x", observation={"n": 1})])
    assert cli.main(["diff", str(before), str(after)]) == 0
    out = capsys.readouterr().out
    assert "no observation in the baseline: jax.debug.log does not exist" in out and "<observation>" not in out


def test_cli_gate_fails_on_a_platform_only_one_side_ran_unless_accepted(tmp_path, capsys):
    """issue 19 item 2: a platform compared on one side only counts against a pass."""
    write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.x")])
    write(tmp_path / "a", "0.7.2", "darwin-arm64", [cell("a.x")])
    write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x")])
    argv = ["gate", "--baseline", str(tmp_path / "a"), "--candidate", str(tmp_path / "b")]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "note: darwin-arm64 is only in the baseline (not compared)" in out and "1 platform(s) on one side" in out
    assert cli.main(argv + ["--allow-missing"]) == 0
    assert "(accepted with --allow-missing)" in capsys.readouterr().out


def test_diff_says_which_changes_are_in_printed_output_only(tmp_path, capsys):
    from tests.test_decide_gate import _printed_sides

    before, after = _printed_sides(tmp_path)
    assert cli.main(["diff", str(before), str(after)]) == 0
    out = capsys.readouterr().out
    assert "tracers.wording: conforms -> conforms (jax 0.7.2 -> 0.12.0.1) [printed output only]" in out
    assert "1 cell(s) differ (1 in printed output only), 1 unchanged" in out


def test_a_cell_whose_only_change_is_its_printed_output_mark_is_a_change():
    from conformance.decide.diff import cell_change
    from conformance.results.schema import CellResult

    plain = CellResult.from_json(cell("a.b", "", "conforms", {"n": 1}))
    marked = CellResult.from_json(
        cell("a.b", "", "conforms", {"n": 1}, printed_diff=[{"path": "repr", "expected": "x", "observed": "y"}])
    )
    change = cell_change("linux-x86_64", plain, marked, "0.7.2", "0.8.3")
    assert change is not None and change.statuses == "conforms -> conforms"
    assert change.differences == () and change.printed_differences == () and change.printed_only
    assert cell_change("linux-x86_64", marked, plain, "0.7.2", "0.8.3") is not None
    assert cell_change("linux-x86_64", marked, marked, "0.7.2", "0.8.3") is None
    assert cell_change("linux-x86_64", plain, plain, "0.7.2", "0.8.3") is None
