"""The status vocabulary of a cell, defined once for the whole suite.

Every other module (runner, plugin, report, gate) names statuses through this
module, so the words and their meanings cannot drift apart.
"""

from __future__ import annotations

import enum


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
    Status.UNSUPPORTED: "the API the behaviour is about does not exist in this version",
    Status.ERROR: "the probe itself raised something it did not expect",
    Status.CRASH: "the process died by a signal or exited without an observation",
    Status.TIMEOUT: "killed after its time limit",
    Status.SKIPPED: "not applicable here",
    Status.FLAKY: "retries disagreed; every attempt is kept",
}

# For a row about a known issue (a bug the chapter documents) the plain words
# mislead: "conforms" means the bug is still there.
KNOWN_ISSUE_WORDING = {
    Status.CONFORMS: "bug still present",
    Status.DIFFERS: "changed, maybe fixed",
}

# Statuses under which the probe ran to the end and its observation is meaningful.
OBSERVED = frozenset({Status.CONFORMS, Status.DIFFERS})

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


def describe(status: Status, known_issue: bool) -> str:
    """The word a person reads for a status, in known-issue wording where it applies."""
    if known_issue and status in KNOWN_ISSUE_WORDING:
        return KNOWN_ISSUE_WORDING[status]
    return status.value
