"""`gate`: regressions, acknowledged changes, changes to review and good news; every exit status."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import cli
from conformance.core.case import load_cases
from conformance.decide.diff import cell_change
from conformance.decide.gate import GOOD, MISSING, PRINTED, REGRESSION, REVIEW, classify, gate
from conformance.engine import matrix
from conformance.engine.matrix import VersionRun
from conformance.engine.selection import all_cells, select_cells
from conformance.results.load import load_result_file
from conformance.results.schema import CellResult
from tests.synthetic_results import VMAP, cell, write


def _change(before: str | None, after: str | None, known_issue: bool = False, obs_after=None):
    side = lambda status, obs=None: (  # noqa: E731
        None if status is None else CellResult.from_json(cell("a.b", "p", status, obs, known_issue))
    )
    return cell_change("linux-x86_64", side(before), side(after, obs_after), "0.7.2", "0.8.3")


@pytest.mark.parametrize(
    "before, after, known, kind",
    [
        ("conforms", "differs", False, REGRESSION),  # intended behaviour stops conforming
        ("conforms", "unsupported", False, REGRESSION),
        ("conforms", "flaky", False, REGRESSION),
        ("differs", "conforms", True, REGRESSION),  # a known issue that was absent appears
        ("unsupported", "conforms", True, REGRESSION),
        ("differs", "crash", False, REGRESSION),  # a clean run becomes crash, timeout or error
        ("unsupported", "timeout", False, REGRESSION),
        ("skipped", "error", False, REGRESSION),
        ("conforms", "error", True, REGRESSION),
        ("conforms", "differs", True, GOOD),  # a known issue disappears
        ("differs", "conforms", False, GOOD),  # intended behaviour starts to conform
        ("error", "crash", False, REVIEW),  # not a clean run before
        ("flaky", "timeout", False, REVIEW),
        ("differs", "unsupported", False, REVIEW),
        ("conforms", "unsupported", True, REVIEW),
        (None, "crash", False, REVIEW),  # new cell
        ("conforms", None, False, MISSING),  # cell gone: counts against a pass
    ],
)
def test_classification(before, after, known, kind):
    assert classify(_change(before, after, known))[0] == kind


@pytest.mark.parametrize(
    "before, after, known, why",
    [
        (None, "conforms", False, "new cell: the baseline does not have it"),
        ("conforms", None, False, "the candidate does not have this cell (it was not run)"),
        ("conforms", "crash", False, "a clean run becomes crash"),
        ("differs", "conforms", True, "the known issue appears (it was absent in the baseline)"),
        ("conforms", "differs", True, "the known issue no longer shows: the workaround for a.b[p] may be removable"),
        ("conforms", "differs", False, "stops conforming to the documented behaviour"),
        ("differs", "conforms", False, "now conforms to the documented behaviour"),
        ("error", "crash", False, "status changed"),
        ("unsupported", "differs", True, "status changed"),  # known issue, neither appearing nor disappearing
    ],
)
def test_each_class_says_why_in_its_own_words(before, after, known, why):
    assert classify(_change(before, after, known))[1] == why


def test_gate_files_each_change_under_its_class_with_its_reason():
    from conformance.decide.diff import diff_sets, result_set
    from conformance.decide.expectations import parse_expectations
    from tests.synthetic_results import files

    before = files(
        "0.7.2",
        "linux-x86_64",
        [
            cell("a.regress"),
            cell("a.acked"),
            cell("a.good", status="differs"),
            cell("a.gone"),
            cell("a.review", status="error"),
            cell("a.printed", observation={"m": "x"}, printed_expected={"m": "x"}),
        ],
    )
    after = files(
        "0.8.3",
        "linux-x86_64",
        [
            cell("a.regress", status="differs"),
            cell("a.acked", status="differs"),
            cell("a.good"),
            cell("a.review", status="crash"),
            cell("a.new"),
            cell(
                "a.printed",
                observation={"m": "y"},
                printed_expected={"m": "x"},
                printed_diff=[{"path": "m", "expected": "x", "observed": "y"}],
            ),
        ],
    )
    one_sided = [files("0.7.2", "darwin-arm64", [cell("a.x")]), files("0.8.3", "windows-amd64", [cell("a.x")])]
    set_diff = diff_sets(result_set([before, one_sided[0]], "baseline"), result_set([after, one_sided[1]], "candidate"))
    entry, stale = parse_expectations(
        '[[expect]]\ncell = "a.acked"\nstatus = ["differs"]\n[[expect]]\ncell = "a.nowhere"\nstatus = ["differs"]\n'
    )
    outcome = gate(set_diff, [entry, stale])
    assert (outcome.only_in_baseline, outcome.only_in_candidate, outcome.stale) == (
        ["darwin-arm64"],
        ["windows-amd64"],
        [stale],
    )
    found = {
        name: [(j.change.cell_id, j.kind, j.why) for j in getattr(outcome, name)]
        for name in ("regressions", "acknowledged", "good", "printed", "missing", "review")
    }
    printed_why = "printed output changed (wording, reprs or counts the chapter only prints); status unchanged"
    assert found == {
        "regressions": [("a.regress", REGRESSION, "stops conforming to the documented behaviour")],
        "acknowledged": [("a.acked", REGRESSION, "stops conforming to the documented behaviour")],
        "good": [("a.good", GOOD, "now conforms to the documented behaviour")],
        "printed": [("a.printed", PRINTED, printed_why)],
        "missing": [("a.gone", MISSING, "the candidate does not have this cell (it was not run)")],
        "review": [
            ("a.review", REVIEW, "status changed"),
            ("a.new", REVIEW, "new cell: the baseline does not have it"),
        ],
    }
    assert outcome.acknowledged[0].acknowledged_by is entry and outcome.acknowledged[0].accepted_as == "expected"
    assert (outcome.unchanged, outcome.compared, outcome.allow_missing) == (0, 5, False)
    assert outcome.exit_code == 1 and outcome.unaccepted_gaps == 3  # a missing cell and two one-sided platforms
    gated = gate(set_diff, [entry], fail_on_printed=True)
    assert [(j.change.cell_id, j.kind, j.why) for j in gated.regressions][-1] == (
        "a.printed",
        REGRESSION,
        "printed output changed (wording, reprs or counts the chapter only prints); failing: printed output is gated",
    )
    assert gated.printed == []
    accepted = gate(set_diff, [entry], allow_missing=True)
    assert accepted.allow_missing and accepted.unaccepted_gaps == 0


def test_an_error_of_the_harness_is_missing_naming_its_fault_and_an_error_of_the_probe_still_regresses():
    """Issue 57: a cell pytest or the run failed around (`harness`) has no result of JAX's; it fails the gate as a
    missing cell does (run it again, or --allow-missing), saying it was the harness, never as JAX's regression."""
    fault = "call: KeyError: 'PYTEST_CURRENT_TEST'"
    side = lambda status, **extra: CellResult.from_json(cell("a.b", "p", status, None, False, **extra))  # noqa: E731
    harness = cell_change("linux-x86_64", side("conforms"), side("error", harness=fault), "0.7.2", "0.8.3")
    assert classify(harness) == (
        MISSING,
        f"the candidate's cell was not judged: the harness failed around the probe ({fault}), not JAX; run it again",
    )
    probe = cell_change("linux-x86_64", side("conforms"), side("error"), "0.7.2", "0.8.3")
    assert classify(probe) == (REGRESSION, "a clean run becomes error")
    judged = cell_change(
        "linux-x86_64", side("conforms"), side("differs", harness="teardown: KeyError: 'X'"), "0.7.2", "0.8.3"
    )
    assert classify(judged)[0] == REGRESSION  # judged before the fault: its status stands
    before = cell_change("linux-x86_64", side("error", harness=fault), side("differs"), "0.7.2", "0.8.3")
    assert classify(before) == (REVIEW, f"the baseline's cell was not judged (the harness failed: {fault})")
    from conformance.decide.diff import diff_sets, result_set
    from tests.synthetic_results import files

    set_diff = diff_sets(
        result_set([files("0.7.2", "linux-x86_64", [cell("a.b", "p")])], "baseline"),
        result_set([files("0.8.3", "linux-x86_64", [cell("a.b", "p", "error", harness=fault)])], "candidate"),
    )
    outcome = gate(set_diff)
    assert outcome.regressions == [] and [j.kind for j in outcome.missing] == [MISSING] and outcome.exit_code == 1
    assert gate(set_diff, allow_missing=True).exit_code == 0


