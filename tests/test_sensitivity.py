"""The sensitivity benchmark: its verdict logic and mutant declarations, and (e2e) three real mutants of JAX."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import sensitivity as sens  # noqa: E402
from mutants import ASSERTED, MUTANTS, PRINTED, Mutant, mutant_named  # noqa: E402

from conformance.core.case import load_cases  # noqa: E402
from conformance.errors import ConformanceError  # noqa: E402

SECTIONS = ("§0", "§1", "§2", "§3", "§4", "§5", "§6", "§7", "§8", "§9", "exercises")


def state(status="conforms", printed=False, rows=("r",)):
    return sens.CellState(status, printed, rows)


def test_turns_between_sees_status_changes_and_new_printed_marks_only():
    reference = {"a": state(), "b": state(), "c": state(printed=True), "d": state(), "e": state()}
    mutated = {"a": state("differs"), "b": state(printed=True), "c": state(printed=True), "d": state()}
    turns = {t.cell: t for t in sens.turns_between(reference, mutated)}
    assert set(turns) == {"a", "b", "e"}
    assert (turns["a"].how, turns["a"].before, turns["a"].after) == (sens.STATUS_TURN, "conforms", "differs")
    assert turns["b"].how == sens.PRINTED_MARK
    assert (turns["e"].how, turns["e"].after) == (sens.STATUS_TURN, "missing")


@pytest.mark.parametrize(
    "kind, hows, expected",
    [
        (ASSERTED, [sens.STATUS_TURN], sens.DETECTED),
        (ASSERTED, [sens.PRINTED_MARK], sens.WRONG_TIER),
        (ASSERTED, [], sens.MISSED),
        (PRINTED, [sens.PRINTED_MARK], sens.DETECTED),
        (PRINTED, [sens.STATUS_TURN], sens.WRONG_TIER),
        (PRINTED, [sens.STATUS_TURN, sens.PRINTED_MARK], sens.WRONG_TIER),
        (PRINTED, [], sens.MISSED),
    ],
)
def test_verdict_by_intended_tier(kind, hows, expected):
    turns = [
        sens.Turn(f"t{i}", how, "conforms", "differs" if how == sens.STATUS_TURN else "conforms")
        for i, how in enumerate(hows)
    ]
    turns.append(sens.Turn("elsewhere", sens.STATUS_TURN, "conforms", "differs"))  # off target: no credit
    assert sens.verdict(kind, turns, {f"t{i}" for i in range(len(hows))}) == expected


def test_unstable_turns_count_for_nothing():
    turns = [sens.Turn("t", sens.STATUS_TURN, "conforms", "timeout")]
    assert turns[0].unstable
    assert sens.verdict(ASSERTED, turns, {"t"}) == sens.MISSED


def test_cell_states_read_the_json_report_metadata():
    report = {
        "tests": [
            {
                "metadata": {
                    "case": "s.c",
                    "param": "p",
                    "status": "differs",
                    "printed_diff": [{"path": "x"}],
                    "rows": ["s.r"],
                }
            },
            {"metadata": {"case": "s.d", "param": "", "status": "conforms", "printed_diff": [], "rows": ["s.q"]}},
            {"metadata": {}},
        ]
    }
    assert sens.cell_states(report) == {
        "s.c[p]": sens.CellState("differs", True, ("s.r",)),
        "s.d": sens.CellState("conforms", False, ("s.q",)),
    }


def test_apply_mutant_edits_once_or_says_why_not(tmp_path):
    (tmp_path / "_src").mkdir()
    source = tmp_path / "_src" / "m.py"
    source.write_text("x = 1\ny = 2\ny = 2\n")
    edit = Mutant("m", "§0", ("r",), ASSERTED, "_src/m.py", "x = 1", "x = 3", "x changes")
    assert sens.apply_mutant(edit, tmp_path) == ""
    assert source.read_text() == "x = 3\ny = 2\ny = 2\n"
    assert "found 0 times" in sens.apply_mutant(edit, tmp_path)
    twice = Mutant("t", "§0", ("r",), ASSERTED, "_src/m.py", "y = 2", "y = 4", "y changes")
    assert "found 2 times" in sens.apply_mutant(twice, tmp_path)
    missing = Mutant("n", "§0", ("r",), ASSERTED, "_src/none.py", "a", "b", "nothing")
    assert "no file" in sens.apply_mutant(missing, tmp_path)


def test_restore_files_copies_back_and_drops_bytecode(tmp_path):
    pristine, copy = tmp_path / "p", tmp_path / "c"
    for root, text in ((pristine, "old\n"), (copy, "edited\n")):
        (root / "_src" / "__pycache__").mkdir(parents=True)
        (root / "_src" / "m.py").write_text(text)
    stale = copy / "_src" / "__pycache__" / "m.cpython-313.pyc"
    stale.write_bytes(b"")
    sens.restore_files(pristine, copy, ["_src/m.py"])
    assert (copy / "_src" / "m.py").read_text() == "old\n"
    assert not stale.exists()


def test_selection_by_scope():
    cases = load_cases()
    rows = ["numerics.debug_nans.vmap_miss.vmap"]
    assert sens.selection_for(rows, "module", cases) == sens.Selection(("conformance/cases/numerics.py",))
    assert sens.selection_for(rows, "rows", cases).cells == ("numerics.debug_nans_vmap_miss[vmap]",)
    assert sens.selection_for(rows, "all", cases).paths == ("conformance/cases",)


def test_unknown_target_row_is_a_clear_error():
    wrong = Mutant("w", "§0", ("no.such.row",), ASSERTED, "_src/m.py", "a", "b", "nothing")
    with pytest.raises(ConformanceError, match="no case checks row no.such.row"):
        sens.check_rows([wrong], load_cases())
    assert sens.main(["--only", "no_such_mutant"]) == 2


def test_mutants_cover_every_section_and_every_known_issue():
    cases = load_cases()
    sens.check_rows(MUTANTS, cases)
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert {m.section for m in MUTANTS} >= set(SECTIONS)
    assert {m.kind for m in MUTANTS} == {ASSERTED, PRINTED}
    targeted = {row for m in MUTANTS for row in m.rows}
    known_issue_rows = {
        row for case in cases for param in case.param_names if case.param(param).known_issue for row in case.rows(param)
    }
    assert known_issue_rows and known_issue_rows <= targeted
    assert mutant_named("debug_nans_vmap_miss_fixed").kind == ASSERTED


@pytest.mark.e2e
def test_three_mutants_turn_their_rows_the_intended_way(tmp_path):
    """One asserted mutant, one wording-only mutant and the debug_nans fix, on a copy of the 0.12.0.1 environment.

    The wording-only mutant must only mark printed output: its case encodes the reworded notice in the printed tier.
    """
    chosen = [
        mutant_named(n)
        for n in ("integer_conversion_is_concretization", "deopt_notice_reworded", "debug_nans_vmap_miss_fixed")
    ]
    outcomes = {
        o.mutant.name: o
        for o in sens.measure(chosen, scope="rows", workers=2, workdir=tmp_path, echo=lambda line: None)
    }

    hierarchy = outcomes["integer_conversion_is_concretization"]
    assert hierarchy.verdict == sens.DETECTED, sens.outcome_lines(hierarchy)
    assert "tracers.exception_hierarchy[subclassing]" in hierarchy.targets

    fix = outcomes["debug_nans_vmap_miss_fixed"]
    assert fix.verdict == sens.DETECTED, sens.outcome_lines(fix)
    turned = {t.cell: t for t in fix.turns}
    assert turned["numerics.debug_nans_vmap_miss[vmap]"].how == sens.STATUS_TURN
    assert turned["numerics.debug_nans_vmap_miss[vmap]"].after == "differs"

    notice = outcomes["deopt_notice_reworded"]
    case = next(c for c in load_cases() if c.id == "numerics.debug_nans_deopt_notice")
    assert case.expected_printed("", "linux-x86_64"), "the notice's wording is printed, not asserted, by the chapter"
    assert notice.verdict == sens.DETECTED, sens.outcome_lines(notice)
    assert notice.observed_tier == "printed"


def test_a_cell_that_already_differs_turns_when_another_asserted_fact_differs():
    """A documented discrepancy differs on the reference; a mutant that breaks another asserted fact still turns it."""
    before = {"a.b": sens.CellState("differs", False, ("a.r",), ("retraced",))}
    after = {"a.b": sens.CellState("differs", True, ("a.r",), ("report_starts_with_leaked", "retraced"))}
    [turn] = sens.turns_between(before, after)
    assert turn.how == sens.STATUS_TURN and "report_starts_with_leaked" in turn.after
    assert sens.verdict(sens.ASSERTED, [turn], {"a.b"}) == sens.DETECTED
