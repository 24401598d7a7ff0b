"""From a finished child process and its observation record to a cell's status. Pure logic.

Every way a cell can end (hang, signal, missing or unreadable observation, probe
error, unsupported API, observation equal to or different from the documented
expectation) becomes a status here, and only here.
"""

from __future__ import annotations

import signal as signals
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from conformance.core.case import Skip
from conformance.core.compare import diff
from conformance.core.observation import ProcessOutcome, parse_record
from conformance.core.status import Status


@dataclass
class CellResult:
    """The outcome of one cell, as stored in the result file's test metadata."""

    case: str
    param: str
    rows: list[str]
    status: Status
    known_issue: bool = False
    expected: Any = None
    observation: Any = None
    diff: list[dict[str, Any]] = field(default_factory=list)
    details: Any = None
    reason: str = ""
    duration_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    command: str = ""
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form with the status as its word."""
        data = asdict(self)
        data["status"] = self.status.value
        return data


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(
    outcome: ProcessOutcome,
    record_text: str | None,
    expected: Mapping[str, Any],
) -> tuple[Status, dict[str, Any]]:
    """The status of a finished cell, and the fields it contributes to the `CellResult`."""
    record, unreadable = parse_record(record_text)
    fields: dict[str, Any] = {"expected": expected}
    if record and record.get("outcome") == "observed":
        # Kept whatever happens next (a crash at interpreter exit, say), diff included.
        fields["observation"] = record.get("facts")
        fields["details"] = record.get("details")
        fields["diff"] = [d.to_json() for d in diff(expected, record.get("facts"))]
    if outcome.timed_out:
        fields["reason"] = "killed after its time limit"
        return Status.TIMEOUT, fields
    if outcome.signal is not None:
        fields["reason"] = f"the child died by {_signal_name(outcome.signal)}"
        return Status.CRASH, fields
    if record is None:
        if record_text is None:
            fields["reason"] = f"the child exited with code {outcome.returncode} without an observation"
            return Status.CRASH, fields
        fields["reason"] = unreadable
        return Status.ERROR, fields
    if record["outcome"] == "unsupported":
        fields["reason"] = record.get("reason", "")
        return Status.UNSUPPORTED, fields
    if record["outcome"] == "error":
        error = record.get("error") or {}
        fields["reason"] = f"{error.get('type', '?')}: {error.get('message', '')}"
        fields["details"] = {"traceback": error.get("traceback", "")}
        return Status.ERROR, fields
    return (Status.DIFFERS if fields["diff"] else Status.CONFORMS), fields


def skipped_result(case_id: str, param: str, rows: list[str], skip: Skip) -> CellResult:
    """The result of a cell whose expectation says it does not apply on this platform."""
    return CellResult(case=case_id, param=param, rows=rows, status=Status.SKIPPED, reason=skip.reason)


def build_result(
    case_id: str,
    param: str,
    rows: list[str],
    outcome: ProcessOutcome,
    record_text: str | None,
    expected: Mapping[str, Any],
    command: str,
) -> CellResult:
    """Assemble a `CellResult` from one finished child."""
    status, fields = classify(outcome, record_text, expected)
    return CellResult(
        case=case_id,
        param=param,
        rows=rows,
        status=status,
        duration_s=outcome.duration_s,
        stdout_tail=outcome.stdout,
        stderr_tail=outcome.stderr,
        command=command,
        **fields,
    )


def needs_retry(result: CellResult) -> bool:
    """Whether a retry could tell a real result from a flaky one (anything but conforms or not-applicable)."""
    return result.status not in (Status.CONFORMS, Status.SKIPPED, Status.UNSUPPORTED)


def merge_attempts(attempts: list[CellResult]) -> CellResult:
    """One result from several attempts at the same cell: the last one, or `flaky` if their statuses disagree."""
    final = attempts[-1]
    if len(attempts) == 1:
        return final
    statuses = {a.status for a in attempts}
    kept = [{k: v for k, v in a.to_json().items() if k != "attempts"} for a in attempts]
    final.attempts = kept
    if len(statuses) == 1:
        return final
    final.reason = "attempts disagreed: " + ", ".join(a.status.value for a in attempts)
    final.status = Status.FLAKY
    return final