def test_same_status_with_another_observation_is_a_change_to_review():
    change = cell_change(
        "linux-x86_64",
        CellResult.from_json(cell("a.b", "", "differs", {"m": "x"})),
        CellResult.from_json(cell("a.b", "", "differs", {"m": "y"})),
        "0.7.2",
        "0.8.3",
    )
    assert classify(change) == (REVIEW, "same status, different observation")


@pytest.fixture
def sides(tmp_path):
    """A baseline and a candidate: the vmap miss appears, one row stops conforming, one known issue disappears."""
    before = write(
        tmp_path / "base",
        "0.7.2",
        "linux-x86_64",
        [
            cell(VMAP, "vmap", "differs", {"old_jit": "caught"}, known_issue=True),
            cell("values.dtype", "", "conforms", {"dtype": "float32"}),
            cell("tracers.leak", "", "conforms", {"leaked": True}, known_issue=True),
            cell("values.message", "", "differs", {"m": "a"}),
            cell("values.steady", "", "conforms"),
        ],
    )
    after = write(
        tmp_path / "cand",
        "0.12.0.1",
        "linux-x86_64",
        [
            cell(VMAP, "vmap", "conforms", {"old_jit": "missed"}, known_issue=True),
            cell("values.dtype", "", "timeout", None, reason="killed after 120s"),
            cell("tracers.leak", "", "differs", {"leaked": False}, known_issue=True),
            cell("values.message", "", "differs", {"m": "b"}),
            cell("values.steady", "", "conforms"),
        ],
    )
    return tmp_path, before, after


