"""The report as web-platform-tests' `wptreport` JSON (what wptrunner's `--log-wptreport` writes and wpt.fyi reads).
Pure logic on the report model.

Each cell of each run is a result: `test` is `/<cell id>`, `status` is ours mapped onto wptrunner's test statuses
(the probe ran: OK; the API is not there: PRECONDITION_FAILED; skipped: SKIP; error, crash, timeout as they are;
flaky: ERROR), and `subtests` are the cell's asserted facts, each PASS or FAIL (a fact the diff names fails).
`run_info` names the product (`jax`), its version, jaxlib, numpy, Python, the platform and the suite. One run
gives a plain report; several runs go in one file as wptrunner's subsuites (one per run, each with its own
`run_info`; every result names its subsuite). The schema is `schemas/wptreport.schema.json`.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from conformance.core.status import Status
from conformance.report.common import visible
from conformance.report.model import Column, ParamRow, ReportModel
from conformance.results.schema import CellResult

TEST_STATUS = {
    Status.CONFORMS: "OK", Status.DIFFERS: "OK", Status.UNSUPPORTED: "PRECONDITION_FAILED", Status.ERROR: "ERROR",
    Status.CRASH: "CRASH", Status.TIMEOUT: "TIMEOUT", Status.SKIPPED: "SKIP", Status.FLAKY: "ERROR",
}
OBSERVED = (Status.CONFORMS, Status.DIFFERS)  # statuses whose asserted facts were observed and compared
WHOLE = "observation"  # the subtest of a cell whose expectation is not a set of named facts
MAX_MESSAGE = 500


def fact_of(path: str) -> str:
    """The asserted fact a diff path belongs to: `callback_argument_types[0]` → `callback_argument_types`."""
    for i, char in enumerate(path):
        if char in ".[" and i:
            return path[:i]
    return path


def subtests(result: CellResult) -> list[dict[str, Any]]:
    """The cell's asserted facts, each PASS or FAIL (with what was expected and observed); none when the probe did
    not observe anything (unsupported, skipped, error, crash, timeout, flaky)."""
    if result.status not in OBSERVED:
        return []
    failed: dict[str, list[dict[str, Any]]] = {}
    for entry in result.diff:
        failed.setdefault(fact_of(str(entry.get("path", ""))), []).append(entry)
    facts = [str(k) for k in result.expected] if isinstance(result.expected, dict) and result.expected else [WHOLE]
    if result.status is Status.DIFFERS and not failed:  # differs without a diff (an API removed): the whole fails
        failed[WHOLE] = [{"path": WHOLE, "expected": result.expected, "observed": result.observation}]
    facts += [f for f in failed if f not in facts]  # a diff outside the named facts (`<api>`) is a subtest too
    out = []
    for fact in facts:
        entries = failed.get(fact)
        message = None if not entries else "; ".join(
            f"{e.get('path')}: expected {json.dumps(e.get('expected'), default=repr, ensure_ascii=False)}, "
            f"observed {json.dumps(e.get('observed'), default=repr, ensure_ascii=False)}" for e in entries)
        out.append({"name": visible(fact), "status": "FAIL" if entries else "PASS",
                    "message": None if message is None else visible(message)[:MAX_MESSAGE]})
    return out


def test_entry(row: ParamRow, result: CellResult, subsuite: str) -> dict[str, Any]:
    """One result of the report: the cell, its mapped status, its asserted facts and why it is not OK."""
    reason = result.reason or ("flaky: retries disagreed" if result.status is Status.FLAKY else "")
    return {"test": "/" + visible(row.cell_id), "subsuite": subsuite, "status": TEST_STATUS[result.status],
            "message": visible(f"{result.status.value}: {reason}" if reason else result.status.value)[:MAX_MESSAGE],
            "duration": max(0, int(round(result.duration_s * 1000))), "subtests": subtests(result)}


def run_info(column: Column) -> dict[str, Any]:
    """wptrunner's `run_info` for a run: product and version (wpt.fyi's required keys included) and the environment."""
    os_name, _, processor = column.platform.partition("-")
    return {"product": "jax", "browser_version": column.jax, "os": os_name, "processor": processor or "unknown",
            "revision": f"jax-conformance-{column.suite_version}", "jax": column.jax, "jaxlib": column.jaxlib,
            "numpy": column.numpy, "python": column.python, "platform": column.platform,
            "suite_version": column.suite_version}


def _millis(moment: str) -> int | None:
    try:
        parsed = dt.datetime.fromisoformat(moment)
    except (TypeError, ValueError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    millis = int(parsed.timestamp() * 1000)
    return millis if millis >= 0 else None


def subsuite_name(column: Column) -> str:
    """The subsuite of a run in a report of several: `jax-0.4.38-linux-x86_64`."""
    return f"jax-{column.jax}-{column.platform}"


def wptreport(model: ReportModel) -> dict[str, Any]:
    """The wptreport object: `run_info`, `time_start`/`time_end` (ms since the epoch, where the runs recorded them),
    `results` (one per cell with a result, per run) and `subsuites` (one per run when there are several)."""
    several = len(model.columns) > 1
    infos = [run_info(c) for c in model.columns]
    names = [subsuite_name(c) if several else "" for c in model.columns]
    if several:
        common = {k: v for k, v in infos[0].items() if all(info.get(k) == v for info in infos[1:])}
        top = {"product": "jax", **common}
    else:
        top = infos[0] if infos else {"product": "jax"}
    report: dict[str, Any] = {"run_info": top}
    starts = [m for c in model.columns if (m := _millis(c.started_at)) is not None]
    ends = [m for c in model.columns if (m := _millis(c.finished_at)) is not None]
    if starts and ends:
        report["time_start"], report["time_end"] = min(starts), max(ends)
    report["results"] = [test_entry(row, row.cells[i].result, names[i])
                         for i in range(len(model.columns)) for row in model.param_rows
                         if row.cells[i].result is not None]
    report["subsuites"] = {name: info for name, info in zip(names, infos)} if several else {}
    return report
