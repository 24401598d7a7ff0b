"""The work of `perf`, `bisect WORKLOAD --metric M` and `gate --perf`, from typed requests to lines and an exit
status (the CLI prints them; nothing here sees parsed arguments).

- `run_perf_command`: the workloads on every side in interleaved rounds; with `aa`, each side against its twin.
  Its exit status is `perf.decisions.perf_exit` (a measurement, as `run`: a workload that timed out, crashed or
  raised is a result, named with its status, exit 0; 1 only when an A/A run flags a verdict).
- `run_perf_bisect`: the first release between good and bad whose metric crossed: both ends sampled interleaved
  (they must differ), then each midpoint sampled interleaved with both ends and placed (`perf.decisions`); writes
  `--json` and `--issue` when asked.
- `workload_tier`: the workloads tier of the one gate (`decide.onegate`): the candidate against the baseline,
  judged by `perf.decisions.workload_findings`.

The rules themselves live in `perf.decisions` (pure, tested where they live); every line returned is made safe for
a terminal (`safetext`): a workload's claim and error text are not the suite's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.atomic import write_text_atomically
from conformance.jsonout import write_json
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.envs.matrix import chosen_versions, matrix_versions
from conformance.errors import ConformanceError
from conformance.perf import stats
from conformance.decide.tiers import Tier
from conformance.perf.decisions import (
    MetricBisect,
    bisect_metric,
    check_ratio,
    judged_workloads,
    perf_exit,
    workload_findings,
)
from conformance.perf.render import bisect_json, bisect_markdown, outcome_json, outcome_lines, verdict_line
from conformance.perf.session import PerfOutcome, PerfRequest, run_perf
from conformance.perf.sides import is_interpreter, prepare_side, select_workloads, twin
from conformance.results.outputs import check_outputs
from conformance.results.versions import version_order
from conformance.safetext import terminal_text

Say = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class PerfCommand:
    """`perf`: the sides (releases or interpreter paths), the results folder, case folders, `-k`, the rounds and
    their bound, the threshold, XLA_FLAGS, reuse, A/A, and the JSON file to write."""

    sides: tuple[str, ...] = ()
    results: Path = Path("results")
    case_folders: tuple[str, ...] = ()
    expression: str | None = None
    rounds: int = 5
    max_rounds: int = 9
    threshold: float = stats.THRESHOLD
    xla_flags: str = ""
    rerun: bool = False
    aa: bool = False
    json_path: Path | None = None
    issue_path: Path | None = None
    threshold_option: str = "--threshold"


def perf_sides(jax: Sequence[str] | None, pythons: Sequence[str], matrix: str | None, builder: Any) -> list[str]:
    """The sides `perf` names: the `--jax` releases (else the matrix's, unless only interpreters are given), then
    the `--python` interpreters."""
    return chosen_versions(jax, matrix, builder, others=bool(pythons)) + list(pythons)


def _request(command: PerfCommand, builder: Any, sides: Sequence[str] | None = None) -> PerfRequest:
    check_ratio(command.threshold, command.threshold_option)
    workloads, folders = select_workloads(command.case_folders, command.expression)
    prepared = [prepare_side(text, builder, command.results) for text in (sides or command.sides)]
    return PerfRequest(
        tuple(prepared),
        tuple(workloads),
        DEFAULT_CASE_PACKAGE,
        tuple(folders),
        rounds=command.rounds,
        max_rounds=max(command.max_rounds, command.rounds),
        threshold=command.threshold,
        xla_flags=command.xla_flags,
        rerun=command.rerun,
    )


def _write_json(path: Path | None, outcome: PerfOutcome) -> list[str]:
    if path is None:
        return []
    return [write_json(path, json.dumps(outcome_json(outcome), indent=1, allow_nan=False))]


def run_perf_command(command: PerfCommand, builder: Any, say: Say) -> tuple[list[str], int]:
    """`perf`: the lines to print and the exit status (see the module docstring)."""
    if not command.sides:
        raise ConformanceError("name the releases to measure (--jax VERSION ..., --matrix NAME or --python PATH)")
    check_outputs([("--json", command.json_path)], results=command.results, writing=True)
    request = _request(command, builder)
    if command.aa:
        doubled = tuple(s for side in request.sides for s in (side, twin(side)))
        request = replace(
            request, sides=doubled, rerun=True, pairs=tuple((2 * i, 2 * i + 1) for i in range(len(request.sides)))
        )
    elif len(request.sides) < 2:
        say("note: one side only: its samples are taken and stored, nothing is compared (add --aa for a noise check)")
    outcome = run_perf(request, say=say)
    lines = outcome_lines(outcome) + _write_json(command.json_path, outcome)
    return [terminal_text(line) for line in lines], perf_exit(outcome, command.aa)


def between(good: str, bad: str, releases: Sequence[str]) -> list[str]:
    """The releases strictly between `good` and `bad` (either order), oldest first."""
    low, high = sorted((good, bad), key=version_order)
    return sorted(
        (r for r in releases if version_order(low) < version_order(r) < version_order(high)), key=version_order
    )


def _verdict_of(outcome: PerfOutcome, workload: str, old: int, new: int, metric: str) -> stats.Verdict:
    verdict = outcome.verdicts(workload, old, new).get(metric)
    if verdict is None:
        side = outcome.request.sides[new if outcome.samples.get((workload, old)) else old]
        error = outcome.errors.get((workload, new)) or outcome.errors.get((workload, old)) or "no samples"
        raise ConformanceError(f"{workload} has no {metric} on {side.label}: {terminal_text(error)}")
    return verdict


def run_perf_bisect(
    command: PerfCommand, workload: str, metric: str, good: str, bad: str, builder: Any, say: Say
) -> tuple[list[str], int]:
    """`bisect WORKLOAD --metric M --good A --bad B`: the first release whose metric crossed (`perf.decisions`);
    the releases between are those of the `all` matrix (none when an end is an interpreter path). Writes
    `--json` (always) and `--issue` (when a release is blamed)."""
    if metric not in stats.METRICS:
        raise ConformanceError(f"--metric {metric!r} is not a metric; one of {', '.join(stats.METRICS)}")
    check_outputs(
        [("--json", command.json_path), ("--issue", command.issue_path)],
        results=command.results,
        reads=command.case_folders,
        writing=True,  # each step's samples are stored there: an unwritable folder fails before any is taken
    )
    command = replace(command, expression=None)
    if not [w for w in select_workloads(command.case_folders, None)[0] if w.id == workload]:
        raise ConformanceError(
            f"no workload {workload!r}; `jax-conformance perf -k ...` selects from the declared ones"
        )
    paths = is_interpreter(good) or is_interpreter(bad)
    steps = [] if paths else between(good, bad, matrix_versions("all", builder.index))
    named: dict[str, str] = {}
    ends_outcome = _bisect_step(command, workload, builder, [good, bad], say, named)
    ends = _verdict_of(ends_outcome, workload, 0, 1, metric)

    def judge(low: str, middle: str, high: str) -> stats.Verdict:
        step = _verdict_of(
            _bisect_step(command, workload, builder, [low, middle, high], say, named), workload, 0, 1, metric
        )
        say(f"{named.get(middle, middle)}: {step.verdict} against {named.get(low, low)}")
        return step

    found = bisect_metric(good, bad, steps, ends, judge)
    lines = [verdict_line(ends_outcome, (workload, 0, 1, metric, ends)), *_bisect_lines(found, workload, metric, named)]
    return [
        terminal_text(line) for line in lines + _bisect_files(command, found, workload, metric, named)
    ], found.exit_code


def _bisect_lines(found: MetricBisect, workload: str, metric: str, named: dict[str, str]) -> list[str]:
    lines = [
        f"{named.get(r, r)}: like {named.get(found.bad if side == 'bad' else found.good, side)} ({verdict.verdict})"
        for r, side, verdict in found.steps
        if side != "unplaced"
    ]
    if found.refused:
        return lines + [f"{metric} of {workload}: no release blamed: {found.refused}"]
    return lines + [
        f"first release where {metric} of {workload} crossed: {named.get(found.first, found.first)} "
        f"(last before it: {named.get(found.last_good, found.last_good)})"
    ]


def _bisect_files(
    command: PerfCommand, found: MetricBisect, workload: str, metric: str, named: dict[str, str]
) -> list[str]:
    said = []
    if command.json_path is not None:
        text = json.dumps(bisect_json(found, workload, metric, named), indent=1, allow_nan=False)
        write_text_atomically(command.json_path, text + "\n")
        said.append(f"json: {command.json_path}")
    if command.issue_path is not None:
        if found.refused:
            said.append(f"no bug report written to {command.issue_path}: no release is blamed")
        else:
            write_text_atomically(command.issue_path, bisect_markdown(found, workload, metric, named))
            said.append(f"issue: {command.issue_path}")
    return said


def _bisect_step(
    command: PerfCommand, workload: str, builder: Any, sides: list[str], say: Say, named: dict[str, str]
) -> PerfOutcome:
    """One step: `sides` sampled interleaved (or answered from storage); `named` learns each side's label."""
    request = _request(replace(command, expression=None), builder, sides)
    request = replace(request, workloads=tuple(w for w in request.workloads if w.id == workload))
    named.update({spec: side.label for spec, side in zip(sides, request.sides)})
    return run_perf(request, say=say)


def workload_tier(
    command: PerfCommand, baseline: str, candidate: str, entries: Sequence[Any], builder: Any, say: Say
) -> tuple[Tier, PerfOutcome]:
    """The workloads tier of the gate: both sides sampled interleaved (or answered from storage), judged by
    `perf.decisions.workload_findings` against the `[[perf]]` entries."""
    outcome = run_perf(_request(command, builder, [baseline, candidate]), say=say)
    sides = outcome.request.sides
    rounds = f"{outcome.rounds_run} rounds" if outcome.rounds_run else "answered from stored samples"
    title = f"jax {sides[0].label} -> {sides[1].label}, threshold x{command.threshold:g}, {rounds}"
    return Tier(
        "workloads", title, judged_workloads(outcome), tuple(workload_findings(outcome, entries, verdict_line))
    ), outcome