def _gate(sides, *extra):
    folder, before, after = sides
    return cli.main(["gate", "--baseline", str(before), "--candidate", str(after), *extra])


def _expect(folder: Path, text: str) -> str:
    path = folder / "expect.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_regressions_fail_the_gate_and_come_first(sides, capsys):
    assert _gate(sides) == 1
    out = capsys.readouterr().out
    order = [out.index(h) for h in ("REGRESSIONS (2)", "CHANGES TO REVIEW (1)", "GOOD NEWS (1)", "FAIL:")]
    assert order == sorted(order)
    assert "the known issue appears" in out and "a clean run becomes timeout" in out
    assert "conforms (bug still present)" in out and "old_jit: 'caught' -> 'missed'" in out
    assert "the workaround for tracers.leak may be removable" in out
    assert "reproduce: jax-conformance run" in out


def test_acknowledged_regressions_pass_and_say_why(sides, capsys):
    folder = sides[0]
    expectations = _expect(
        folder,
        f'''
[[expect]]
cell = "{VMAP}[vmap]"
status = ["conforms"]
platform = "linux-*"
jax = ">=0.8"
reason = "debug_nans misses NaNs after vmap"
bug = "https://example.org/bug/1"

[[expect]]
cell = "values.dtype"
status = ["conforms"]
intermittent = ["timeout"]
''',
    )
    assert _gate(sides, "--expectations", expectations) == 0
    out = capsys.readouterr().out
    assert "ACKNOWLEDGED REGRESSIONS (2)" in out and "REGRESSIONS (" not in out.replace("ACKNOWLEDGED REGRESSIONS", "")
    assert (
        f"expected by expectation {VMAP}[vmap] (line 2); debug_nans misses NaNs after vmap; "
        f"https://example.org/bug/1" in out
    )
    assert "a known intermittent result by expectation values.dtype (line 10)" in out
    assert "PASS: no regression (2 acknowledged) (exit 0)" in out


