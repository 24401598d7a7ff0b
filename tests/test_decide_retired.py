"""Cells the checkout no longer declares are listed apart ("no longer in the suite"), never judged as missing
(issue 56 item 4): the rule lives in `decide.scope`, its listing in `decide.gate` and `decide.render`."""

from __future__ import annotations

from conformance import cli
from conformance.decide.diff import diff_sets, result_set
from conformance.decide.gate import gate
from conformance.decide.render import gate_markdown, gate_text
from conformance.decide.scope import decision_scope, scoped_pair
from conformance.results.load import load_results
from tests.synthetic_results import cell, write

# A case of the suite that became parameterised: its unparameterised cell is no longer declared, its params are.
RETIRED = "setup.jax_logger_hierarchy"
KEPT = ("setup.jax_logger_hierarchy", "debug_log")


def _sides(tmp_path, candidate_cells):
    base = write(tmp_path / "a", "0.12.0.1", "linux-x86_64", [cell(RETIRED), cell(*KEPT), cell("a.b")], schema=5)
    cand = write(tmp_path / "b", "0.12.0.1", "linux-x86_64", candidate_cells, schema=5)
    return base, cand


def test_a_cell_the_suite_no_longer_declares_is_left_out_and_named_not_missing(tmp_path):
    base, cand = _sides(tmp_path, [cell(*KEPT), cell("a.b")])
    pair = scoped_pair(
        result_set(load_results(base), "baseline"),
        result_set(load_results(cand), "candidate"),
        decision_scope([], None),
    )
    assert pair.retired == [f"linux-x86_64 jax 0.12.0.1 {RETIRED} (the baseline's)"]
    # a declared cell is kept; a cell of a module this checkout does not have ("a") cannot be judged retired
    assert set(pair.baseline.runs["linux-x86_64"].cells) == {f"{KEPT[0]}[{KEPT[1]}]", "a.b"}
    outcome = gate(diff_sets(pair.baseline, pair.candidate), retired=pair.retired)
    assert (outcome.missing, outcome.retired, outcome.compared, outcome.exit_code) == ([], pair.retired, 2, 0)
    text, markdown = gate_text(outcome, "gate"), gate_markdown(outcome, "gate")
    assert "NO LONGER IN THE SUITE (NOT COMPARED, NOT FAILING) (1)" in text and RETIRED in text
    assert "### No longer in the suite (not compared, not failing) (1)" in markdown
    assert "1 no longer in the suite." in text and "it was not run" not in text


def test_a_declared_cell_the_candidate_lacks_is_still_missing_and_fails(tmp_path):
    """The wrong edit that calls every absent cell retired: a declared cell the candidate did not run fails."""
    base, cand = _sides(tmp_path, [cell("a.b")])
    pair = scoped_pair(
        result_set(load_results(base), "baseline"),
        result_set(load_results(cand), "candidate"),
        decision_scope([], None),
    )
    outcome = gate(diff_sets(pair.baseline, pair.candidate), retired=pair.retired)
    assert [j.change.cell_id for j in outcome.missing] == [f"{KEPT[0]}[{KEPT[1]}]"] and outcome.exit_code == 1


def test_gate_and_diff_commands_name_the_retired_cells(tmp_path, capsys):
    base, cand = _sides(tmp_path, [cell(*KEPT), cell("a.b")])
    assert cli.main(["gate", "--baseline", str(base), "--candidate", str(cand)]) == 0
    out = capsys.readouterr().out
    assert "MISSING FROM THE CANDIDATE" not in out and f"  linux-x86_64 jax 0.12.0.1 {RETIRED} (the baseline's)" in out
    assert cli.main(["diff", str(base), str(cand)]) == 0
    captured = capsys.readouterr()
    assert "1 cell(s) no longer in the suite (not compared)" in captured.out + captured.err


def test_a_removed_case_is_retired_only_when_the_checkout_can_tell(tmp_path):
    """A keyed cell of a case removed from a module the suite has is retired; an unkeyed one (a synthetic or very
    old file) and a cell of a module the checkout does not know are compared as before."""
    cells = [
        cell("values.removed_case", key="k1"),
        cell("values.unkeyed_case"),
        cell("elsewhere.case", key="k2"),
        cell(*KEPT),
    ]
    base = write(tmp_path / "a", "0.12.0.1", "linux-x86_64", cells, schema=5)
    cand = write(tmp_path / "b", "0.12.0.1", "linux-x86_64", [cell(*KEPT)], schema=5)
    pair = scoped_pair(
        result_set(load_results(base), "baseline"),
        result_set(load_results(cand), "candidate"),
        decision_scope([], None),
    )
    assert pair.retired == ["linux-x86_64 jax 0.12.0.1 values.removed_case (the baseline's)"]
    outcome = gate(diff_sets(pair.baseline, pair.candidate), retired=pair.retired)
    assert sorted(j.change.cell_id for j in outcome.missing) == ["elsewhere.case", "values.unkeyed_case"]
