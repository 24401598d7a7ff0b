"""The `matrix` command's work: the JAX versions of matrices and versions (oldest first, each once), as lines, as
JSON (`--json PATH|-`, `report.commandjson.matrix_json`), or as a CI job plan (`--ci-jobs`, `--ci-runners`: printed
as JSON for GitHub's `fromJSON`, their consumer). Returns what to print; the CLI prints it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance.ciplan import plan_json
from conformance.engine.ciwork import WorkRequest, plan_work
from conformance.engine.matrix import take_notices
from conformance.envs.index import sort_versions
from conformance.envs.matrix import DEFAULT_MATRIX, available_matrices, expand_words, matrix_versions
from conformance.errors import ConformanceError
from conformance.jsonout import BARE_JSON, BARE_NOTE, is_stdout
from conformance.report.commandjson import dumps, matrix_json


@dataclass(frozen=True)
class MatrixRequest:
    """`matrix NAMES`: the words (matrix names, `.toml` paths, versions), the CI plan asked for (runner kinds, or a
    number of runners; shards per version; `-k`; the stored results), and `--json` (a PATH, `-`, `BARE_JSON`)."""

    names: str = DEFAULT_MATRIX
    ci_runners: str | None = None
    ci_jobs: int | None = None
    shards: int = 2
    expression: str | None = None
    stored: Path | None = None
    json: Any = None


@dataclass(frozen=True)
class MatrixOutcome:
    """The notes and summary for standard error, the text for standard output, and the JSON document for `--json`
    (None when it was not asked for)."""

    notes: tuple[str, ...]
    text: str
    document: str | None = None


def old_spelling(request: MatrixRequest) -> MatrixRequest:
    """`matrix --json NAMES` meant the bare flag and then the names before `--json` took a PATH; for one release a
    value made only of matrix names, `.toml` files and versions (no JSON file's name is one) is still read so."""
    if request.json is None or request.json is BARE_JSON or is_stdout(request.json) or request.names != DEFAULT_MATRIX:
        return request
    words = os.fspath(request.json).replace(",", " ").split()
    if words and all(_matrix_word(word) for word in words):
        return replace(request, names=os.fspath(request.json), json=BARE_JSON)
    return request


def _matrix_word(word: str) -> bool:
    if word in available_matrices() or word.endswith(".toml"):
        return True
    try:
        Version(word)
    except InvalidVersion:
        return False
    return True


def matrix_listing(request: MatrixRequest, builder: Any) -> MatrixOutcome:
    """The versions the words name, in PEP 440 order, and what to print of them."""
    request = old_spelling(request)
    planning = request.ci_runners or request.ci_jobs is not None
    if planning and request.json is not None and request.json is not BARE_JSON:  # the bare flag was ignored there
        raise ConformanceError(
            "--json writes the versions; --ci-jobs and --ci-runners print their plan as JSON to "
            "standard output: give one of them"
        )
    words = request.names.replace(",", " ").split() or [DEFAULT_MATRIX]
    versions = sort_versions(expand_words(words, builder.index, matrix_versions))
    notes = tuple(f"note: {notice}" for notice in take_notices(builder))  # e.g. --find-links files left out
    if request.ci_runners:  # the jobs with work only, each on its runner kind
        work = plan_work(
            WorkRequest(
                tuple(versions),
                tuple(request.ci_runners.replace(",", " ").split()),
                request.shards,
                request.expression,
                request.stored,
            ),
            builder,
        )
        return MatrixOutcome(notes + (work.summary(),), json.dumps(work.to_json()))
    if request.ci_jobs is not None:
        return MatrixOutcome(notes, json.dumps(plan_json(versions, request.ci_jobs, request.shards)))
    if request.json is BARE_JSON:  # the deprecated spelling keeps its old output for one release
        return MatrixOutcome(notes + (f"note: {BARE_NOTE}",), json.dumps(versions))
    document = dumps(matrix_json(versions)) if request.json is not None else None
    return MatrixOutcome(notes, "" if document else "\n".join(versions), document)
