"""The report as web-platform-tests' `wptreport` JSON: one report per run (a JAX version on a platform), as
wptrunner's `--log-wptreport` writes one per product run and wpt.fyi's results processor ingests one. Pure logic on
the report model.

Each cell of the run is a result: `test` is `/<cell id>`, `status` is ours mapped onto wptrunner's test statuses
(the probe ran: OK; the API is not there: PRECONDITION_FAILED; skipped: SKIP; error, crash, timeout as they are;
flaky: ERROR), and `subtests` are the cell's asserted facts: PASS when the fact is as the chapter documents, FAIL
when the diff names it. On a known-issue row the chapter documents a bug, so PASS there means the bug reproduces;
every message of such a cell starts with the report's word for the bug (`bug still present`, `bug absent`,
`changed: maybe fixed`). `run_info` carries what wpt.fyi reads (`product`, `browser_version`, `browser_channel`,
`os`, `revision`: the jax commit) and the environment. The schema is `schemas/wptreport.schema.json`; docs:
result-format.md, "The wptreport JSON".
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance.core.status import Status
from conformance.decide.commits import BuildCommits
from conformance.report.common import visible
from conformance.report.model import Column, ReportModel
from conformance.results.schema import CellResult

TEST_STATUS = {
    Status.CONFORMS: "OK",
    Status.DIFFERS: "OK",
    Status.UNSUPPORTED: "PRECONDITION_FAILED",
    Status.ERROR: "ERROR",
    Status.CRASH: "CRASH",
    Status.TIMEOUT: "TIMEOUT",
    Status.SKIPPED: "SKIP",
    Status.FLAKY: "ERROR",
}
OBSERVED = (Status.CONFORMS, Status.DIFFERS)  # statuses whose asserted facts were observed and compared
WHOLE = "observation"  # the subtest of a cell whose expectation is not a set of named facts
MAX_MESSAGE = 500
PRODUCT = "jax"
# git's null object name: wpt.fyi takes only a full 40-character revision, and a run whose jax records no commit
# (wheels before 0.8.1) has none to give; the uploader can resolve `jax_ref` and pass it as the upload's `revision`.
NULL_COMMIT = "0" * 40
_COMMIT = re.compile(r"[0-9a-f]{40}")
# wptrunner's `os` is mozinfo's name for the system.
_WPT_OS = {"darwin": "mac", "macos": "mac", "windows": "win", "win32": "win"}


def fact_of(path: str, facts: Sequence[str] = ()) -> str:
    """The asserted fact a diff path belongs to: `callback_argument_types[0]` → `callback_argument_types`. A fact
    whose own name holds `.` or `[` (`mentions_got_-1.0`) is matched by its name among `facts`, the longest first."""
    for fact in sorted(facts, key=len, reverse=True):
        if path == fact or path.startswith((f"{fact}.", f"{fact}[")):
            return fact
    for i, char in enumerate(path):
        if char in ".[" and i:
            return path[:i]
    return path


def _diff_text(entries: list[dict[str, Any]]) -> str:
    return "; ".join(
        f"{e.get('path')}: expected {json.dumps(e.get('expected'), default=repr, ensure_ascii=False)}, "
        f"observed {json.dumps(e.get('observed'), default=repr, ensure_ascii=False)}"
        for e in entries
    )


def _message(text: str) -> str:
    return visible(text)[:MAX_MESSAGE]


def subtests(result: CellResult, bug_word: str = "") -> list[dict[str, Any]]:
    """The cell's asserted facts, each PASS (as the chapter documents) or FAIL (with what was expected and observed);
    none when the probe did not observe anything (unsupported, skipped, error, crash, timeout, flaky). `bug_word`,
    on a known-issue row, is the cell's bug state; every message then starts with it."""
    if result.status not in OBSERVED:
        return []
    facts = [str(k) for k in result.expected] if isinstance(result.expected, dict) and result.expected else [WHOLE]
    failed: dict[str, list[dict[str, Any]]] = {}
    for entry in result.diff:
        failed.setdefault(fact_of(str(entry.get("path", "")), facts), []).append(entry)
    if result.status is Status.DIFFERS and not failed:  # differs without a diff (an API removed): the whole fails
        failed[WHOLE] = [{"path": WHOLE, "expected": result.expected, "observed": result.observation}]
    facts += [f for f in failed if f not in facts]  # a diff outside the named facts (`<api>`) is a subtest too
    out = []
    for fact in dict.fromkeys(facts):  # once each: wpt.fyi keeps one result per subtest name
        entries = failed.get(fact)
        said = [part for part in (bug_word, _diff_text(entries) if entries else "") if part]
        out.append(
            {
                "name": visible(fact),
                "status": "FAIL" if entries else "PASS",
                "message": _message("; ".join(said)) if said else None,
            }
        )
    return out


