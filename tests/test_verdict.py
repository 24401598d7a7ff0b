"""Pure status mapping: outcomes and observation records to statuses, and merging attempts."""

from __future__ import annotations

import json
import signal

from conformance.engine.launch import ProcessOutcome
from conformance.core.status import Status, describe
from conformance.core.verdict import CellResult, classify, merge_attempts


def outcome(returncode=0, timed_out=False, sig=None):
    return ProcessOutcome(returncode=returncode, timed_out=timed_out, stdout="", stderr="", duration_s=1.0,
                          signal=sig)


OBSERVED = json.dumps({"schema": 2, "outcome": "observed", "facts": {"x": 1}, "details": {"raw": 1.5}})


def test_observation_written_before_a_crash_is_kept():
    status, fields = classify(outcome(-11, sig=signal.SIGSEGV), OBSERVED, {"x": 2})
    assert status is Status.CRASH
    assert fields["observation"] == {"x": 1}
    assert fields["diff"][0]["observed"] == 1
    assert "SIGSEGV" in fields["reason"]


def test_timeout_wins_over_an_observation():
    status, fields = classify(outcome(-9, timed_out=True, sig=9), OBSERVED, {"x": 1})
    assert status is Status.TIMEOUT
    assert fields["observation"] == {"x": 1}


def test_unreadable_observation_is_an_error():
    status, fields = classify(outcome(0), "{not json", {"x": 1})
    assert status is Status.ERROR
    assert "not JSON" in fields["reason"]


def test_observation_without_outcome_is_an_error():
    status, _ = classify(outcome(0), json.dumps({"facts": {}}), {})
    assert status is Status.ERROR


def test_conforms_and_differs():
    assert classify(outcome(0), OBSERVED, {"x": 1})[0] is Status.CONFORMS
    status, fields = classify(outcome(0), OBSERVED, {"x": 2})
    assert status is Status.DIFFERS
    assert fields["diff"][0]["path"] == "x"


def _result(status):
    return CellResult(case="m.c", param="", rows=["r"], status=status)


def test_disagreeing_attempts_are_flaky_and_all_kept():
    merged = merge_attempts([_result(Status.DIFFERS), _result(Status.CONFORMS)])
    assert merged.status is Status.FLAKY
    assert [a["status"] for a in merged.attempts] == ["differs", "conforms"]
    assert "differs, conforms" in merged.reason


def test_known_issue_wording():
    assert describe(Status.CONFORMS, known_issue=True) == "bug still present"
    assert describe(Status.DIFFERS, known_issue=True) == "changed, maybe fixed"
    assert describe(Status.DIFFERS, known_issue=False) == "differs"
    assert describe(Status.CRASH, known_issue=True) == "crash"
