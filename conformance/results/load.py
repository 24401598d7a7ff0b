"""Reading result files: pytest-json-report files written with the suite's plugin, checked as they are read.

Everything that reads results (report, diff, gate, bisect, the run's merge) goes through
here and gets `ResultFile` objects (`results.schema`). A file that cannot be used is a
one-line `ResultsError` naming the file and, for a bad field, the field.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from conformance.core.observation import DETAILS_CHARS, MESSAGE_CHARS, OBSERVATION_CHARS, TAIL_CHARS, TRUNCATED, bounded
from conformance.readfile import NotRegularFile, read_regular_text
from conformance.results.schema import CellResult, ResultFile, SchemaError, result_file_from_json

PathLike = Union[str, os.PathLike]

# `<jax>-<platform>.json`, or `<jax>-<platform>-shard<K>of<N>.json` for one shard of a run.
# PLATFORM_NAME with one change: its optional third part is never a shard suffix, so
# `0.8.0-linux-x86_64-shard1of4.json` is platform `linux-x86_64`, shard `1of4` (not a merged file of platform
# `linux-x86_64-shard1of4`). tests/test_results_load.py checks the two patterns agree on every other platform.
_PLATFORM_IN_NAME = r"[A-Za-z0-9_]+-[A-Za-z0-9_]+(?:-(?!shard\d+of\d+\.json$)[A-Za-z0-9_]+)?"
RESULT_NAME = re.compile(
    rf"^(?P<jax>\d[0-9A-Za-z.+]*)-(?P<platform>{_PLATFORM_IN_NAME})"
    r"(?:-shard(?P<shard>\d+of\d+))?\.json$"
)
# `tox-<env>.json`, written by tox's per-version environments (tox.ini), which know neither version nor platform.
TOX_RESULT_NAME = re.compile(r"^tox-[A-Za-z0-9_.-]+\.json$")


class ResultsError(ValueError):
    """A result file that cannot be read or is not a jax-conformance result file; the message is one line."""


def _error(path: Path, what: str) -> ResultsError:
    return ResultsError(" ".join(f"{path}: {what}".split()))


def is_result_name(name: str) -> bool:
    """Whether a file name follows the result pattern `<jax>-<platform>[-shard<K>of<N>].json` (or `tox-<env>.json`)."""
    return bool(RESULT_NAME.match(name) or TOX_RESULT_NAME.match(name))


def result_files(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """The result files named by `paths`; a folder stands for every file in it named like a result file, and those of
    its `builds/*/` folders (builds stored apart from a release of their version)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            # A build stored apart from the release of its version (`builds/<kind>-<hash>/`) is part of the folder.
            found = sorted(
                p for p in [*path.iterdir(), *path.glob("builds/*/*")] if p.is_file() and is_result_name(p.name)
            )
            if not found:
                raise _error(path, "folder holds no result files (named <jax>-<platform>.json)")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise ResultsError("no result files given")
    unique: dict[Path, Path] = {}
    for path in files:  # a file named twice (`report DIR DIR`, a folder and a file in it) is read once
        unique.setdefault(Path(os.path.realpath(path)), path)  # (realpath: a link loop is no exception)
    return list(unique.values())


# Far above what the suite writes (about 0.3 MB for 175 cells; every field of a cell is bounded when written):
# a larger file was not written by it, and reading one would cost gigabytes.
MAX_RESULT_BYTES = 64 * 1024 * 1024
MAX_ATTEMPTS = 20


def bounded_cell(cell: CellResult) -> CellResult:
    """`cell` with its observation, details, tails, reason and attempts bounded as when they are written, so a
    hand-edited or foreign file cannot make a report or a gate hold megabytes per cell."""
    cell.observation = bounded(cell.observation, OBSERVATION_CHARS)
    cell.expected = bounded(cell.expected, OBSERVATION_CHARS)
    cell.printed_expected = bounded(cell.printed_expected, OBSERVATION_CHARS)
    cell.details = bounded(cell.details, DETAILS_CHARS)
    cell.diff = (
        cell.diff
        if len(json.dumps(cell.diff, default=repr)) <= OBSERVATION_CHARS
        else [{"path": "<diff>", "expected": None, "observed": TRUNCATED, "kind": "changed"}]
    )
    cell.printed_diff = (
        cell.printed_diff
        if len(json.dumps(cell.printed_diff, default=repr)) <= OBSERVATION_CHARS
        else [{"path": "<printed diff>", "expected": None, "observed": TRUNCATED, "kind": "changed"}]
    )
    cell.stdout_tail, cell.stderr_tail = cell.stdout_tail[-TAIL_CHARS:], cell.stderr_tail[-TAIL_CHARS:]
    cell.reason = cell.reason[:MESSAGE_CHARS]
    cell.claim, cell.discrepancy = cell.claim[:MESSAGE_CHARS], cell.discrepancy[:MESSAGE_CHARS]
    cell.attempts = [bounded(a, DETAILS_CHARS) for a in cell.attempts[:MAX_ATTEMPTS]]
    return cell


def load_result_file(path: PathLike) -> ResultFile:
    """One parsed, checked result file, every cell's fields bounded."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if size > MAX_RESULT_BYTES:
        raise _error(
            path,
            f"is {size / 2**20:.0f} MB, larger than any result file the suite writes "
            f"({MAX_RESULT_BYTES // 2**20} MB at most)",
        )
    try:
        text = read_regular_text(path, MAX_RESULT_BYTES)
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except NotRegularFile as exc:
        raise _error(path, f"is {exc.kind}, not a result file") from None
    except UnicodeDecodeError:
        raise _error(path, "is not UTF-8 text, so not a result file") from None
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _error(path, f"is not JSON ({exc})") from None
    try:
        loaded = result_file_from_json(data, str(path))
        loaded.cells = [bounded_cell(cell) for cell in loaded.cells]
        return loaded
    except SchemaError as exc:
        raise _error(path, str(exc)) from None
    except RecursionError:
        raise _error(path, "is nested too deeply to be a result file") from None


def load_results(paths: PathLike | Iterable[PathLike]) -> list[ResultFile]:
    """Read result files (a folder means every result file in it); raise `ResultsError` for a bad one."""
    return [load_result_file(path) for path in result_files(paths)]


@dataclass
class LoadedResults:
    """The readable result files among those given, and a one-line problem for each unreadable one."""

    files: list[ResultFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_results_tolerantly(paths: PathLike | Iterable[PathLike]) -> LoadedResults:
    """Read every readable result file; name each unreadable one instead of giving up on all."""
    loaded = LoadedResults()
    for path in result_files(paths):
        try:
            loaded.files.append(load_result_file(path))
        except ResultsError as exc:
            loaded.problems.append(str(exc))
    return loaded