@pytest.mark.parametrize("condition", ['platform = "darwin-*"', 'jax = "<0.8"', 'status = ["differs"]'])
def test_an_entry_whose_condition_or_status_does_not_hold_acknowledges_nothing(sides, capsys, condition):
    extra = "" if condition.startswith("status") else 'status = ["conforms"]\n'
    expectations = _expect(
        sides[0],
        f'[[expect]]\ncell = "{VMAP}:vmap"\n{extra}{condition}\n'
        f'[[expect]]\ncell = "values.dtype"\nstatus = ["timeout"]\n',
    )
    assert _gate(sides, "--expectations", expectations) == 1
    out = capsys.readouterr().out
    assert "REGRESSIONS (1)" in out and "the known issue appears" in out


def test_entries_that_match_no_cell_are_stale(sides, capsys):
    expectations = _expect(
        sides[0],
        f'''[[expect]]
cell = "{VMAP}[vmap]"
status = ["conforms"]
[[expect]]
cell = "values.dtype"
status = ["timeout"]
[[expect]]
cell = "values.renamed_away"
status = ["conforms"]
[[expect]]
cell = "values.steady"
status = ["conforms"]
platform = "darwin-arm64"
''',
    )
    assert _gate(sides, "--expectations", expectations) == 0
    out = capsys.readouterr().out
    assert "STALE EXPECTATIONS (2)" in out
    assert "values.renamed_away (line 7): matches no cell" in out and "values.steady (line 10)" in out


def test_no_change_passes(tmp_path, capsys):
    path = write(tmp_path, "0.8.3", "linux-x86_64", [cell("a.b")])
    assert cli.main(["gate", "--baseline", str(path), "--candidate", str(path)]) == 0
    assert "1 cell(s) compared, 1 unchanged, 0 missing from the candidate. PASS" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["gate"], "gate needs --baseline A --candidate B"),
        (["gate", "--baseline", "missing.json", "--candidate", "missing.json"], "missing.json: no such file"),
        (["gate", "--from", "0.7.2"], "--from and --to go together"),
        (["gate", "--from", "0.7.2", "--to", "0.8.3", "--baseline", "x.json"], "not both"),
    ],
)
def test_bad_usage_exits_2_with_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_malformed_expectations_file_exits_2_naming_the_line(sides, capsys):
    expectations = _expect(sides[0], '[[expect]]\ncell = "a.b"\nstatus = ["conforms"]\nwhy = "typo"\n')
    assert _gate(sides, "--expectations", expectations) == 2
    err = capsys.readouterr().err
    assert "expect.toml:4: expectation entry 1: unknown key `why`" in err and err.count("\n") == 1


