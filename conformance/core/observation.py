"""The observation protocol between a child and its parent: the record the child writes, and how a process ended.

A child writes one JSON record to a file its parent names: `{"schema", "case", "param",
"outcome", ...}` where outcome is `observed` (with `facts` and `details`), `unsupported`
(with `reason`, naming the missing API) or `error` (with `error.type/message/traceback`).
The parent reads it back with `parse_record`. Pure, standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

OBSERVATION_SCHEMA = 2
OUTCOMES = ("observed", "unsupported", "error")
MESSAGE_CHARS = 2000
TRACEBACK_CHARS = 6000


def observed_record(case_id: str, param: str, facts: Any, details: Any) -> dict[str, Any]:
    """The record of a probe that returned an observation."""
    return {"schema": OBSERVATION_SCHEMA, "case": case_id, "param": param, "outcome": "observed",
            "facts": facts, "details": details}


def unsupported_record(case_id: str, param: str, missing_api: str) -> dict[str, Any]:
    """The record of a probe whose API does not exist in this JAX version."""
    return {"schema": OBSERVATION_SCHEMA, "case": case_id, "param": param, "outcome": "unsupported",
            "reason": missing_api}


def error_record(case_id: str, param: str, kind: str, message: str, traceback_text: str = "") -> dict[str, Any]:
    """The record of a probe that raised something it did not expect (or returned something unusable)."""
    return {"schema": OBSERVATION_SCHEMA, "case": case_id, "param": param, "outcome": "error",
            "error": {"type": kind, "message": message[:MESSAGE_CHARS], "traceback": traceback_text[-TRACEBACK_CHARS:]}}


def parse_record(text: str | None) -> tuple[dict[str, Any] | None, str]:
    """Read an observation file's text; return the record, or None and why it is unusable."""
    if text is None:
        return None, "the child wrote no observation"
    try:
        record = json.loads(text)
    except ValueError as exc:
        return None, f"the observation file is not JSON: {exc}"
    if not isinstance(record, dict) or record.get("outcome") not in OUTCOMES:
        return None, "the observation file has no known outcome"
    if record.get("schema") != OBSERVATION_SCHEMA:
        return None, f"the observation file has schema {record.get('schema')!r}, not {OBSERVATION_SCHEMA}"
    return record, ""


@dataclass(frozen=True)
class ProcessOutcome:
    """How a child process ended, with the tails of its output."""

    returncode: int | None
    timed_out: bool
    stdout: str
    stderr: str
    duration_s: float
    signal: int | None = field(default=None)
    launcher: str = ""  # how the child was started: fork or spawn


DETAILS_CHARS = 20_000
TAIL_CHARS = 4000  # of a child's stdout and stderr
OBSERVATION_CHARS = 50_000
TRUNCATED = "[… truncated]"


def bounded(value: Any, limit: int) -> Any:
    """`value` itself when its JSON text fits in `limit` characters, else a visibly truncated stand-in."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):
        text = repr(value)
    if len(text) <= limit:
        return value
    return {TRUNCATED: f"{len(text)} characters of JSON, the first {limit} kept", "head": text[:limit]}
