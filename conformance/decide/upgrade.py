"""`upgrade --from A --to B`: everything that changes from JAX release A to release B, one list per tier.

Any two releases, not only neighbours. Each tier reuses the part of the suite that decides it, answered from
stored results where they exist:

- behaviours and the team's own cases: `decide.sides.run_diff` of A's cells against B's (a cell that storage does
  not answer is run), each change with the why its case declares (`report.model.explain_change`);
- public names: `api.session.run_api_diff` between the two censuses, and with `--scan PATH` the uses in the
  team's code (`api.session.run_scan` at B, against A);
- performance: `perf.session.run_perf` with A and B as the two sides of one session, sampled interleaved, so a
  drift over many releases is judged directly (`perf.stats`' rules); stored samples whose key still holds are
  reused, and the review says so;
- downstream suites (`--downstream SUITE`, repeatable): `downstream.command.judge_pair`, the run `gate --downstream`
  makes (stored cells answer while their key holds, else the suite runs on each release), its judgements listed
  per suite (`upgrade_tiers.downstream_review_tier`); without a suite the tier says it was not asked.

A tier that cannot be judged (a release that does not install, a census that fails, a workload that errors) is
named with its one-line reason, never dropped; the other tiers still answer. The review is not a gate: it exits 0
when it could say what changes (`gate` judges), 2 on bad input. `run_upgrade` returns a typed outcome the CLI prints.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from packaging.version import Version

import conformance
from conformance.api.dating import date_change
from conformance.api.session import ApiDiffRequest, ScanRequest, run_api_diff, run_scan
from conformance.atomic import write_text_atomically
from conformance.jsonout import write_json
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.decide.sides import DiffRequest, run_diff
from conformance.decide.upgrade_render import review_json, review_markdown, summary_text
from conformance.decide.tiers import Tier
from conformance.decide.upgrade_tiers import (
    DOWNSTREAM_TITLE,
    Review,
    WorkloadJudged,
    behaviour_tiers,
    downstream_review_tier,
    names_tier,
    not_judged,
    perf_tier,
)
from conformance.downstream.command import DownstreamRequest, judge_pair
from conformance.engine import matrix
from conformance.errors import ConformanceError, one_line
from conformance.perf.session import PerfRequest, run_perf
from conformance.perf.sides import prepare_side, select_workloads
from conformance.report.model import explain_change
from conformance.results.outputs import check_outputs
from conformance.results.schema import is_version
from conformance.results.versions import version_order

Say = Callable[[str], None]


@dataclass(frozen=True)
class UpgradeRequest:
    """`upgrade`: the two releases, the run settings (results folder, `--cases`, `-k`), the team's code to scan,
    the perf rounds (0: the performance tier is not sampled), the files to write, and the downstream suites to judge
    (`--downstream`, with their `--budget` in seconds)."""

    before: str
    after: str
    settings: matrix.RunSettings
    scan: tuple[Path, ...] = ()
    perf_rounds: int = 5
    markdown: Path | None = None
    json_path: Path | None = None
    downstream: tuple[str, ...] = ()
    budget_s: float | None = None


@dataclass(frozen=True)
class UpgradeOutcome:
    """The review and the lines to print: the summary, then the files written."""

    review: Review
    written: tuple[str, ...] = field(default_factory=tuple)

    @property
    def text(self) -> str:
        """The summary and the files written."""
        return "\n".join([summary_text(self.review), *self.written])


def check_request(request: UpgradeRequest) -> None:
    """Bad input in one line, before any work: each side a release version, two different ones, each `--scan` path
    there, rounds not negative, the outputs writable where `check_outputs` allows."""
    for option, version in (("--from", request.before), ("--to", request.after)):
        if not is_version(version):
            raise ConformanceError(f"{option} takes a JAX release such as 0.8.0, not {version!r}")
    if version_order(request.before) == version_order(request.after):
        raise ConformanceError(f"--from and --to name the same release ({request.before}); name two")
    for path in request.scan:
        if not path.exists():
            raise ConformanceError(f"--scan {path}: no such file or folder; name your code's files or folders")
    if request.perf_rounds < 0:
        raise ConformanceError(f"--perf-rounds takes 0 (no performance tier) or more, not {request.perf_rounds}")
    check_outputs(
        [("--markdown", request.markdown), ("--json", request.json_path)],
        results=request.settings.results,
        reads=[*request.scan, *request.settings.cases],
    )  # never over the team's code or cases


def _behaviours(
    request: UpgradeRequest, make_builder: Callable[[], Any], on_event: Callable[[Any], None]
) -> list[Tier]:
    declared = {case.id: case for case in matrix.select_run(matrix.case_folders(request.settings.cases), None).declared}

    def why_of(case_id: str, param: str) -> str:
        case = declared.get(case_id)
        try:
            found = explain_change(case.changes_for(param), request.before, request.after) if case else None
        except (KeyError, ValueError):  # a parameter the case no longer declares
            found = None
        return found.text if found else ""

    def team_case(case_id: str) -> bool:
        case = declared.get(case_id)
        return case is not None and case.package != DEFAULT_CASE_PACKAGE

    asked = bool(request.settings.cases)
    try:
        found = run_diff(
            DiffRequest(Path(request.before), Path(request.after), request.settings), make_builder, on_event
        )
    except ConformanceError as exc:
        return behaviour_tiers(None, why_of, team_case, asked, missing=one_line(str(exc)))
    notes = [found.mismatch] if found.mismatch else []
    return behaviour_tiers(found.diff, why_of, team_case, asked, notes=notes)


def _names(request: UpgradeRequest, make_builder: Callable[[], Any], say: Say) -> Tier:
    results = request.settings.results
    try:
        found = run_api_diff(ApiDiffRequest(request.before, request.after, results), make_builder, say)
    except ConformanceError as exc:
        return names_tier(None, missing=one_line(str(exc)))
    findings: list[Any] = []
    if request.scan:
        try:
            findings = run_scan(
                ScanRequest(request.scan, request.after, request.before, results), make_builder, say
            ).findings
        except ConformanceError as exc:
            return names_tier(None, missing=f"--scan: {one_line(str(exc))}")
    compared = len(set(found.chain[0].names) | set(found.chain[-1].names))  # every name either release has
    releases = _final_releases(make_builder) if len(found.chain) > 2 else None  # dating needs a census between

    def dating(change: Any) -> Any:
        return date_change(change, found.chain, releases)

    return names_tier(found.changes, findings, scanned=bool(request.scan), names=compared, dating=dating)


def _final_releases(make_builder: Callable[[], Any]) -> list[str] | None:
    """The final JAX releases the package index's cache lists (never asking the index: None when it has none, and the
    names' dates are then ranges wherever two censuses are not the same release)."""
    try:
        known = make_builder().index.cached_releases("jax")
    except ConformanceError:
        return None
    return None if known is None else [v for v in known if is_version(v) and not Version(v).is_prerelease]


