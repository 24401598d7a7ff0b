"""Reading, checking and writing `history.json`, and appending one run's entry to it. The only I/O of the history.

`record_run` reads the previous and the new result files, computes the entry (`results.history.history_entry`),
appends it and writes the file atomically, keeping the newest `MAX_ENTRIES`. A history file that is missing starts
a new history; one that cannot be read or is not a history is set aside beside it (`history.json.unreadable-<time>`),
never overwritten, and a new history starts; each is a one-line notice in the outcome. The format is documented in
docs/result-format.md and described by `report/schemas/history.schema.json`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.atomic import write_text_atomically
from conformance.errors import ConformanceError
from conformance.readfile import NotRegularFile, TooLarge, read_regular_text, special_kind
from conformance.results.history import REASONS, HistoryEntry, check_commit, entry_from_json, history_entry
from conformance.results.load import ResultsError, is_result_name, read_results_tolerantly, result_files
from conformance.core.status import Status

FORMAT = "jax-conformance-history"
FORMAT_VERSION = 1
MAX_ENTRIES = 365  # one entry per published run: a year of daily runs
MAX_HISTORY_BYTES = 64 * 1024 * 1024  # far above what MAX_ENTRIES entries of MAX_LISTED cells take (about 20 MB)
_ENTRY_FIELDS = {
    "date": str,
    "commit": str,
    "suite_version": str,
    "first_run": bool,
    "releases": list,
    "platforms": list,
    "cells": int,
    "counts": dict,
    "printed_differs": int,
    "changes": dict,
    "keys_changed": int,
    "new_columns": list,
    "removed_columns": list,
    "changed": list,
    "changed_left_out": int,
}
_CHANGED_FIELDS = {
    "cell": str,
    "jax": str,
    "platform": str,
    "build": str,
    "reason": str,
    "printed_before": bool,
    "printed_after": bool,
}


class HistoryFormatError(ValueError):
    """history.json is not a history this version can read; the message is one line naming what is wrong."""


def _kind(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _check_changed(change: Any, where: str) -> None:
    if not isinstance(change, dict):
        raise HistoryFormatError(f"{where} is not an object")
    for name, kind in _CHANGED_FIELDS.items():
        if not _kind(change.get(name), kind):
            raise HistoryFormatError(f"{where}.{name} is missing or not a {kind.__name__}")
    if change["reason"] not in REASONS:
        raise HistoryFormatError(f"{where}.reason is {change['reason'][:40]!r}, not one of {', '.join(REASONS)}")
    for side in ("before", "after"):
        if change.get(side) is not None and change[side] not in {s.value for s in Status}:
            raise HistoryFormatError(f"{where}.{side} is not a status")
    if set(change) - set(_CHANGED_FIELDS) - {"before", "after"}:
        raise HistoryFormatError(f"{where} has unknown fields")


def check_entry(entry: Any, where: str) -> None:
    """Raise `HistoryFormatError` naming the first field of a stored entry with the wrong shape."""
    if not isinstance(entry, dict):
        raise HistoryFormatError(f"{where} is not an object")
    for name, kind in _ENTRY_FIELDS.items():
        if not _kind(entry.get(name), kind):
            raise HistoryFormatError(f"{where}.{name} is missing or not a {kind.__name__}")
    for name in ("counts", "changes"):
        if not all(_kind(n, int) for n in entry[name].values()):
            raise HistoryFormatError(f"{where}.{name} holds a value that is not a count")
    for name in ("new_columns", "removed_columns"):
        for i, column in enumerate(entry[name]):
            if (
                not isinstance(column, dict)
                or not all(_kind(column.get(k), str) for k in ("jax", "platform"))
                or not _kind(column.get("build", ""), str)
                or not _kind(column.get("cells", 0), int)
            ):
                raise HistoryFormatError(f"{where}.{name}[{i}] is not a column (jax, platform, build, cells)")
    for i, change in enumerate(entry["changed"]):
        _check_changed(change, f"{where}.changed[{i}]")


def parse_history(text: str) -> list[HistoryEntry]:
    """The entries of a history file's text, oldest first; `HistoryFormatError` when it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HistoryFormatError(f"is not JSON ({' '.join(str(exc).split())[:120]})") from None
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise HistoryFormatError(f'is not a jax-conformance history (no "format": "{FORMAT}")')
    version = data.get("version")
    if not _kind(version, int):
        raise HistoryFormatError("has no integer `version`")
    if version > FORMAT_VERSION:
        raise ConformanceError(
            f"history format {version} is newer than the {FORMAT_VERSION} this jax-conformance "
            f"reads; upgrade jax-conformance"
        )
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise HistoryFormatError("has no `entries` list")
    for i, entry in enumerate(entries):
        check_entry(entry, f"entries[{i}]")
    return [entry_from_json(entry) for entry in entries]


