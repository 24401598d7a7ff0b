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

from conformance.results.schema import ResultFile, SchemaError, result_file_from_json

PathLike = Union[str, os.PathLike]

# `<jax>-<platform>.json`, or `<jax>-<platform>-shard<K>of<N>.json` for one shard of a run.
RESULT_NAME = re.compile(r"^(?P<jax>\d[0-9A-Za-z.+]*)-(?P<platform>[A-Za-z0-9_]+-[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)?)"
                         r"(?:-shard(?P<shard>\d+of\d+))?\.json$")
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
    """The result files named by `paths`; a folder stands for every file in it named like a result file."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and is_result_name(p.name))
            if not found:
                raise _error(path, "folder holds no result files (named <jax>-<platform>.json)")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise ResultsError("no result files given")
    return files


def load_result_file(path: PathLike) -> ResultFile:
    """One parsed, checked result file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except IsADirectoryError:
        raise _error(path, "is a folder, not a result file") from None
    except UnicodeDecodeError:
        raise _error(path, "is not UTF-8 text, so not a result file") from None
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _error(path, f"is not JSON ({exc})") from None
    try:
        return result_file_from_json(data, str(path))
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