def test_different_suite_versions_are_refused_unless_allowed(tmp_path, capsys):
    before = write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.b")], suite="0.1.0")
    after = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.b", status="differs")])
    argv = ["gate", "--baseline", str(before), "--candidate", str(after)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "refusing to compare" in err and "suite 0.1.0 in the baseline but 0.2.0" in err
    assert "--allow-version-mismatch" in err
    assert cli.main(argv + ["--allow-version-mismatch"]) == 1
    assert "versions differ" in capsys.readouterr().out


def test_markdown_escapes_result_data(tmp_path, capsys):
    before = write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.b", observation={"m": "ok"})])
    after = write(
        tmp_path / "b",
        "0.8.3",
        "linux-x86_64",
        [cell("a.b", status="differs", observation={"m": "<img src=x onerror=alert(1)> `rm -rf` |"})],
    )
    md = tmp_path / "gate.md"
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--markdown", str(md)]) == 1
    text = md.read_text()
    assert "### Regressions (1)" in text and "<img" not in text and "&lt;img" in text
    assert "\\`rm -rf\\`" in text and "\\|" in text and "`" not in text.replace("\\`", "")


def test_gate_from_to_runs_both_versions_incrementally_then_gates(tmp_path, capsys, monkeypatch):
    """`--from/--to` builds both environments and runs them through the engine's matrix run (faked here)."""
    prepared, ran = [], []

    class FakeBuilder:
        def __init__(self):
            self.notices, self.index = [], type("I", (), {"notices": []})()

        def interpreter_for(self, version):
            return None

        def prepare(self, version):
            prepared.append(version)
            return type(
                "Env",
                (),
                {
                    "version": version,
                    "built_now": False,
                    "seconds": 0.0,
                    "interpreter": type("P", (), {"version": "3.13.0"})(),
                },
            )()

    def fake_run_version(env, request, on_event):
        ran.append((env.version, request.results, request.expression, request.cell_ids))
        status = "differs" if env.version == "0.8.3" else "conforms"
        path = write(request.results, env.version, "linux-x86_64", [cell(VMAP, "vmap", status, known_issue=True)])
        return VersionRun(load_result_file(path), path, 0.1, 1, 0, "fork")

    monkeypatch.setattr(cli, "EnvironmentBuilder", FakeBuilder)
    monkeypatch.setattr(matrix, "run_version", fake_run_version)
    status = cli.main(["gate", "--from", "0.8.3", "--to", "0.12.0.1", "--results", str(tmp_path), "-k", "vmap"])
    assert status == 1 and prepared == ["0.8.3", "0.12.0.1"]
    selected = tuple(c.id for c in select_cells(all_cells(load_cases()), "vmap"))
    assert ran == [("0.8.3", tmp_path, "vmap", selected), ("0.12.0.1", tmp_path, "vmap", selected)]
    assert "the known issue appears" in capsys.readouterr().out


def test_folders_of_several_platforms_gate_each_platform_against_its_own_baseline(tmp_path, capsys):
    write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.b")])
    write(tmp_path / "a", "0.7.2", "darwin-arm64", [cell("a.b")])
    write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.b")])
    write(
        tmp_path / "b",
        "0.8.3",
        "darwin-arm64",
        [cell("a.b", status="crash", observation=None, reason="SIGSEGV")],
        name="0.8.3-darwin-arm64-shard1of2.json",
    )
    write(tmp_path / "b", "0.8.3", "darwin-arm64", [cell("a.c")], name="0.8.3-darwin-arm64-shard2of2.json")
    assert cli.main(["gate", "--baseline", str(tmp_path / "a"), "--candidate", str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "gate (darwin-arm64: jax 0.7.2 -> 0.8.3, linux-x86_64: jax 0.7.2 -> 0.8.3)" in out
    assert "darwin-arm64 a.b: conforms -> crash" in out and "a clean run becomes crash" in out
    assert "darwin-arm64 a.c: absent -> conforms" in out and "REGRESSIONS (1)" in out


def _printed_sides(tmp_path):
    """The same status and asserted facts on both sides; only the printed message wording changed."""
    printed = {"message": "old wording"}
    before = write(
        tmp_path / "pb",
        "0.7.2",
        "linux-x86_64",
        [
            cell(
                "tracers.wording",
                "",
                "conforms",
                {"raised": "TypeError", "message": "old wording"},
                printed_expected=printed,
            ),
            cell("values.steady", "", "conforms"),
        ],
    )
    after = write(
        tmp_path / "pa",
        "0.12.0.1",
        "linux-x86_64",
        [
            cell(
                "tracers.wording",
                "",
                "conforms",
                {"raised": "TypeError", "message": "new wording"},
                printed_expected=printed,
                printed_diff=[
                    {"path": "message", "expected": "old wording", "observed": "new wording", "kind": "changed"}
                ],
            ),
            cell("values.steady", "", "conforms"),
        ],
    )
    return before, after


def test_a_printed_output_change_is_reported_and_does_not_fail_the_gate(tmp_path, capsys):
    before, after = _printed_sides(tmp_path)
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after)]) == 0
    out = capsys.readouterr().out
    assert "PRINTED OUTPUT CHANGES (NOT FAILING) (1)" in out
    assert "printed message: 'old wording' -> 'new wording'" in out
    assert "printed output now differs from the chapter's" in out
    assert "PASS: no regression (0 acknowledged, 1 printed-output change(s)) (exit 0)" in out


def test_fail_on_printed_makes_a_printed_output_change_fail_by_flag_or_expectations_file(tmp_path, capsys):
    before, after = _printed_sides(tmp_path)
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--fail-on-printed"]) == 1
    assert "printed output is gated" in capsys.readouterr().out
    settings = _expect(tmp_path, "fail_on_printed = true\n")
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--expectations", settings]) == 1
    bad = _expect(tmp_path, 'fail_on_printed = "yes"\n')
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--expectations", bad]) == 2
    assert "`fail_on_printed` should be true or false" in capsys.readouterr().err


