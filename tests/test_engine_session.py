"""engine/session: which stored results may stand for a cell instead of running it again."""

from __future__ import annotations

import pytest

from conformance.core.status import Status
from conformance.engine.session import reproduced_crash, still_answers
from conformance.results.schema import CellResult


def stored(status: Status, key: str = "k1", attempts: tuple[Status, ...] = ()) -> CellResult:
    return CellResult(case="numerics.x", param="p", rows=[], status=status, key=key,
                      attempts=[{"status": a.value} for a in attempts])


@pytest.mark.parametrize("status", [Status.CONFORMS, Status.DIFFERS, Status.UNSUPPORTED, Status.SKIPPED])
def test_a_result_with_the_same_key_answers_and_another_key_or_no_key_does_not(status):
    assert still_answers(stored(status), "k1")
    assert not still_answers(stored(status), "k2")
    assert not still_answers(stored(status, key=""), "")
    assert not still_answers(None, "k1")


@pytest.mark.parametrize("status", [Status.ERROR, Status.TIMEOUT, Status.FLAKY])
def test_a_broken_or_flaky_result_always_runs_again_whatever_its_attempts(status):
    assert not still_answers(stored(status, attempts=(status, status)), "k1")


def test_a_crash_every_attempt_reproduced_is_a_result_and_a_single_or_mixed_crash_runs_again():
    """A known crash (0.5.3-0.7.1 crash at interpreter exit) would otherwise make every scheduled CI run plan a job."""
    assert reproduced_crash(stored(Status.CRASH, attempts=(Status.CRASH, Status.CRASH)))
    assert still_answers(stored(Status.CRASH, attempts=(Status.CRASH, Status.CRASH)), "k1")
    assert not still_answers(stored(Status.CRASH, attempts=(Status.CRASH, Status.CRASH)), "k2")
    assert not still_answers(stored(Status.CRASH), "k1")  # not retried (--retries 0): may be the machine's
    assert not still_answers(stored(Status.CRASH, attempts=(Status.CRASH,)), "k1")
    assert not still_answers(stored(Status.CRASH, attempts=(Status.TIMEOUT, Status.CRASH)), "k1")
    assert not reproduced_crash(stored(Status.ERROR, attempts=(Status.CRASH, Status.CRASH)))
