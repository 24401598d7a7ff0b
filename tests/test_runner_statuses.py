"""Every way a child can end maps to the right status, through real child processes."""

from __future__ import annotations

import os
import time

from tests.waiting import wait_until
from conformance.core.status import Status


def test_conforming_probe_ignores_its_own_stdout_noise(run_fixture_cell):
    result = run_fixture_cell("conforming")
    assert result.status is Status.CONFORMS
    assert result.observation == {"answer": 42, "name": "<script>alert(1)</script>"}
    assert result.details == {"raw": [1, 2, 3]}
    assert "noise on stdout" in result.stdout_tail
    assert "more noise on stderr" in result.stderr_tail
    assert result.command == "jax-conformance run --jax 0.4.38 --cases CASES_DIR -k machinery.conforming"


def test_differing_probe_has_a_field_level_diff(run_fixture_cell):
    result = run_fixture_cell("differing")
    assert result.status is Status.DIFFERS
    assert result.diff == [{"path": "answer", "expected": 42, "observed": 41, "kind": "changed"}]


def test_raising_probe_is_an_error_with_its_traceback(run_fixture_cell):
    result = run_fixture_cell("raising")
    assert result.status is Status.ERROR
    assert result.reason == "ValueError: probe blew up"
    assert "raise ValueError" in result.details["traceback"]


def test_hanging_probe_times_out_and_its_whole_group_is_killed(run_fixture_cell):
    started = time.monotonic()
    result = run_fixture_cell("hanging")
    assert result.status is Status.TIMEOUT
    assert time.monotonic() - started < 120  # its limit is 2 s; the probe and its child sleep 600 s
    # brackets: pgrep never matches itself
    assert wait_until(lambda: os.popen("pgrep -f 'time[.]sleep[(]600[)]'").read().split() == []), (
        "its child outlived it"
    )


def test_segfaulting_probe_is_a_crash_naming_the_signal(run_fixture_cell):
    result = run_fixture_cell("segfaulting")
    assert result.status is Status.CRASH
    assert "SIGSEGV" in result.reason


def test_probe_exiting_without_observation_is_a_crash(run_fixture_cell):
    result = run_fixture_cell("exiting")
    assert result.status is Status.CRASH
    assert "exited with code 3 without an observation" in result.reason


def test_missing_api_is_unsupported_with_the_probes_reason(run_fixture_cell):
    result = run_fixture_cell("unsupported")
    assert result.status is Status.UNSUPPORTED
    assert result.reason == "not yet there: jax.no_such_api does not exist"


def test_non_json_result_is_an_error(run_fixture_cell):
    result = run_fixture_cell("not_json")
    assert result.status is Status.ERROR
    assert "not plain JSON" in result.reason


def test_nan_and_infinities_are_observations_in_their_stored_form(run_fixture_cell):
    """issue 25: a NaN is an observation, not an error: stored as {"$float": "nan"}, equal to an expected NaN."""
    result = run_fixture_cell("nonfinite", "same")
    assert result.status is Status.CONFORMS, result.reason
    assert result.observation == {"error": {"$float": "nan"}, "bounds": [{"$float": "-inf"}, {"$float": "inf"}]}
    assert result.details == {"jit_error": {"$float": "nan"}, "per_row": [1.0, {"$float": "inf"}]}
    result = run_fixture_cell("nonfinite", "finite")
    assert result.status is Status.DIFFERS
    changed = [d for d in result.diff if d["kind"] == "changed"]
    assert [(d["path"], d["expected"], d["observed"]) for d in changed] == [("error", 0.5, {"$float": "nan"})]


def test_case_environment_is_set_and_parent_jax_variables_are_stripped(run_fixture_cell, monkeypatch):
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    result = run_fixture_cell("echo", "a")
    assert result.status is Status.CONFORMS
    assert result.details == {"env": "set-by-case", "jax_vars": []}


def test_platform_skip_does_not_start_a_child(run_fixture_cell):
    result = run_fixture_cell("echo", "b", platform="skip-me")
    assert result.status is Status.SKIPPED
    assert result.reason == "not here"
    assert result.command == ""


def test_retries_keep_every_attempt(run_fixture_cell):
    result = run_fixture_cell("differing", retries=2, retry_differs=True)
    assert result.status is Status.DIFFERS
    assert [a["status"] for a in result.attempts] == ["differs"] * 3


def test_differs_is_not_retried_by_default(run_fixture_cell):
    result = run_fixture_cell("differing", retries=2)
    assert result.status is Status.DIFFERS and result.attempts == []


def test_a_bare_dict_is_not_an_observation(run_fixture_cell):
    result = run_fixture_cell("bare_dict")
    assert result.status is Status.ERROR
    assert "not an Observation" in result.reason