def _performance(request: UpgradeRequest, make_builder: Callable[[], Any], say: Say) -> Tier:
    if request.perf_rounds == 0:
        return not_judged("performance", "Performance", "not sampled: --perf-rounds 0")
    try:
        workloads, folders = select_workloads(request.settings.cases, None)
        builder = make_builder()
        sides = tuple(prepare_side(v, builder, request.settings.results) for v in (request.before, request.after))
        outcome = run_perf(
            PerfRequest(
                sides,
                tuple(workloads),
                DEFAULT_CASE_PACKAGE,
                tuple(folders),
                rounds=request.perf_rounds,
                max_rounds=max(9, request.perf_rounds),
            ),
            say=say,
        )
    except ConformanceError as exc:
        return perf_tier(None, request.before, request.after, missing=one_line(str(exc)))
    judged = [
        WorkloadJudged(
            w.id,
            outcome.verdicts(w.id, 0, 1),
            (outcome.errors.get((w.id, 0), ""), outcome.errors.get((w.id, 1), "")),
            (bool(outcome.reused.get((w.id, 0))), bool(outcome.reused.get((w.id, 1)))),
        )
        for w in workloads
    ]
    return perf_tier(judged, request.before, request.after)


def _downstream(request: UpgradeRequest, make_builder: Callable[[], Any], say: Say) -> Tier:
    if not request.downstream:
        return not_judged("downstream", DOWNSTREAM_TITLE, "not asked: give --downstream SUITE")
    asked = DownstreamRequest(
        request.downstream,
        (request.before, request.after),
        request.settings.results,
        budget_s=request.budget_s,
        rerun=request.settings.rerun,
    )  # no expectations: a review acknowledges nothing
    try:
        found = judge_pair(asked, make_builder, say)
    except ConformanceError as exc:
        return downstream_review_tier(None, missing=one_line(str(exc)))
    return downstream_review_tier(found.judged)


def run_upgrade(
    request: UpgradeRequest,
    make_builder: Callable[[], Any],
    on_event: Callable[[Any], None] = lambda event: None,
    say: Say = lambda line: None,
) -> UpgradeOutcome:
    """Every tier from A to B (see the module docstring), and the Markdown and JSON written where asked."""
    check_request(request)
    builder = functools.cache(make_builder)  # one builder for every tier, made only when one must build
    tiers = [
        *_behaviours(request, builder, on_event),
        _names(request, builder, say),
        _performance(request, builder, say),
        _downstream(request, builder, say),
    ]
    cases = next(t for t in tiers if t.name == "cases")
    review = Review(request.before, request.after, tuple(t for t in tiers if t is not cases) + (cases,))
    written = []
    if request.markdown is not None:
        write_text_atomically(request.markdown, review_markdown(review))
        written.append(f"markdown: {request.markdown}")
    if request.json_path is not None:
        data = review_json(review, conformance.__version__)
        written.append(write_json(request.json_path, json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)))
    return UpgradeOutcome(review, tuple(written))
