"""The status vocabulary of a cell, defined once for the whole suite, with its progress letters and wording.

Every other module (runner, plugin, report, gate) names statuses through this
module, so the words and their meanings cannot drift apart.
"""

from __future__ import annotations

import enum

from conformance.core.versions import NEWER, OLDER


class Status(str, enum.Enum):
    """What happened to one cell: one case parameter on one JAX version and platform."""

    CONFORMS = "conforms"
    DIFFERS = "differs"
    UNSUPPORTED = "unsupported"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"
    FLAKY = "flaky"

    def __str__(self) -> str:
        return self.value


MEANING = {
    Status.CONFORMS: "the observation equals the documented expectation",
    Status.DIFFERS: "the probe ran; the observation differs from the documented expectation",
    Status.UNSUPPORTED: "the API the behaviour is about does not exist in this version (not yet there)",
    Status.ERROR: "the probe itself raised something it did not expect",
    Status.CRASH: "the process died by a signal or exited without an observation",
    Status.TIMEOUT: "killed after its time limit",
    Status.SKIPPED: "not applicable here",
    Status.FLAKY: "retries disagreed; every attempt is kept",
}

# One character per finished cell while a run is in progress.
LETTER = {
    Status.CONFORMS: ".",
    Status.DIFFERS: "D",
    Status.UNSUPPORTED: "u",
    Status.ERROR: "E",
    Status.CRASH: "C",
    Status.TIMEOUT: "T",
    Status.SKIPPED: "s",
    Status.FLAKY: "F",
}

# How a status maps onto a pytest outcome when the suite runs under pytest.
PYTEST_OUTCOME = {
    Status.CONFORMS: "passed",
    Status.DIFFERS: "failed",
    Status.UNSUPPORTED: "skipped",
    Status.ERROR: "failed",
    Status.CRASH: "failed",
    Status.TIMEOUT: "failed",
    Status.SKIPPED: "skipped",
    Status.FLAKY: "failed",
}

# Statuses of a run that did not reach an observation of its own (a clean run turning into one regresses).
BROKEN = frozenset({Status.ERROR, Status.CRASH, Status.TIMEOUT})

# For a row about a known issue (a bug the chapter documents) the plain words mislead.
KNOWN_ISSUE_PRESENT = "bug still present"
KNOWN_ISSUE_ABSENT = "bug absent"
KNOWN_ISSUE_CHANGED = "changed: maybe fixed"
KNOWN_ISSUE_WORDING = {
    KNOWN_ISSUE_PRESENT: "conforms on a known-issue row: the documented bug reproduces",
    KNOWN_ISSUE_ABSENT: "differs on a known-issue row, on a release older than the documented one",
    KNOWN_ISSUE_CHANGED: "differs on a known-issue row, on the documented release or a newer one",
}
REMOVED = "removed"


def describe(status: Status, known_issue: bool, direction: str = "") -> str:
    """The words a person reads for a status, by direction from the documented release where it matters."""
    if known_issue and status is Status.CONFORMS:
        return KNOWN_ISSUE_PRESENT
    if known_issue and status is Status.DIFFERS:
        return KNOWN_ISSUE_ABSENT if direction == OLDER else KNOWN_ISSUE_CHANGED
    if status is Status.UNSUPPORTED and direction == NEWER:
        return REMOVED
    return status.value
