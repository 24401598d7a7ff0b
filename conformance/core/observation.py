"""The observation protocol between a child and its parent: the record the child writes, and how a process ended.

A child writes one JSON record to a file its parent names: `{"schema", "case", "param",
"outcome", ...}` where outcome is `observed` (with `facts` and `details`), `unsupported`
(with `reason`, naming the missing API) or `error` (with `error.type/message/traceback`).
Any record may carry `warnings`: the DeprecationWarnings and FutureWarnings the probe triggered, each
`{"category", "message", "module", "deprecation"}` (`child.warned`); `warnings_of` reads them back.
The parent reads it back with `parse_record`. Pure, standard library only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

OBSERVATION_SCHEMA = 2
OUTCOMES = ("observed", "unsupported", "error")
MESSAGE_CHARS = 2000
TRACEBACK_CHARS = 6000
# How deep a probe's facts and details may nest. Far more than any observation needs, and far less
# than the interpreter's recursion limit, so comparing, storing and rendering a value never overflows.
MAX_DEPTH = 48
MAX_VALUES = 2_000_000  # a value that refers to itself is caught by the depth limit; a huge one by this


# A non-finite float (NaN, inf, -inf) is no JSON number. A probe may still observe one (a miscompile's NaN is
# exactly what some cases exist to record), so it is stored as a one-key object: {"$float": "nan"},
# {"$float": "inf"} or {"$float": "-inf"}. The encoding is applied once, where a value enters the suite (the
# child's record, a declared expectation); from there on every value is plain JSON, compared with `==`
# (NaN equals NaN once encoded), stored in result files and shown in reports as that object.
NONFINITE_KEY = "$float"
_NONFINITE_WORDS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def _nonfinite_word(value: float) -> str:
    return "nan" if value != value else ("inf" if value > 0 else "-inf")


def is_encoded_nonfinite(value: Any) -> bool:
    """Whether `value` is the stored form of a non-finite float (`{"$float": "nan"}` and the like)."""
    return (
        isinstance(value, dict)
        and len(value) == 1
        and NONFINITE_KEY in value
        and value[NONFINITE_KEY] in _NONFINITE_WORDS
    )


def encode_nonfinite(value: Any) -> Any:
    """`value` with every non-finite float replaced by its stored form; tuples become lists.

    Call it only on a value `json_problem(value, nonfinite=True)` accepts (so its depth is bounded).
    """
    if isinstance(value, float) and not math.isfinite(value):
        return {NONFINITE_KEY: _nonfinite_word(value)}
    if isinstance(value, dict):
        return {key: encode_nonfinite(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_nonfinite(inner) for inner in value]
    return value


def decode_nonfinite(value: Any) -> Any:
    """The inverse of `encode_nonfinite`: stored forms back to Python floats (for a reader's own arithmetic)."""
    if is_encoded_nonfinite(value):
        return _NONFINITE_WORDS[value[NONFINITE_KEY]]
    if isinstance(value, dict):
        return {key: decode_nonfinite(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [decode_nonfinite(inner) for inner in value]
    return value


def json_problem(value: Any, max_depth: int = MAX_DEPTH, string_keys: bool = False, nonfinite: bool = False) -> str:
    """What keeps `value` from being plain, finite JSON nested at most `max_depth` deep ('' when nothing).

    Walks the value without recursion, so a value nested thousands deep is described, not a crash.
    Lists and tuples, dicts, strings, booleans, None, ints and finite floats are plain JSON. Dict keys
    may be what `json.dumps` turns into strings (numbers, booleans, None), or, with `string_keys`
    (an expectation, compared with JSON read back), only strings. With `nonfinite` (a value about to be
    encoded by `encode_nonfinite`), NaN and ±inf are accepted and a dict that looks like their stored form
    is refused, so the stored form stays unambiguous.
    """
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    visited = 0
    while stack:
        item, depth, where = stack.pop()
        visited += 1
        if visited > MAX_VALUES:
            return f"it holds more than {MAX_VALUES} values"
        at = f" at {where}" if where else ""
        if depth > max_depth:
            return f"it nests deeper than {max_depth} levels{at}"
        if item is None or isinstance(item, (bool, int, str)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item) and not nonfinite:
                return f"it holds {item!r}{at}, which is not JSON"
            continue
        if isinstance(item, (list, tuple, dict)):
            if isinstance(item, dict):
                if nonfinite and NONFINITE_KEY in item and len(item) == 1:
                    return (
                        f"it holds a dict whose only key is {NONFINITE_KEY!r}{at}, the reserved stored form "
                        f"of a non-finite float; return the float itself or another key"
                    )
                for key, inner in item.items():
                    if not isinstance(key, str) and (
                        string_keys
                        or not (
                            key is None
                            or isinstance(key, (bool, int))
                            or (isinstance(key, float) and math.isfinite(key))
                        )
                    ):
                        return f"it has the key {key!r}{at}; JSON keys are strings"
                    stack.append((inner, depth + 1, f"{where}.{key}" if where else str(key)))
            else:
                stack.extend((inner, depth + 1, f"{where}[{i}]") for i, inner in enumerate(item))
            continue
        return f"it holds a {type(item).__name__}{at}, which is not JSON"
    return ""


def observed_record(case_id: str, param: str, facts: Any, details: Any) -> dict[str, Any]:
    """The record of a probe that returned an observation."""
    return {
        "schema": OBSERVATION_SCHEMA,
        "case": case_id,
        "param": param,
        "outcome": "observed",
        "facts": facts,
        "details": details,
    }


def unsupported_record(case_id: str, param: str, missing_api: str) -> dict[str, Any]:
    """The record of a probe whose API does not exist in this JAX version."""
    return {
        "schema": OBSERVATION_SCHEMA,
        "case": case_id,
        "param": param,
        "outcome": "unsupported",
        "reason": missing_api,
    }


def error_record(case_id: str, param: str, kind: str, message: str, traceback_text: str = "") -> dict[str, Any]:
    """The record of a probe that raised something it did not expect (or returned something unusable)."""
    return {
        "schema": OBSERVATION_SCHEMA,
        "case": case_id,
        "param": param,
        "outcome": "error",
        "error": {"type": kind, "message": message[:MESSAGE_CHARS], "traceback": traceback_text[-TRACEBACK_CHARS:]},
    }


def parse_record(text: str | None) -> tuple[dict[str, Any] | None, str]:
    """Read an observation file's text; return the record, or None and why it is unusable."""
    if text is None:
        return None, "the child wrote no observation"
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, f"the observation file is not JSON: {exc}"
    if not isinstance(record, dict) or record.get("outcome") not in OUTCOMES:
        return None, "the observation file has no known outcome"
    if record.get("schema") != OBSERVATION_SCHEMA:
        return None, f"the observation file has schema {record.get('schema')!r}, not {OBSERVATION_SCHEMA}"
    for part in ("facts", "details"):
        problem = json_problem(record.get(part))
        if problem:
            return None, f"the observation's {part} cannot be used: {problem}"
    return record, ""


WARNING_KEYS = ("category", "message", "module", "deprecation")


def warnings_of(record: dict[str, Any] | None) -> list[dict[str, str]]:
    """The warnings a record carries, each with exactly `WARNING_KEYS` as strings; malformed entries are left out."""
    found = (record or {}).get("warnings")
    if not isinstance(found, list):
        return []
    return [
        {key: entry.get(key, "") for key in WARNING_KEYS}
        for entry in found[:200]
        if isinstance(entry, dict) and all(isinstance(entry.get(key, ""), str) for key in WARNING_KEYS)
    ]


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
