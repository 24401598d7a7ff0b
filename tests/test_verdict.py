"""Pure status mapping: outcomes and observation records to statuses, by direction from the documented release."""

from __future__ import annotations

import json
import signal

from conformance.core.observation import ProcessOutcome
from conformance.core.status import Status, describe
from conformance.core.verdict import judge, merged_status, needs_retry
from conformance.core.versions import NEWER, OLDER, SAME, UNKNOWN, direction


def outcome(returncode=0, timed_out=False, sig=None):
    return ProcessOutcome(returncode=returncode, timed_out=timed_out, stdout="", stderr="", duration_s=1.0, signal=sig)


def record(**fields):
    return json.dumps({"schema": 2, "case": "m.c", "param": "", **fields})


OBSERVED = record(outcome="observed", facts={"x": 1}, details={"raw": 1.5})
UNSUPPORTED = record(outcome="unsupported", reason="jax.debug.log")


def test_observation_written_before_a_crash_is_kept_with_its_own_verdict():
    found = judge(outcome(-11, sig=signal.SIGSEGV), OBSERVED, {"x": 2})
    assert found.status is Status.CRASH
    assert found.observation == {"x": 1}
    assert found.diff[0]["observed"] == 1
    assert found.observation_verdict == "differs"
    assert "SIGSEGV" in found.reason and "its observation differs" in found.reason


def test_timeout_wins_over_an_observation():
    found = judge(outcome(-9, timed_out=True, sig=9), OBSERVED, {"x": 1})
    assert found.status is Status.TIMEOUT
    assert found.observation == {"x": 1} and found.observation_verdict == "conforms"


def test_unreadable_observation_is_an_error():
    found = judge(outcome(0), "{not json", {"x": 1})
    assert found.status is Status.ERROR
    assert "not JSON" in found.reason
    assert found.observation is None and found.observation_verdict is None and found.diff == []


def test_observation_without_outcome_or_of_another_schema_is_an_error():
    assert judge(outcome(0), json.dumps({"facts": {}}), {}).status is Status.ERROR
    old = json.dumps({"schema": 1, "outcome": "observed", "facts": {}})
    assert "schema 1" in judge(outcome(0), old, {}).reason


def test_no_observation_at_all_is_a_crash():
    found = judge(outcome(3), None, {})
    assert found.status is Status.CRASH
    assert "exited with code 3 without an observation" in found.reason


def test_conforms_and_differs():
    same = judge(outcome(0), OBSERVED, {"x": 1})
    assert (same.status, same.reason, same.diff, same.observation_verdict) == (Status.CONFORMS, "", [], "conforms")
    assert (same.observation, same.details, same.expected) == ({"x": 1}, {"raw": 1.5}, {"x": 1})
    found = judge(outcome(0), OBSERVED, {"x": 2})
    assert (found.status, found.observation_verdict) == (Status.DIFFERS, "differs")
    assert found.diff == [{"path": "x", "expected": 2, "observed": 1, "kind": "changed"}]


def test_missing_api_is_unsupported_on_an_older_release_and_differs_from_the_documented_one_on():
    older = judge(outcome(0), UNSUPPORTED, {}, "0.4.38")
    assert older.status is Status.UNSUPPORTED and older.reason == "not yet there: jax.debug.log"
    for version in ("0.12.0.1", "0.13.0"):
        removed = judge(outcome(0), UNSUPPORTED, {}, version)
        assert removed.status is Status.DIFFERS
        assert removed.reason.startswith("removed: jax.debug.log")
        assert removed.diff == [{"path": "<api>", "expected": "jax.debug.log", "observed": None, "kind": "missing"}]


def test_directions():
    assert direction("0.4.38") == OLDER
    assert direction("0.12.0.1") == SAME
    assert direction("0.12.0") == OLDER
    assert direction("0.12.1") == NEWER
    assert direction("1.0") == NEWER


def test_known_issue_wording_by_direction():
    assert describe(Status.CONFORMS, True, OLDER) == "bug still present"
    assert describe(Status.DIFFERS, True, OLDER) == "bug absent"
    assert describe(Status.DIFFERS, True, SAME) == "changed: maybe fixed"
    assert describe(Status.DIFFERS, True, NEWER) == "changed: maybe fixed"
    assert describe(Status.DIFFERS, False, NEWER) == "differs"
    assert describe(Status.CRASH, True, NEWER) == "crash"


def test_retries_by_default_only_for_broken_runs():
    assert [s for s in Status if needs_retry(s)] == [Status.ERROR, Status.CRASH, Status.TIMEOUT]
    assert needs_retry(Status.DIFFERS, retry_differs=True)
    assert not needs_retry(Status.CONFORMS, retry_differs=True)


def test_disagreeing_attempts_are_flaky():
    assert merged_status([Status.CRASH, Status.CONFORMS]) == (Status.FLAKY, "attempts disagreed: crash, conforms")
    assert merged_status([Status.ERROR, Status.ERROR]) == (Status.ERROR, "")


TWO_TIERS = record(outcome="observed", facts={"raises": "TypeError", "message": "new wording"})


def test_printed_facts_mark_the_cell_without_changing_its_status():
    found = judge(outcome(), TWO_TIERS, {"raises": "TypeError"}, printed={"message": "old wording"})
    assert found.status is Status.CONFORMS
    assert found.diff == []
    assert found.printed_diff == [
        {"path": "message", "expected": "old wording", "observed": "new wording", "kind": "changed"}
    ]
    assert found.printed_expected == {"message": "old wording"}


def test_asserted_facts_decide_the_status_whatever_is_printed():
    found = judge(outcome(), TWO_TIERS, {"raises": "ValueError"}, printed={"message": "new wording"})
    assert found.status is Status.DIFFERS
    assert [d["path"] for d in found.diff] == ["raises"] and found.printed_diff == []