def test_entry(cell_id: str, result: CellResult, bug_word: str = "") -> dict[str, Any]:
    """One result of a run's report: the cell, its mapped status, its asserted facts and what it means; `bug_word`
    (on a known-issue row, the bug's state as the report words it) leads its messages: `bug absent (differs)`."""
    reason = result.reason or ("flaky: retries disagreed" if result.status is Status.FLAKY else "")
    said = f"{bug_word} ({result.status.value})" if bug_word else result.status.value
    return {
        "test": "/" + visible(cell_id),
        "subsuite": "",
        "status": TEST_STATUS[result.status],
        "message": _message(f"{said}: {reason}" if reason else said),
        "duration": max(0, int(round(result.duration_s * 1000))),
        "subtests": subtests(result, bug_word),
    }


def revision(column: Column) -> str:
    """The run's `revision`: the full commit its jax records, else `NULL_COMMIT` (no commit recorded, or only an
    abbreviated one, which wpt.fyi refuses)."""
    return column.jax_git_hash if _COMMIT.fullmatch(column.jax_git_hash or "") else NULL_COMMIT


def browser_channel(column: Column) -> str:
    """wpt.fyi's release channel of the run: `stable` for a final release, `beta` for a pre-release, `nightly` for a
    dev build, `experimental` for a build of its own or a version that does not parse."""
    if column.build:
        return "experimental"
    try:
        version = Version(column.jax)
    except InvalidVersion:
        return "experimental"
    return "nightly" if version.is_devrelease else "beta" if version.is_prerelease else "stable"


def run_info(column: Column) -> dict[str, Any]:
    """wptrunner's `run_info` for a run: what wpt.fyi reads (product, browser_version, browser_channel, os,
    revision) and the environment (`jax_ref`: the commit, else the tag or label that names the jax source)."""
    system, processor, backend = (column.platform.split("-") + ["", ""])[:3]
    commits = BuildCommits(column.jax, column.jaxlib, column.jax_git_hash, column.jaxlib_git_hash)
    return {
        "product": PRODUCT,
        "browser_version": column.jax,
        "browser_channel": browser_channel(column),
        "os": _WPT_OS.get(system.lower(), system.lower() or "unknown"),
        "processor": processor or "unknown",
        "backend": backend or "cpu",
        "revision": revision(column),
        "jax_git_hash": column.jax_git_hash,
        "jaxlib_git_hash": column.jaxlib_git_hash,
        "jax_ref": commits.jax_ref,
        "jax": column.jax,
        "jaxlib": column.jaxlib,
        "numpy": column.numpy,
        "python": column.python,
        "platform": column.platform,
        "build": column.build,
        "suite_version": column.suite_version,
    }


def _millis(moment: str) -> int | None:
    try:
        parsed = dt.datetime.fromisoformat(moment)
    except (TypeError, ValueError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    millis = int(parsed.timestamp() * 1000)
    return millis if millis > 0 else None  # wpt.fyi reads 0 as no time


def wptreport(model: ReportModel, index: int) -> dict[str, Any]:
    """The wptreport of the model's column `index`: `run_info`, `time_start`/`time_end` (ms since the epoch, where
    the run recorded both), `results` (one per cell with a result) and `subsuites` (none, as wptrunner writes it)."""
    column = model.columns[index]
    report: dict[str, Any] = {"run_info": run_info(column)}
    start, end = _millis(column.started_at), _millis(column.finished_at)
    if start is not None and end is not None:
        report["time_start"], report["time_end"] = start, max(start, end)
    report["results"] = [
        test_entry(row.cell_id, cell.result, cell.word if cell.bug_state else "")
        for row in model.param_rows
        if (cell := row.cells[index]).result is not None
    ]
    report["subsuites"] = {}
    return report


def report_name(column: Column) -> str:
    """The file of a run's report: `wptreport-0.4.38-linux-x86_64.json`; a build of its own adds its kind
    (`-python`, `-wheels`). Characters other than letters, digits and `.+_-` become `_`."""
    kind = [column.build_kind or "build"] if column.build else []
    stem = "-".join(["wptreport", column.jax, column.platform, *kind])
    return re.sub(r"[^A-Za-z0-9.+_-]", "_", stem) + ".json"


def wptreports(model: ReportModel) -> list[tuple[str, dict[str, Any]]]:
    """Every run's report with its file name, in the model's column order; two builds of one kind on one version
    and platform get `-2`, `-3` ... in that order."""
    named: list[tuple[str, dict[str, Any]]] = []
    taken: set[str] = set()
    for index, column in enumerate(model.columns):
        name, number = report_name(column), 1
        while name.lower() in taken:  # case-insensitive file systems (macOS, Windows) too
            number += 1
            name = f"{report_name(column)[: -len('.json')]}-{number}.json"
        taken.add(name.lower())
        named.append((name, wptreport(model, index)))
    return named