def test_an_asserted_change_with_the_same_status_is_not_printed_only():
    printed = {"message": "w"}
    change = cell_change(
        "linux-x86_64",
        CellResult.from_json(cell("a.b", "", "differs", {"raised": "A", "message": "w"}, printed_expected=printed)),
        CellResult.from_json(cell("a.b", "", "differs", {"raised": "B", "message": "w"}, printed_expected=printed)),
        "0.7.2",
        "0.8.3",
    )
    assert not change.printed_only and classify(change)[0] == REVIEW


# ---------------------------------------------------------------- issue 19: a gate that never passes on nothing


@pytest.mark.parametrize("candidate_platform, cells", [("darwin-arm64", [cell("a.b")]), ("linux-x86_64", [])])
def test_a_gate_that_compared_nothing_fails(tmp_path, capsys, candidate_platform, cells):
    """issue 19 item 2: another platform, or a candidate with no cells, compares nothing: exit 1, even when
    --allow-missing accepts the gaps."""
    base = write(tmp_path / "a", "0.8.3", "linux-x86_64", [cell("a.b")])
    cand = write(tmp_path / "b", "0.12.0.1", candidate_platform, cells)
    for extra in ([], ["--allow-missing"]):
        assert cli.main(["gate", "--baseline", str(base), "--candidate", str(cand), *extra]) == 1
        out = capsys.readouterr().out
        assert "0 cell(s) compared" in out and "FAIL: no cell was compared" in out


def test_a_candidate_lacking_the_regressed_cell_fails_unless_missing_cells_are_accepted(tmp_path, capsys):
    """issue 19 item 2: a baseline cell missing from the candidate counts against a pass."""
    base = write(tmp_path / "a", "0.8.3", "linux-x86_64", [cell("a.b"), cell("a.regressed")])
    cand = write(tmp_path / "b", "0.12.0.1", "linux-x86_64", [cell("a.b")])
    argv = ["gate", "--baseline", str(base), "--candidate", str(cand)]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "MISSING FROM THE CANDIDATE (1)" in out and "a.regressed" in out
    assert "1 cell(s) compared, 1 unchanged, 1 missing from the candidate." in out
    assert cli.main(argv + ["--allow-missing"]) == 0
    accept = _expect(tmp_path, "allow_missing = true\n")
    assert cli.main(argv + ["--expectations", accept]) == 0


def _versions_folder(tmp_path, newest_status):
    """A results folder of four JAX versions (as the workflow's `quick latest` writes), and a baseline."""
    base = write(tmp_path / "baseline", "0.12.0.1", "linux-x86_64", [cell("a.b"), cell("a.c")])
    folder = tmp_path / "results"
    for version in ("0.4.38", "0.8.3", "0.11.2"):
        write(folder, version, "linux-x86_64", [cell("a.b", "", "differs"), cell("a.c", "", "differs")])
    write(folder, "0.12.0.1", "linux-x86_64", [cell("a.b"), cell("a.c", "", newest_status)])
    write(folder, "0.12.0.1", "darwin-arm64", [cell("a.b"), cell("a.c")])  # another runner: no baseline for it
    return base, folder


def test_newest_gates_the_newest_version_of_a_results_folder(tmp_path, capsys):
    """issue 19 item 1: a folder holding several versions is refused without --newest, gated by its newest with it."""
    base, folder = _versions_folder(tmp_path, "conforms")
    assert cli.main(["gate", "--baseline", str(base), "--candidate", str(folder)]) == 2
    assert "pass --newest" in capsys.readouterr().err
    assert (
        cli.main(["gate", "--baseline", str(base), "--candidate", str(folder), "--newest", "--baseline-platforms"]) == 0
    )
    out = capsys.readouterr().out
    assert "left out the candidate's jax 0.11.2 linux-x86_64" in out and "jax 0.12.0.1 -> 0.12.0.1" in out
    assert "darwin-arm64 is not gated: the baseline has no results for it" in out


