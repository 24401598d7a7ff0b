"""The one gate: `gate` judges every tier it is given in one verdict and one exit status (`decide.tiers`).

- cells: always (`decide.sides.run_gate`), unless `--perf` asks for the workloads only, or `-k` selects no cell
  and another tier is given (workloads selected, `--scan`, a further tier);
- workloads: whenever they are selected: sampled now with `--perf-rounds N` (or `--perf`), or judged from stored
  samples when the results folder holds samples of both `--from` and `--to` (`perf.command.workload_tier`);
- names: with `--scan PATH`, the `api scan` findings at the candidate (`api.session.run_scan`).

The expectations file is read once, by the one reader (`decide.expectations`): `[[expect]]` for the cells, `[[perf]]`
for the workloads, `[[name]]` for the names; an expired entry of any kind fails the gate. A downstream test-suite
tier (`downstream.command.gate_tiers`, `gate --downstream SUITE`) plugs in as one more function returning a `Tier`
(`OneGateRequest.more`). Nothing here prints: the CLI renders `OneGateReport.verdict`
(`decide.verdict_view`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.api.session import ScanRequest, run_scan
from conformance.atomic import write_text_atomically
from conformance.jsonout import write_json
from conformance.decide.expectations import ExpectationsFile, lifecycle, load_expectations_file, utc_today
from conformance.decide.render import gate_markdown, gate_text
from conformance.decide.sides import GateRequest, run_gate
from conformance.decide.tiers import Tier, Verdict, cell_tier, name_findings
from conformance.decide.verdict_view import verdict_json, verdict_markdown
from conformance.engine import matrix
from conformance.engine.targets import Release
from conformance.errors import ConformanceError
from conformance.perf.command import PerfCommand, workload_tier
from conformance.perf.decisions import check_ratio
from conformance.perf.sides import select_workloads
from conformance.perf.stats import THRESHOLD
from conformance.perf.store import stored_perf
from conformance.results.outputs import check_outputs

Say = Callable[[str], None]
# A tier of its own: given the request, the expectations file, the builder (made once) and the progress printer, its
# `Tier`, or None when it has nothing to judge. A downstream test-suite tier is one of these.
TierJudge = Callable[["OneGateRequest", ExpectationsFile, Callable[[], Any], Say], "Tier | None"]
PERF_ROUNDS = 5  # rounds per side when `--perf` samples without `--perf-rounds`


@dataclass(frozen=True, kw_only=True)
class OneGateRequest:
    """`gate`: the cell gate's request (sides, options, expectations, `--markdown`), and what selects the other
    tiers: `--perf` (workloads only), `--perf-rounds`, `--perf-threshold`, `--scan` paths, `--json`."""

    cells: GateRequest
    workloads_only: bool = False
    perf_rounds: int | None = None
    perf_threshold: float = THRESHOLD
    scan: tuple[Path, ...] = ()
    json_path: Path | None = None
    candidate_python: str | None = None  # `--to-python PATH`: the workloads' candidate side
    more: tuple[TierJudge, ...] = ()  # further tiers (a downstream test suite), each judged after the built-in ones


@dataclass
class OneGateReport:
    """The one verdict, and the files written (lines that say so)."""

    verdict: Verdict
    written: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when every tier given passes, else 1."""
        return self.verdict.exit_code


def _candidate(request: OneGateRequest) -> str | None:
    return (
        request.cells.to[0].label
        if request.cells.to and isinstance(request.cells.to[0], Release)
        else request.candidate_python
    )


def _selects_cells(request: GateRequest) -> bool:
    try:
        folders = matrix.case_folders(request.settings.cases)
        return bool(matrix.select_run(folders, request.settings.expression).selected)
    except ConformanceError:
        return False


def _stored_both(request: OneGateRequest, candidate: str) -> bool:
    """Whether the results folder holds workload samples of both sides (releases only: a build is sampled anew)."""
    if not request.cells.from_version or not isinstance(request.cells.to[0], Release):
        return False
    platform, results = matrix.host_platform(), request.cells.settings.results
    return all(
        any(
            entry.get("samples")
            for entry in stored_perf(results, version, platform).values()
            if isinstance(entry, dict)
        )
        for version in (request.cells.from_version, candidate)
    )


def _workloads_wanted(request: OneGateRequest) -> bool:
    """Whether the workloads are selected: asked for (`--perf`, `--perf-rounds`), or stored for both releases."""
    candidate = _candidate(request)
    return (
        request.workloads_only
        or request.perf_rounds is not None
        or bool(request.cells.from_version and candidate and _stored_both(request, candidate))
    )


