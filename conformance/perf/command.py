"""The work of `perf`, `bisect WORKLOAD --metric M` and `gate --perf`, from typed requests to lines and an exit
status (the CLI prints them; nothing here sees parsed arguments).

- `run_perf_command`: the workloads on every side in interleaved rounds; with `aa`, each side against its twin.
  Exit 0, or 1 when an A/A run flags anything (`regressed`, `improved` or `changed`; an `unknown` is listed, not
  a flag: the samples could not tell).
- `run_perf_bisect`: the first release between good and bad whose metric crossed: both ends sampled interleaved
  (they must differ: `regressed` or `changed`), then each midpoint sampled interleaved with both ends and put on the
  side it is not different from.
- `run_perf_gate`: the candidate against the baseline; exit 1 on a `regressed` timed metric or an exact metric that
  grew, unless a `[[perf]]` entry of the expectations file acknowledges it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.atomic import write_text_atomically
from conformance.core.case import DEFAULT_CASE_PACKAGE
from conformance.envs.matrix import DEFAULT_MATRIX, matrix_versions
from conformance.errors import ConformanceError
from conformance.perf import stats
from conformance.perf.acks import acknowledging, load_acks
from conformance.perf.render import outcome_json, outcome_lines, verdict_line
from conformance.perf.session import PerfOutcome, PerfRequest, run_perf
from conformance.perf.sides import is_interpreter, prepare_side, select_workloads, twin
from conformance.results.outputs import check_outputs
from conformance.results.versions import version_order

Say = Callable[[str], None]


@dataclass(frozen=True)
class PerfCommand:
    """`perf`: the sides (releases or interpreter paths), the results folder, case folders, `-k`, the rounds and
    their bound, the threshold, XLA_FLAGS, reuse, A/A, and the JSON file to write."""

    sides: tuple[str, ...]
    results: Path
    case_folders: tuple[str, ...] = ()
    expression: str | None = None
    rounds: int = 5
    max_rounds: int = 9
    threshold: float = stats.THRESHOLD
    xla_flags: str = ""
    rerun: bool = False
    aa: bool = False
    json_path: Path | None = None


def perf_sides(jax: Sequence[str] | None, pythons: Sequence[str], matrix: str | None, builder: Any) -> list[str]:
    """The sides `perf` names: the `--jax` releases (else the matrix's, unless only interpreters are given), then
    the `--python` interpreters."""
    releases = list(dict.fromkeys(jax)) if jax else [] if pythons and not matrix else \
        matrix_versions(matrix or DEFAULT_MATRIX, builder.index)
    return releases + list(pythons)


def _request(command: PerfCommand, builder: Any, sides: Sequence[str] | None = None) -> PerfRequest:
    if command.threshold <= 1:
        raise ConformanceError(f"--threshold must be a ratio above 1 (such as 1.25), not {command.threshold:g}")
    workloads, folders = select_workloads(command.case_folders, command.expression)
    prepared = [prepare_side(text, builder, command.results) for text in (sides or command.sides)]
    return PerfRequest(tuple(prepared), tuple(workloads), DEFAULT_CASE_PACKAGE, tuple(folders),
                       rounds=command.rounds, max_rounds=max(command.max_rounds, command.rounds),
                       threshold=command.threshold, xla_flags=command.xla_flags, rerun=command.rerun)


def _write_json(path: Path | None, outcome: PerfOutcome) -> list[str]:
    if path is None:
        return []
    write_text_atomically(path, json.dumps(outcome_json(outcome), indent=1, allow_nan=False))
    return [f"json: {path}"]


def run_perf_command(command: PerfCommand, builder: Any, say: Say) -> tuple[list[str], int]:
    """`perf`: the lines to print and the exit status (see the module docstring)."""
    if not command.sides:
        raise ConformanceError("name the releases to measure (--jax VERSION ..., --matrix NAME or --python PATH)")
    check_outputs([("--json", command.json_path)], results=command.results, writing=True)
    request = _request(command, builder)
    if command.aa:
        doubled = tuple(s for side in request.sides for s in (side, twin(side)))
        request = replace(request, sides=doubled, rerun=True,
                          pairs=tuple((2 * i, 2 * i + 1) for i in range(len(request.sides))))
    elif len(request.sides) < 2:
        say("note: one side only: its samples are taken and stored, nothing is compared (add --aa for a noise check)")
    outcome = run_perf(request, say=say)
    lines = outcome_lines(outcome) + _write_json(command.json_path, outcome)
    false = [f for f in outcome.flagged() if f[4].verdict in ("regressed", "improved", "changed")]
    return lines, 1 if command.aa and false else 0


def between(good: str, bad: str, releases: Sequence[str]) -> list[str]:
    """The releases strictly between `good` and `bad` (either order), oldest first."""
    low, high = sorted((good, bad), key=version_order)
    return sorted((r for r in releases if version_order(low) < version_order(r) < version_order(high)),
                  key=version_order)


def _differs(outcome: PerfOutcome, workload: str, old: int, new: int, metric: str) -> stats.Verdict:
    verdict = outcome.verdicts(workload, old, new).get(metric)
    if verdict is None:
        raise ConformanceError(f"{workload} has no {metric} on {outcome.request.sides[new].label}")
    return verdict


def run_perf_bisect(command: PerfCommand, workload: str, metric: str, good: str, bad: str, builder: Any,
                    say: Say) -> tuple[list[str], int]:
    """`bisect WORKLOAD --metric M --good A --bad B`: the first release whose metric crossed (module docstring);
    the releases between are those of the `all` matrix (none when an end is an interpreter path)."""
    if metric not in stats.METRICS:
        raise ConformanceError(f"--metric {metric!r} is not a metric; one of {', '.join(stats.METRICS)}")
    command = replace(command, expression=None)
    chosen = [w for w in select_workloads(command.case_folders, None)[0] if w.id == workload]
    if not chosen:
        raise ConformanceError(f"no workload {workload!r}; `jax-conformance perf -k ...` selects from the declared ones")
    paths = is_interpreter(good) or is_interpreter(bad)
    steps = [] if paths else between(good, bad, matrix_versions("all", builder.index))
    lo, hi, lines, named = good, bad, [], {}
    ends = _bisect_step(command, chosen[0].id, builder, [lo, hi], say, named)
    verdict = _differs(ends, chosen[0].id, 0, 1, metric)
    lines.append(verdict_line(ends, (chosen[0].id, 0, 1, metric, verdict)))
    if verdict.verdict in ("same", "unknown"):
        return lines + [f"{metric} of {workload} does not differ between {named[good]} and {named[bad]} "
                        f"({verdict.verdict}); nothing to bisect"], 1
    while steps:
        middle = steps[len(steps) // 2]
        step = _differs(_bisect_step(command, chosen[0].id, builder, [lo, middle, hi], say, named), chosen[0].id, 0,
                        1, metric)
        like_bad = step.verdict in ("regressed", "improved", "changed")
        lines.append(f"{middle}: like {named[hi] if like_bad else named[lo]} ({step.verdict} against {named[lo]})")
        if like_bad:
            hi, steps = middle, [s for s in steps if version_order(s) < version_order(middle)]
        else:
            lo, steps = middle, [s for s in steps if version_order(s) > version_order(middle)]
    lines.append(f"first release where {metric} of {workload} crossed: {named[hi]} (last before it: {named[lo]})")
    return lines, 0


def _bisect_step(command: PerfCommand, workload: str, builder: Any, sides: list[str], say: Say,
                 named: dict[str, str]) -> PerfOutcome:
    """One step: `sides` sampled interleaved (or answered from storage); `named` learns each side's label."""
    request = _request(replace(command, expression=None), builder, sides)
    request = replace(request, workloads=tuple(w for w in request.workloads if w.id == workload))
    named.update({spec: side.label for spec, side in zip(sides, request.sides)})
    return run_perf(request, say=say)


def run_perf_gate(command: PerfCommand, baseline: str, candidate: str, expectations: Path | None,
                  builder: Any, say: Say, today: Any = None) -> tuple[list[str], int]:
    """`gate --perf`: exit 1 on an unacknowledged upward verdict of the candidate (module docstring)."""
    if not baseline or not candidate:
        raise ConformanceError("gate --perf needs --from VERSION and --to VERSION (or --to-python PATH)")
    acks = load_acks(expectations, today) if expectations else []
    outcome = run_perf(_request(command, builder, [baseline, candidate]), say=say)
    lines, failing = [], 0
    for flagged in outcome.flagged():
        workload, _, _, metric, verdict = flagged
        line = verdict_line(outcome, flagged)
        if not stats.upward(verdict):
            lines.append(f"  ok ({verdict.verdict}): {line}")
            continue
        ack = acknowledging(acks, workload, metric, outcome.request.sides[1].version)
        if ack is not None:
            lines.append(f"  acknowledged ({ack}): {line}")
        else:
            failing += 1
            lines.append(f"  REGRESSION: {line}")
    head = f"perf gate {baseline} -> {candidate}: " + (f"FAIL, {failing} unacknowledged" if failing else "pass")
    return [head, *lines, *_write_json(command.json_path, outcome)], 1 if failing else 0
