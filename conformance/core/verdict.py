"""From a finished child process and its observation record to a cell's status. Pure logic.

Every way a cell can end (hang, signal, missing or unreadable observation, probe
error, unsupported API, observation equal to or different from the documented
expectation) becomes a status here, and only here. Where it matters, the status
depends on the direction from the documented release: an API missing on an older
release is `unsupported` (not yet there), on the documented or a newer one `differs` (removed).
"""

from __future__ import annotations

import signal as signals
from dataclasses import dataclass, field
from typing import Any, Mapping

from conformance.core.compare import diff
from conformance.core.observation import ProcessOutcome, parse_record, warnings_of
from conformance.core.status import Status
from conformance.core.versions import DOCUMENTED_JAX, OLDER, UNKNOWN, direction


@dataclass
class Judgement:
    """The status of one attempt at a cell and what it contributes to the cell's result."""

    status: Status
    reason: str = ""
    expected: Any = None
    observation: Any = None
    details: Any = None
    diff: list[dict[str, Any]] = field(default_factory=list)
    observation_verdict: str | None = None
    printed_expected: Any = None
    printed_diff: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)  # deprecation warnings: they mark, never decide


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def split_tiers(facts: Any, printed: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """An observation's facts split into the asserted tier and the printed tier (the keys `printed` declares).

    A key the expectation declares in neither tier stays in the asserted tier, where it is
    reported as unexpected; a printed key the observation lacks is missing from the printed tier.
    """
    if not isinstance(facts, Mapping) or not printed:
        return facts, {}
    asserted = {k: v for k, v in facts.items() if k not in printed}
    return asserted, {k: facts[k] for k in printed if k in facts}


def judge(
    outcome: ProcessOutcome,
    record_text: str | None,
    expected: Mapping[str, Any],
    jax_version: str | None = None,
    documented: str = DOCUMENTED_JAX,
    printed: Mapping[str, Any] | None = None,
) -> Judgement:
    """The status of a finished cell on `jax_version`, with its observation, diffs and reason.

    Only the asserted facts (`expected`) decide the status; the printed facts (`printed`) are
    compared into `printed_diff`, which marks the cell without changing its status.
    """
    record, unreadable = parse_record(record_text)
    printed = dict(printed or {})
    found = Judgement(
        Status.ERROR, expected=dict(expected), printed_expected=printed or None, warnings=warnings_of(record)
    )
    if record and record.get("outcome") == "observed":
        # Kept whatever happens next (a crash at interpreter exit, say), diffs included.
        found.observation = record.get("facts")
        found.details = record.get("details")
        asserted, shown = split_tiers(record.get("facts"), printed)
        found.diff = [d.to_json() for d in diff(expected, asserted)]
        found.printed_diff = [d.to_json() for d in diff(printed, shown)] if printed else []
        found.observation_verdict = (Status.DIFFERS if found.diff else Status.CONFORMS).value
    if outcome.timed_out:
        found.status, found.reason = Status.TIMEOUT, "killed after its time limit"
    elif outcome.signal is not None:
        found.status, found.reason = Status.CRASH, f"the child died by {_signal_name(outcome.signal)}"
    elif record is None and record_text is None:
        found.status = Status.CRASH
        found.reason = f"the child exited with code {outcome.returncode} without an observation"
    elif record is None:
        found.status, found.reason = Status.ERROR, unreadable
    elif record["outcome"] == "unsupported":
        missing = str(record.get("reason", ""))
        if direction(jax_version, documented) in (OLDER, UNKNOWN):
            found.status, found.reason = Status.UNSUPPORTED, f"not yet there: {missing}"
        else:
            found.status = Status.DIFFERS
            found.reason = f"removed: {missing} (the documented {documented} has it)"
            found.diff = [{"path": "<api>", "expected": missing, "observed": None, "kind": "missing"}]
    elif record["outcome"] == "error":
        error = record.get("error") or {}
        found.status = Status.ERROR
        found.reason = f"{error.get('type', '?')}: {error.get('message', '')}"
        found.details = {"traceback": error.get("traceback", "")}
    else:
        found.status = Status.DIFFERS if found.diff else Status.CONFORMS
    if found.status in (Status.CRASH, Status.TIMEOUT) and found.observation_verdict:
        found.reason += f"; its observation {found.observation_verdict} (written before)"
    return found


def needs_retry(status: Status, retry_differs: bool = False) -> bool:
    """Whether another attempt could tell a real result from a flaky one: error, crash and timeout by default."""
    if status in (Status.ERROR, Status.CRASH, Status.TIMEOUT):
        return True
    return retry_differs and status is Status.DIFFERS


def merged_status(statuses: list[Status]) -> tuple[Status, str]:
    """The status of several attempts at one cell: the common one, or `flaky` with the sequence when they disagree."""
    if len(set(statuses)) <= 1:
        return statuses[-1], ""
    return Status.FLAKY, "attempts disagreed: " + ", ".join(s.value for s in statuses)