def _workloads(
    request: OneGateRequest, entries: list, builder: Callable[[], Any], say: Say, skipped: list[str]
) -> Tier | None:
    """The workloads tier when workloads are selected; else None, and why in `skipped`."""
    asked = request.workloads_only or request.perf_rounds is not None
    candidate = _candidate(request)
    if not request.cells.from_version or not candidate:
        if asked:
            raise ConformanceError(
                "the workloads are judged with --from VERSION and --to VERSION (or --to-python PATH)"
            )
        skipped.append("workloads: judged with --from and --to (releases), not result files")
        return None
    try:
        select_workloads(request.cells.settings.cases, request.cells.settings.expression)
    except ConformanceError as exc:
        if asked:
            raise
        skipped.append(f"workloads: {exc}")
        return None
    if not asked and not _stored_both(request, candidate):
        skipped.append(
            f"workloads: no stored samples of both jax {request.cells.from_version} and {candidate} "
            f"(--perf-rounds N samples them now)"
        )
        return None
    settings = request.cells.settings
    command = PerfCommand(
        results=settings.results,
        case_folders=tuple(settings.cases),
        expression=settings.expression,
        rounds=request.perf_rounds or PERF_ROUNDS,
        threshold=request.perf_threshold,
        rerun=settings.rerun,
        threshold_option="--perf-threshold",
    )
    return workload_tier(command, request.cells.from_version, candidate, entries, builder(), say)[0]


def _names(request: OneGateRequest, entries: list, builder: Callable[[], Any], say: Say) -> Tier:
    candidate = _candidate(request)
    if not candidate:
        raise ConformanceError("--scan PATH judges the names at --to VERSION (or --to-python PATH)")
    scanned = run_scan(
        ScanRequest(request.scan, candidate, request.cells.from_version, request.cells.settings.results), builder, say
    )
    title = f"{scanned.files} file(s) scanned against jax {candidate}"
    return Tier(
        "names",
        title,
        scanned.files,
        tuple(name_findings(scanned.findings, entries, candidate)),
        tuple(f"not parsed: {line}" for line in scanned.skipped),
    )


def run_one_gate(
    request: OneGateRequest, make_builder: Callable[[], Any], on_event: Callable[[Any], None], say: Say
) -> OneGateReport:
    """Judge every tier given (module docstring); write `--markdown` and `--json` when asked."""
    cells = request.cells
    check_ratio(request.perf_threshold, "--perf-threshold")
    if request.perf_rounds is not None and request.perf_rounds < 1:
        raise ConformanceError(f"--perf-rounds must be at least 1, not {request.perf_rounds}")
    given = [p for p in (*cells.baseline, *cells.candidate) if p.exists()]
    sampling = bool(cells.from_version or cells.to)  # cells run and workloads sampled are stored in --results
    check_outputs(
        [("--markdown", cells.markdown), ("--json", request.json_path)],
        inputs=given,
        results=cells.settings.results,
        reads=[cells.expectations, *request.scan, *cells.settings.cases],
        writing=sampling,
    )  # before any environment is built or sample taken
    expectations = load_expectations_file(cells.expectations) if cells.expectations else ExpectationsFile([])
    built: list[Any] = []
    builder = lambda: built[0] if built else built.append(make_builder()) or built[0]  # noqa: E731 - one builder
    tiers, skipped, markdown = [], [], ""
    others = _workloads_wanted(request) or bool(request.scan or request.more)  # a tier besides the cells is given
    judge_cells = not request.workloads_only and (_selects_cells(cells) or not others)
    if judge_cells:
        decided = run_gate(replace(cells, markdown=None), builder, on_event, read=expectations)  # read once
        tiers.append(cell_tier(decided.outcome, decided.title, gate_text(decided.outcome, decided.title).split("\n")))
        markdown = gate_markdown(decided.outcome, decided.title)
    else:
        skipped.append(
            "cells: --perf judges the workloads only" if request.workloads_only else "cells: -k selects no cell"
        )
    workloads = _workloads(request, expectations.perf, builder, say, skipped)
    tiers += [workloads] if workloads else []
    tiers += [_names(request, expectations.names, builder, say)] if request.scan else []
    tiers += [found for judge in request.more if (found := judge(request, expectations, builder, say)) is not None]
    dates = lifecycle([*expectations.perf, *expectations.names], cells.today or utc_today())
    title = "gate " + (
        f"jax {cells.from_version} -> {_candidate(request)}"
        if cells.from_version
        else f"{', '.join(map(str, cells.baseline))} -> {', '.join(map(str, cells.candidate))}"
    )
    verdict = Verdict(
        title,
        tuple(tiers),
        tuple(skipped),
        tuple(dates.expired_line(e) for e in dates.expired),
        tuple(dates.expiring_line(e) for e in dates.expiring),
    )
    return OneGateReport(verdict, _write(request, verdict, markdown))


def _write(request: OneGateRequest, verdict: Verdict, cells_markdown: str) -> list[str]:
    written = []
    if request.cells.markdown is not None:  # a gate of cells alone: the cell gate's Markdown as it always was
        alone = [t.name for t in verdict.tiers] == ["cells"] and not (verdict.expired or verdict.expiring)
        write_text_atomically(
            request.cells.markdown, cells_markdown if alone else verdict_markdown(verdict, cells_markdown)
        )
        written.append(f"markdown: {request.cells.markdown}")
    if request.json_path is not None:
        written.append(write_json(request.json_path, json.dumps(verdict_json(verdict), indent=1) + "\n"))
    return written