@pytest.mark.parametrize("newest_status, code", [("conforms", 0), ("differs", 1)])
def test_the_workflow_gate_script_decides_on_a_four_version_folder(tmp_path, newest_status, code):
    """issue 19 item 1: .github/scripts/gate.sh, as the workflow runs it, with a baseline and a 4-version folder."""
    import os
    import subprocess
    import sys

    base, folder = _versions_folder(tmp_path, newest_status)
    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "BASELINE": str(base.parent),
        "RESULTS": str(folder),
        "SITE": str(tmp_path / "site"),
        "PYTHON": sys.executable,
        "PYTHONPATH": str(root),
    }
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(["bash", str(root / ".github/scripts/gate.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == code, done.stdout + done.stderr
    assert ("FAIL: 1 regression(s)" if code else "PASS: no regression") in done.stdout
    assert (tmp_path / "site" / "gate.md").exists()


def test_diff_and_gate_name_every_conflict_and_a_cell_listed_twice(tmp_path, capsys):
    """issue 19 item 4: conflicts of merged sets are printed by diff and gate, duplicates within a file too."""
    base = write(tmp_path / "a", "0.8.3", "linux-x86_64", [cell("a.b"), cell("a.b", "", "differs")])
    cand = write(tmp_path / "b", "0.12.0.1", "linux-x86_64", [cell("a.b")])
    for argv in (["diff", str(base), str(cand)], ["gate", "--baseline", str(base), "--candidate", str(cand)]):
        cli.main(argv)
        err = capsys.readouterr().err
        assert (
            "conflict: jax 0.8.3 linux-x86_64 a.b: conforms in 0.8.3-linux-x86_64.json, differs in "
            "0.8.3-linux-x86_64.json (entry 2)" in err
        )


def test_result_data_cannot_forge_lines_or_escapes_in_diff_and_gate_output(tmp_path, capsys):
    """issue 19 item 18: an observation key holding a newline and `::error file=…::`, and ANSI escapes, are escaped."""
    hostile = "x\n::error file=README.md::forged\x1b[31m"
    base = write(tmp_path / "a", "0.8.3", "linux-x86_64", [cell("a.b", "", "conforms", {hostile: 1})])
    cand = write(
        tmp_path / "b",
        "0.12.0.1",
        "linux-x86_64",
        [cell("a.b", "", "differs", {hostile: 2}, reason="bad\x1b[2J\n::warning::x")],
    )
    for argv in (["diff", str(base), str(cand)], ["gate", "--baseline", str(base), "--candidate", str(cand)]):
        cli.main(argv)
        out = capsys.readouterr().out
        assert "\x1b" not in out and not any(line.startswith("::") for line in out.splitlines())
        assert "x\\x0a::error file=README.md::forged\\x1b[31m" in out


def test_gate_from_to_refuses_negative_retries_before_any_work(tmp_path, capsys, monkeypatch):
    """issue 19 item 19: `gate --from/--to --retries -1` is one line from the tool, not pytest's usage error."""
    import conformance.envs.builder as builder

    monkeypatch.setattr(builder.EnvironmentBuilder, "prepare", lambda *a, **k: pytest.fail("built an environment"))
    code = cli.main(["gate", "--from", "0.8.3", "--to", "0.12.0.1", "--retries", "-1", "--results", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "--retries -1: the number of retries cannot be negative" in err and err.count("\n") == 1


@pytest.mark.parametrize("side", ["only_in_baseline", "only_in_candidate"])
def test_a_platform_run_on_one_side_only_is_an_unaccepted_gap(side):
    from conformance.decide.gate import GateOutcome

    outcome = GateOutcome(compared=1, **{side: ["windows-amd64"]})
    assert outcome.unaccepted_gaps == 1 and outcome.exit_code == 1
    accepted = GateOutcome(compared=1, allow_missing=True, **{side: ["windows-amd64"]})
    assert accepted.unaccepted_gaps == 0 and accepted.exit_code == 0
    assert GateOutcome(compared=1).exit_code == 0
