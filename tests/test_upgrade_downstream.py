"""The upgrade review's downstream tier (`upgrade --from A --to B --downstream SUITE`, issue 56): each suite's tests
regressed and fixed from A to B grouped by signature (a count and up to three examples), a candidate the suite's
lock cannot be installed with named, flaky, appeared and vanished tests counted, and the tier not asked without a
suite. Judgements are made by `downstream.judge` from synthetic results; the session's suite judge
(`downstream.command.judge_suites`, the run `gate --downstream` makes) is replaced by one returning them, so no suite
runs and no JAX is needed; and once through the real suite judge on a team folder whose cells are stored (the gate's
fixture), answered from storage as `gate --downstream` answers."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from conformance import cli
from conformance.decide import upgrade
from conformance.decide.tiers import BREAKS, INFO, NOTED, WARNS
from conformance.decide.upgrade_tiers import downstream_review_tier
from conformance.downstream import command
from conformance.downstream.command import SuitesJudged
from conformance.downstream.judge import Judged, judge
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.engine.matrix import RunSettings
from conformance.errors import ConformanceError
from tests import test_downstream_gate as gate_tests

SCHEMA = Path(__file__).resolve().parents[1] / "conformance" / "decide" / "schemas" / "upgrade-1.schema.json"
SUITE = "chex==0.1.90"
GONE = "AttributeError: module 'jax' has no attribute 'tree_map'"
SLOW = "TypeError: unexpected keyword 'axis'"


def _failing(signature: str) -> Judged:
    return Judged("failed", signature, "chex")


def _judgement():
    """Five tests regressed with one signature, one with another, one fixed, one flaky, one appeared, one vanished, one
    broken on both with another cause, two unchanged (one passing, one broken on both with the same cause)."""
    gone = [f"tests/test_tree.py::test_{i}" for i in range(5)]
    before = {n: Judged("passed") for n in gone}
    before |= {
        "tests/test_axis.py::test_sum": Judged("passed"),
        "tests/test_fix.py::test_ok": _failing("ValueError: bad shape"),
        "tests/test_flaky.py::test_f": Judged("passed"),
        "tests/test_old.py::test_gone": Judged("passed"),
        "tests/test_same.py::test_a": Judged("passed"),
        "tests/test_same.py::test_b": _failing(GONE),
        "tests/test_same.py::test_c": _failing(GONE),
    }
    after = {n: _failing(GONE) for n in gone}
    after |= {
        "tests/test_axis.py::test_sum": _failing(SLOW),
        "tests/test_fix.py::test_ok": Judged("passed"),
        "tests/test_flaky.py::test_f": Judged("flaky", "OSError"),
        "tests/test_new.py::test_new": Judged("passed"),
        "tests/test_same.py::test_a": Judged("passed"),
        "tests/test_same.py::test_b": _failing(GONE),
        "tests/test_same.py::test_c": _failing(SLOW),
    }
    return judge(SUITE, before, after)


def _uninstallable():
    """A candidate the suite's lock cannot be installed with: every baseline test not run, under one cause."""
    before = {"tests/test_a.py::test_a": Judged("passed"), "tests/test_a.py::test_b": Judged("passed")}
    why = Judged("uninstallable", "jaxlib==0.7.2 has no wheel for jax 0.12.0.1")
    return judge("team", before, {UNINSTALLABLE_ID: why})


def test_regressed_and_fixed_tests_are_grouped_by_signature_with_a_count_and_three_examples():
    tier = downstream_review_tier([(SUITE, "0.8.0", "0.12.0.1", _judgement())])
    by_name = {f.subject: f for f in tier.findings}
    gone = by_name[f"{SUITE}: {GONE} (in chex)"]
    assert gone.reason == "5 tests regressed" and gone.weight == BREAKS and gone.state == NOTED
    assert gone.detail == "e.g. tests/test_tree.py::test_0, tests/test_tree.py::test_1, tests/test_tree.py::test_2, ..."
    axis = by_name[f"{SUITE}: {SLOW} (in chex)"]
    assert axis.reason == "1 test regressed" and axis.detail == "e.g. tests/test_axis.py::test_sum"
    fixed = by_name[f"{SUITE}: ValueError: bad shape (in chex)"]
    assert fixed.reason == "1 test fixed" and fixed.weight == INFO
    assert len(tier.findings) == 3  # broken on both with the same cause, and unchanged tests, are no item
    assert [f.subject for f in tier.findings][-1] == fixed.subject  # what breaks first
    assert tier.notes == (f"{SUITE}: 1 flaky, 1 broken on both with another cause, 1 appeared, 1 vanished",)
    # 13 node ids compared (both sides together); 7 tests change: 6 regressed and 1 fixed, in 3 items
    assert (tier.judged, tier.changing) == (13, 7)
    assert tier.heading == "Downstream suites: 7 of 13 change (3 items)"


def test_a_candidate_the_lock_cannot_install_is_named_with_its_cause():
    tier = downstream_review_tier([("team", "0.8.0", "0.12.0.1", _uninstallable())])
    (found,) = tier.findings
    assert found.subject == "team" and found.reason == "cannot be installed with jax 0.12.0.1"
    assert found.weight == BREAKS and "2 tests of jax 0.8.0 not run: jaxlib==0.7.2 has no wheel" in found.detail
    # the baseline it cannot be installed with judges nothing: named, never "no change"
    reversed_ = judge("team", {UNINSTALLABLE_ID: Judged("uninstallable", "no wheel")}, {"t::a": Judged("passed")})
    (base,) = downstream_review_tier([("team", "0.8.0", "0.12.0.1", reversed_)]).findings
    assert base.reason == "cannot be installed with jax 0.8.0" and base.weight == WARNS