def test_a_printed_fact_the_probe_no_longer_returns_is_missing_from_its_tier():
    found = judge(
        outcome(),
        record(outcome="observed", facts={"raises": "TypeError"}),
        {"raises": "TypeError"},
        printed={"message": "old wording"},
    )
    assert found.status is Status.CONFORMS and found.diff == []
    assert found.printed_diff == [{"path": "message", "expected": "old wording", "observed": None, "kind": "missing"}]


def test_a_fact_declared_in_neither_tier_is_unexpected_in_the_asserted_tier():
    found = judge(outcome(), TWO_TIERS, {"raises": "TypeError"})
    assert found.status is Status.DIFFERS
    assert found.diff == [{"path": "message", "expected": None, "observed": "new wording", "kind": "unexpected"}]
    assert found.printed_diff == [] and found.printed_expected is None


def test_a_missing_api_on_an_unknown_version_is_unsupported_never_removed():
    for version in (None, "", "not-a-version"):
        assert direction(version) == UNKNOWN
        found = judge(outcome(0), UNSUPPORTED, {}, version)
        assert found.status is Status.UNSUPPORTED and found.reason == "not yet there: jax.debug.log"
        assert found.diff == []


def test_every_ending_names_itself_in_one_exact_reason():
    assert judge(outcome(-9, timed_out=True, sig=9), None, {}).reason == "killed after its time limit"
    assert judge(outcome(-9, timed_out=True), OBSERVED, {"x": 2}).reason == (
        "killed after its time limit; its observation differs (written before)"
    )
    assert judge(outcome(-11, sig=signal.SIGSEGV), OBSERVED, {"x": 1}).reason == (
        "the child died by SIGSEGV; its observation conforms (written before)"
    )
    unnamed = judge(outcome(-200, sig=200), None, {})
    assert (unnamed.status, unnamed.reason) == (Status.CRASH, "the child died by signal 200")
    assert judge(outcome(3), None, {}).reason == "the child exited with code 3 without an observation"
    removed = judge(outcome(0), UNSUPPORTED, {}, "0.13.0", documented="0.12.0.1")
    assert removed.reason == "removed: jax.debug.log (the documented 0.12.0.1 has it)"
    assert judge(outcome(0), record(outcome="unsupported"), {}, "0.4.38").reason == "not yet there: "


def test_a_probe_error_is_an_error_with_its_type_message_and_traceback():
    error = record(outcome="error", error={"type": "TypeError", "message": "bad operand", "traceback": "Trace..."})
    found = judge(outcome(0), error, {"x": 1})
    assert (found.status, found.reason, found.details) == (
        Status.ERROR,
        "TypeError: bad operand",
        {"traceback": "Trace..."},
    )
    assert found.observation is None and found.diff == [] and found.expected == {"x": 1}
    bare = judge(outcome(0), record(outcome="error"), {})
    assert (bare.status, bare.reason, bare.details) == (Status.ERROR, "?: ", {"traceback": ""})


def test_the_judgement_keeps_the_expectations_and_the_record_warnings():
    warned = record(outcome="observed", facts={"x": 1}, warnings=[{"category": "DeprecationWarning", "message": "old"}])
    found = judge(outcome(0), warned, {"x": 1}, printed={})
    assert found.printed_expected is None and found.printed_diff == [] and found.expected == {"x": 1}
    assert found.warnings == [{"category": "DeprecationWarning", "message": "old", "module": "", "deprecation": ""}]
    assert judge(outcome(0), OBSERVED, {"x": 1}).warnings == []


def test_facts_that_are_not_a_mapping_stay_whole_in_the_asserted_tier():
    from conformance.core.verdict import split_tiers

    assert split_tiers([1, 2], {"message": "m"}) == ([1, 2], {})
    assert split_tiers({"a": 1, "m": 2}, {}) == ({"a": 1, "m": 2}, {})
    assert split_tiers({"a": 1, "m": 2}, {"m": 0, "gone": 0}) == ({"a": 1}, {"m": 2})
    found = judge(outcome(0), record(outcome="observed", facts=[7]), {"x": 7}, printed={"m": "x"})
    assert found.status is Status.DIFFERS and found.observation == [7]
    assert found.diff == [{"path": "<observation>", "expected": {"x": 7}, "observed": [7], "kind": "changed"}]
    assert found.printed_diff == [{"path": "m", "expected": "x", "observed": None, "kind": "missing"}]


def test_one_attempt_or_agreeing_ones_keep_their_status():
    assert merged_status([Status.CONFORMS]) == (Status.CONFORMS, "")
    assert merged_status([Status.DIFFERS, Status.DIFFERS, Status.DIFFERS]) == (Status.DIFFERS, "")
    assert not needs_retry(Status.DIFFERS) and not needs_retry(Status.FLAKY, retry_differs=True)


def test_a_missing_api_reads_removed_only_on_a_newer_release():
    assert describe(Status.UNSUPPORTED, False, NEWER) == "removed"
    assert describe(Status.UNSUPPORTED, False, OLDER) == describe(Status.UNSUPPORTED, False) == "unsupported"
    assert describe(Status.UNSUPPORTED, True, SAME) == "unsupported"
    assert describe(Status.DIFFERS, True) == "changed: maybe fixed"


def test_the_direction_is_taken_from_the_documented_release_given():
    removed = judge(outcome(0), UNSUPPORTED, {}, "0.5.0", documented="0.4.0")
    assert removed.status is Status.DIFFERS and removed.reason == "removed: jax.debug.log (the documented 0.4.0 has it)"
    assert judge(outcome(0), UNSUPPORTED, {}, "0.13.0", documented="0.14.0").status is Status.UNSUPPORTED