def history_text(entries: list[HistoryEntry]) -> str:
    """The file's text: one JSON object with the format, its version and the entries, oldest first, each entry on a
    line of its own (compact, and a new run is a one-line diff)."""
    lines = [json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":"), allow_nan=False) for e in entries]
    head = f'{{"format": "{FORMAT}", "version": {FORMAT_VERSION}, "entries": ['
    return head + ("\n" + ",\n".join(lines) + "\n" if lines else "") + "]}\n"


def _read_text(path: Path) -> str:
    try:
        return read_regular_text(path, MAX_HISTORY_BYTES)
    except TooLarge:
        raise HistoryFormatError(f"is larger than {MAX_HISTORY_BYTES // 2**20} MB") from None
    except NotRegularFile as exc:
        raise HistoryFormatError(f"is {exc.kind}, not a history file") from None
    except UnicodeDecodeError:
        raise HistoryFormatError("is not UTF-8 text") from None


def read_history(path: Path) -> list[HistoryEntry]:
    """The entries of the history at `path` (for the report); one-line `ConformanceError` if missing or unreadable."""
    try:
        return parse_history(_read_text(path))
    except FileNotFoundError:
        raise ConformanceError(f"{path}: no such history file (jax-conformance history writes one)") from None
    except IsADirectoryError:
        raise ConformanceError(f"{path}: is a folder, not a history file") from None
    except HistoryFormatError as exc:
        raise ConformanceError(f"{path}: {exc}") from None


def _set_aside(path: Path) -> Path:
    if not os.path.isfile(path):  # only a regular file is ever moved aside (see existing_history)
        raise ConformanceError(f"--history {path} is not a regular file; nothing was set aside")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.unreadable-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.unreadable-{stamp}-{n}")
    os.replace(path, target)
    return target


def existing_history(path: Path) -> tuple[list[HistoryEntry], list[str]]:
    """The entries to append to, and a notice when the history starts anew: missing, or unreadable (set aside)."""
    if path.is_dir():
        raise ConformanceError(f"--history {path} is a folder; give the history file's path (history.json)")
    kind = special_kind(path)
    if kind:  # never set aside: as root that would move /dev/null or /dev/stdin away
        raise ConformanceError(
            f"--history {path} is {kind}, not a history file; give the history file's path (history.json)"
        )
    try:
        return parse_history(_read_text(path)), []
    except FileNotFoundError:
        return [], [f"no history at {path}: starting a new one"]
    except (HistoryFormatError, OSError) as exc:
        why = exc if isinstance(exc, HistoryFormatError) else (exc.strerror or exc)
        aside = _set_aside(path)
        return [], [f"history {path} {why}: set aside as {aside.name}, starting a new one"]


@dataclass
class HistoryRequest:
    """What `jax-conformance history` was asked: the two result folders, the history file, the run's commit and day."""

    previous: Path | None
    results: Path
    history: Path
    commit: str = ""
    date: dt.date | None = None


@dataclass
class Recorded:
    """The entry appended, where, how many entries the file holds now, and one-line notices."""

    entry: HistoryEntry
    path: Path
    entries: int
    notices: list[str] = field(default_factory=list)


def _previous_files(previous: Path | None, notices: list[str]) -> list:
    if previous is None or not previous.exists():
        notices.append(f"no previous results{f' in {previous}' if previous else ''}: every cell is new")
        return []
    try:
        result_files(previous)
    except ResultsError:  # a missing or empty folder: the first run
        notices.append(f"no previous results in {previous}: every cell is new")
        return []
    loaded = read_results_tolerantly(previous)
    notices += [f"skipped unreadable previous result file: {p}" for p in loaded.problems]
    return loaded.files


def record_run(request: HistoryRequest) -> Recorded:
    """Append the entry of the run whose results are `request.results` to the history file, written atomically."""
    commit = check_commit(request.commit)
    if is_result_name(request.history.name):
        raise ConformanceError(f"--history {request.history} is named like a result file; name it history.json")
    notices: list[str] = []
    previous = _previous_files(request.previous, notices)
    if not request.results.exists():
        raise ConformanceError(f"--results {request.results}: no such folder (the new results)")
    loaded = read_results_tolerantly(request.results)
    if not loaded.files:
        raise ConformanceError(loaded.problems[0] if loaded.problems else f"{request.results}: no result files")
    notices += [f"skipped unreadable result file: {p}" for p in loaded.problems]
    date = (request.date or dt.datetime.now(dt.timezone.utc).date()).isoformat()
    entry = history_entry(previous, loaded.files, date, commit)
    entries, started = existing_history(request.history)
    entries = (entries + [entry])[-MAX_ENTRIES:]
    write_text_atomically(request.history, history_text(entries))
    return Recorded(entry, request.history, len(entries), started + notices)