def test_no_suite_asked_is_said_and_never_judges(monkeypatch):
    monkeypatch.setattr(command, "judge_suites", lambda *a: (_ for _ in ()).throw(AssertionError("judged")))
    request = upgrade.UpgradeRequest("0.8.0", "0.12.0.1", _settings())
    tier = upgrade._downstream(request, lambda: None, print)
    assert tier.missing == "not asked: give --downstream SUITE" and tier.findings == ()
    assert tier.heading == "Downstream suites: not judged (not asked: give --downstream SUITE)"


def _stub_other_tiers(monkeypatch):
    def absent(*args, **kwargs):
        raise ConformanceError("no results stored for a side")

    monkeypatch.setattr(upgrade, "run_diff", absent)
    monkeypatch.setattr(upgrade, "run_api_diff", absent)


def test_upgrade_downstream_judges_each_suite_as_the_gate_does_and_says_it_three_ways(tmp_path, monkeypatch, capsys):
    asked = []

    def judge_suites(request, builder, say):
        asked.append(request)
        found = SuitesJudged()
        found.judged = [(SUITE, "0.8.0", "0.12.0.1", _judgement()), ("team", "0.8.0", "0.12.0.1", _uninstallable())]
        return found

    monkeypatch.setattr(command, "judge_suites", judge_suites)
    _stub_other_tiers(monkeypatch)
    out, md = tmp_path / "review.json", tmp_path / "review.md"
    argv = ["upgrade", "--from", "0.8.0", "--to", "0.12.0.1", "--perf-rounds", "0", "--results", str(tmp_path / "r")]
    code = cli.main([*argv, "--downstream", SUITE, "--downstream", "team", "--json", str(out), "--markdown", str(md)])
    assert code == 0
    (request,) = asked
    assert request.suites == (SUITE, "team") and request.versions == ("0.8.0", "0.12.0.1")
    assert request.today is not None and request.read is None  # the gate's run; a review acknowledges nothing
    text = capsys.readouterr().out
    assert "downstream 4" in text.splitlines()[0]
    assert "Downstream suites: 9 of 15 change (4 items)" in text
    assert f"{SUITE}: {GONE} (in chex): 5 tests regressed" in text
    assert "team: cannot be installed with jax 0.12.0.1" in text
    assert "### Downstream suites: 9 of 15 change (4 items)" in md.read_text(encoding="utf-8")
    data = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))
    tier = next(t for t in data["tiers"] if t["key"] == "downstream")
    assert tier["judged"] and tier["count"] == 4 and tier["changed"] == 9
    changes = [i["change"] for i in tier["items"]]
    assert sorted(changes) == [
        "1 test fixed",
        "1 test regressed",
        "5 tests regressed",
        "cannot be installed with jax 0.12.0.1",
    ]
    assert changes[-1] == "1 test fixed"  # what breaks first


def test_upgrade_without_a_suite_lists_the_tier_as_not_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(command, "judge_suites", lambda *a: (_ for _ in ()).throw(AssertionError("judged")))
    _stub_other_tiers(monkeypatch)
    out = tmp_path / "review.json"
    argv = ["upgrade", "--from", "0.8.0", "--to", "0.12.0.1", "--perf-rounds", "0", "--results", str(tmp_path / "r")]
    assert cli.main([*argv, "--json", str(out)]) == 0
    tier = next(t for t in json.loads(out.read_text(encoding="utf-8"))["tiers"] if t["key"] == "downstream")
    assert tier["judged"] is False and tier["missing"] == "not asked: give --downstream SUITE" and tier["items"] == []


def test_a_suite_that_cannot_be_judged_is_named_not_empty(monkeypatch):
    def judge_suites(request, builder, say):
        raise ConformanceError("chex==0.1.90: no such release on the index")

    monkeypatch.setattr(command, "judge_suites", judge_suites)
    request = upgrade.UpgradeRequest("0.8.0", "0.12.0.1", _settings(), downstream=(SUITE,))
    tier = upgrade._downstream(request, lambda: None, print)
    assert tier.missing == "chex==0.1.90: no such release on the index" and tier.findings == ()


def _settings() -> RunSettings:
    return RunSettings(results=Path("results"))


suite = gate_tests.suite  # a team folder whose cells are stored under the key a run would compute (no suite runs)


def test_upgrade_answers_a_suite_from_its_stored_cells_as_the_gate_does(suite, tmp_path, monkeypatch, capsys):
    _stub_other_tiers(monkeypatch)
    nodes = gate_tests.NODES
    suite.store("0.8.0", [NodeOutcome(nodes[0], "passed", 0.1), *gate_tests.passing()[1:]])
    suite.store("0.9.0", [NodeOutcome(nodes[0], "failed", 0.1, gate_tests.GONE), *gate_tests.passing()[1:]])
    out = tmp_path / "review.json"
    argv = ["upgrade", "--from", "0.8.0", "--to", "0.9.0", "--perf-rounds", "0", "--results", str(suite.results)]
    assert cli.main([*argv, "--downstream", suite.spec, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Downstream suites: 1 of 3 change" in text
    (found,) = next(t for t in json.loads(out.read_text(encoding="utf-8"))["tiers"] if t["key"] == "downstream")[
        "items"
    ]
    assert found["name"].startswith(f"{suite.label}: AttributeError: module 'jax' has no attribute 'tree_map'")
    assert (
        found["change"] == "1 test regressed" and found["detail"] == f"e.g. {nodes[0]}" and found["weight"] == "breaks"
    )
