"""`benchmarks/self_mutation.py`'s pure parts: tallying mutmut's exit codes per module, the equivalent-mutants file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import self_mutation as sm  # noqa: E402

GATE = "conformance.decide.gate"


def test_exit_codes_are_tallied_per_module_with_equivalents_apart_and_never_dropped():
    codes = {
        f"{GATE}.x_classify__mutmut_1": 1,
        f"{GATE}.x_classify__mutmut_2": 0,
        f"{GATE}.x_classify__mutmut_3": 0,
        f"{GATE}.x_gate__mutmut_1": 36,
        f"{GATE}.x_gate__mutmut_2": 33,
        "conformance.core.status.x_f__mutmut_1": 3,
    }
    scores = sm.tally(codes, {f"{GATE}.x_classify__mutmut_3": "same value"}, ["conformance/decide/gate.py"])
    gate = scores["conformance/decide/gate.py"]
    assert (gate.made, gate.killed, gate.survived, gate.timeout, gate.equivalent, gate.other) == (5, 1, 1, 1, 1, 1)
    assert gate.survivors == [f"{GATE}.x_classify__mutmut_2"] and gate.equivalents == [f"{GATE}.x_classify__mutmut_3"]
    assert gate.others == [f"{GATE}.x_gate__mutmut_2 (exit 33)"]
    assert gate.score == pytest.approx(100 * 2 / 4)
    assert scores["conformance/core/status.py"].killed == 1 and scores["conformance/core/status.py"].score == 100


def test_mutants_a_stopped_run_never_tried_are_not_run_and_left_out_of_the_score():
    scores = sm.tally(
        {f"{GATE}.x_a__mutmut_1": 1, f"{GATE}.x_a__mutmut_2": None, f"{GATE}.x_a__mutmut_3": 0},
        {},
        ["conformance/decide/gate.py"],
    )
    gate = scores["conformance/decide/gate.py"]
    assert (gate.made, gate.killed, gate.survived, gate.not_run, gate.other) == (3, 1, 1, 1, 0)
    assert gate.score == 50
    assert "notrun" in sm.table([gate])[0] and sm.table([gate])[2].split()[-2:] == ["1", "50.0%"]


def test_a_listed_equivalent_that_is_killed_or_gone_is_stale():
    codes = {f"{GATE}.x_a__mutmut_1": 0, f"{GATE}.x_a__mutmut_2": 1}
    stale = sm.stale_equivalents(
        codes, {f"{GATE}.x_a__mutmut_1": "r", f"{GATE}.x_a__mutmut_2": "r", f"{GATE}.x_a__mutmut_9": "r"}
    )
    assert stale == [
        f"{GATE}.x_a__mutmut_2: not a survivor (exit 1), so not equivalent",
        f"{GATE}.x_a__mutmut_9: no such mutant any more",
    ]


def test_the_equivalents_file_needs_a_reason_on_every_line(tmp_path):
    good = tmp_path / "eq.txt"
    good.write_text("# comment\n\nm.x_f__mutmut_1   the default is never used\n")
    assert sm.read_equivalents(good) == {"m.x_f__mutmut_1": "the default is never used"}
    bad = tmp_path / "bad.txt"
    bad.write_text("m.x_f__mutmut_1\n")
    with pytest.raises(SystemExit, match="bad.txt:1: `m.x_f__mutmut_1` has no reason"):
        sm.read_equivalents(bad)
    assert sm.read_equivalents(tmp_path / "none.txt") == {}


def test_the_projects_equivalents_file_reads_and_names_modules_under_test():
    for name in sm.read_equivalents(sm.EQUIVALENTS):
        assert sm.module_of(name) in sm.MODULES, name


def test_module_names_and_every_listed_module_exists():
    assert sm.module_of(f"{GATE}.xǁGateOutcomeǁexit_code__mutmut_2") == "conformance/decide/gate.py"
    assert all((sm.ROOT / m).is_file() for m in sm.MODULES)


def test_the_test_selection_reaches_mutmuts_configuration():
    config = sm.mutmut_config(
        ["conformance/decide/gate.py"], 5.0, ["README.md"], ["tests/test_decide_gate.py", "-m", "not e2e"]
    )
    assert 'pytest_add_cli_args_test_selection = ["tests/test_decide_gate.py", "-m", "not e2e"]' in config
    assert 'pytest_add_cli_args_test_selection = ["tests", "-m", "not e2e"]' in sm.mutmut_config([], 5.0, [])


def test_a_test_file_that_does_not_exist_is_refused_in_one_line(capsys, tmp_path):
    with pytest.raises(SystemExit) as stopped:
        sm.main(
            [
                "--module",
                "conformance/decide/gate.py",
                "--tests",
                "tests/test_nothing_here.py",
                "--workdir",
                str(tmp_path),
            ]
        )
    assert stopped.value.code == 2
    assert "no such test file: tests/test_nothing_here.py" in capsys.readouterr().err
