"""Reading result files: pytest-json-report files written with the suite's plugin, checked as they are read.

A result file's top-level `jax_conformance` object describes the run
(`plugin.ConformanceRun.report_header`) and each test entry's `metadata` is one
cell's result (`verdict.CellResult.to_json`). Every problem is a one-line `ResultsError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Union

import conformance
from conformance.engine.plugin import SCHEMA_VERSION
from conformance.core.status import Status

PathLike = Union[str, os.PathLike]

_STATUS_WORDS = frozenset(s.value for s in Status)


class ResultsError(ValueError):
    """A result file that cannot be read or is not a jax-conformance result file; the message is one line."""


# ---------------------------------------------------------------- reading


def _error(path: Path, what: str) -> ResultsError:
    """A `ResultsError` naming `path`, flattened onto one line."""
    return ResultsError(" ".join(f"{path}: {what}".split()))


def result_files(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """The result files named by `paths`; a directory stands for every `*.json` file directly in it
    (except hidden ones, which are a running version's temporary files)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if not p.name.startswith("."))  # not temporaries
            if not found:
                raise _error(path, "directory holds no *.json result files")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise ResultsError("no result files given")
    return files


def _read_json(path: Path) -> Any:
    """The parsed JSON of `path`, or a one-line `ResultsError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except UnicodeDecodeError:
        raise _error(path, "is not UTF-8 text, so not a result file") from None
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise _error(path, f"is not JSON ({exc})") from None


def _check_header(report: Any, path: Path) -> None:
    """Raise unless `report` carries a `jax_conformance` object of a schema this module reads."""
    if not isinstance(report, dict):
        raise _error(path, "is JSON but not an object at the top level, so not a result file")
    header = report.get("jax_conformance")
    if not isinstance(header, dict):
        raise _error(path, "has no `jax_conformance` object: not a result file of the suite's pytest plugin "
                           "(run with --json-report and the jax-conformance plugin loaded)")
    version = header.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _error(path, "`jax_conformance.schema_version` is missing or not an integer")
    if version > SCHEMA_VERSION:
        raise _error(path, f"has schema_version {version}, newer than the {SCHEMA_VERSION} that "
                           f"jax-conformance {conformance.__version__} reads; upgrade jax-conformance")


def _check_tests(report: dict[str, Any], path: Path) -> None:
    """Raise unless `report["tests"]` is a list of test entries with readable cell metadata."""
    tests = report.get("tests")
    if not isinstance(tests, list):
        raise _error(path, "has no `tests` list")
    for test in tests:
        if not isinstance(test, dict):
            raise _error(path, "has a test entry that is not an object")
        metadata = test.get("metadata")
        if metadata is None:
            continue
        nodeid = test.get("nodeid", "?")
        if not isinstance(metadata, dict):
            raise _error(path, f"test {nodeid}: `metadata` is not an object")
        status = metadata.get("status")
        if status is not None and status not in _STATUS_WORDS:
            raise _error(path, f"test {nodeid}: unknown status {status!r}")


def load_result_file(path: PathLike) -> dict[str, Any]:
    """One parsed, checked result file, with `source` (the path it was read from) added at the top level."""
    path = Path(path)
    report = _read_json(path)
    _check_header(report, path)
    _check_tests(report, path)
    return {**report, "source": str(path)}


def load_results(paths: PathLike | Iterable[PathLike]) -> list[dict[str, Any]]:
    """Read result files (a directory means every `*.json` in it); raise `ResultsError` for a bad one."""
    return [load_result_file(path) for path in result_files(paths)]
