"""The two sides of `diff` and `gate`: turning what the command was given into two result sets, and judging them.

A side is a result file or folder, or a target to run (a JAX version, or for `gate` an existing interpreter or a
folder of wheels as the candidate). Targets run through the engine's one run path (`engine.matrix.run_for_answers`:
a release whose stored results answer every selected cell is neither built nor run). A version that is a local
build (`0.12.0.1+corp.3`), or a stored pre-release or dev build, is its stored result file in the results folder.
`run_diff` and `run_gate` return typed outcomes (`DiffReport`, `GateReport`) that the CLI prints; nothing here
prints.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from packaging.version import Version

from conformance.decide.diff import SetDiff, diff_sets, result_set, version_mismatch
from conformance.decide.expectations import ExpectationsFile, load_expectations_file, utc_today
from conformance.decide.gate import GateOutcome, gate
from conformance.decide.scope import decision_scope, retired_note, scoped_pair
from conformance.decide.verdict_view import diff_json
from conformance.jsonout import write_json
from conformance.engine import matrix
from conformance.engine.targets import BUILD_KINDS, Release, Target
from conformance.errors import ConformanceError
from conformance.results.load import load_results
from conformance.results.outputs import check_outputs, inputs_read
from conformance.results.schema import is_version
from conformance.results.versions import normalized_or_same
from conformance.results.store import ResultStore


@dataclass(frozen=True)
class DiffRequest:
    """`diff A B`: each side a result file, a folder of them, or a JAX version; `settings` run what must run."""

    baseline: Path
    candidate: Path
    settings: matrix.RunSettings
    json_path: Path | None = None  # `diff --json PATH` (`decide.verdict_view.diff_json`)


@dataclass(frozen=True)
class SidesRead:
    """Both sides are read (an event, before any judgement): the conflicting cells of merged result files (the
    entry finished last is used), and the candidate entries `--newest` left out."""

    conflicts: tuple = ()
    left_out: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # the stale stored cells left out of each side (`decide.scope.stale_note`)


@dataclass
class DiffReport:
    """What `diff` found: the differences, and the version mismatch of the two sets (if any)."""

    diff: SetDiff
    mismatch: str | None


# The options that change how `gate` judges (each a `GateRequest` field and a `gate --flag`), and what each does.
JUDGING_FLAGS = {
    "newest": "when the candidate holds several JAX versions of a platform (a results folder), gate the newest of "
    "each against the baseline",
    "baseline_platforms": "gate only the platforms the baseline holds; the candidate's others are listed as not "
    "gated (by default a platform on one side only fails the gate)",
    "allow_missing": "accept baseline cells the candidate lacks and platforms run on one side only (listed, not "
    "failing); by default they fail the gate",
    "fail_on_printed": "fail on a change of printed output alone (wording, reprs, counts the chapter only prints); "
    "by default such changes are reported, not failing",
    "allow_version_mismatch": "compare result sets written by different suite or schema versions",
}


@dataclass(frozen=True)
class GateRequest:
    """`gate`: given result sets (`baseline`, `candidate`), or a baseline version to run (`from_version`) and one
    candidate target (`to`), with the options that judge them."""

    settings: matrix.RunSettings
    baseline: tuple[Path, ...] = ()
    candidate: tuple[Path, ...] = ()
    from_version: str | None = None
    to: tuple[Target, ...] = ()
    expectations: Path | None = None
    markdown: Path | None = None
    newest: bool = False
    baseline_platforms: bool = False
    allow_missing: bool = False
    fail_on_printed: bool = False
    allow_version_mismatch: bool = False
    today: datetime.date | None = None  # the day expiry dates are read on (None: today, UTC)


@dataclass
class GateReport:
    """What `gate` decided: the outcome and its title."""

    outcome: GateOutcome
    title: str

    @property
    def exit_code(self) -> int:
        """0 without unacknowledged regressions, 1 with."""
        return self.outcome.exit_code


def stored_build(results: Path, side: Path, platform: Callable[[], str] | None = None) -> Path:
    """`side` itself, or, for the version of a local build (`0.12.0.1+corp.3`, not a path) or of a stored
    pre-release or dev build, its result file in `results`; `ConformanceError` when there is none (such a build is
    run with `run --wheels` or `--python`)."""
    text = str(side) if side.exists() else normalized_or_same(str(side))  # `+corp_3` is stored as `+corp.3`
    if side.exists() or not is_version(text):
        return side
    stored = ResultStore(results).path_for(text, (platform or matrix.host_platform)())
    built = Version(text)  # a pre-release or dev build may be on no index this machine reads: its stored file
    if stored.is_file() and (built.local or built.is_prerelease or built.is_devrelease):
        return stored
    if "+" not in text:
        return Path(text)  # `v0.4.38` and `0.5.0-rc1` are run and stored as 0.4.38 and 0.5.0rc1
    if not stored.is_file():
        raise ConformanceError(
            f"jax {text} is a local build, on no package index, and {results} holds no result "
            f"file {stored.name}; run it first with `run --wheels DIR` or `run --python PATH`"
        )
    return stored


def run_diff(
    request: DiffRequest, make_builder: Callable[[], Any], on_event: Callable[[Any], None] = lambda event: None
) -> DiffReport:
    """Compare the two sides, running the selected cells of a side named by a JAX version that storage does not
    answer (the builder is made only then)."""
    results = request.settings.results
    scope = decision_scope(matrix.case_folders(request.settings.cases), request.settings.expression)
    sides = [stored_build(results, side) for side in (request.baseline, request.candidate)]
    versions = [str(side) for side in sides if not side.exists() and is_version(str(side))]
    check_outputs(
        [("--json", request.json_path)],
        inputs=[side for side in sides if side.exists()],
        results=results if versions else None,
        reads=request.settings.cases,
    )  # never over a case module
    if versions:
        check_outputs([], results=results, writing=True)
        targets = [Release(v) for v in dict.fromkeys(versions)]
        ran = dict(
            zip((t.label for t in targets), matrix.run_for_answers(request.settings, make_builder(), targets, on_event))
        )
        sides = [ran.get(str(side), side) for side in sides]
    baseline = result_set(load_results(sides[0]), "baseline")
    candidate = result_set(load_results(sides[1]), "candidate")
    pair = scoped_pair(baseline, candidate, scope)
    baseline, candidate = pair.baseline, pair.candidate
    notes = pair.notes + ([retired_note(pair.retired)] if pair.retired else [])
    on_event(SidesRead(tuple(baseline.conflicts + candidate.conflicts), notes=tuple(notes)))
    report = DiffReport(diff_sets(baseline, candidate), version_mismatch(baseline, candidate))
    if request.json_path is not None:
        write_json(request.json_path, json.dumps(diff_json(report.diff, report.mismatch), indent=1) + "\n")
    return report


def gate_sides(
    request: GateRequest, make_builder: Callable[[], Any], on_event: Callable[[Any], None] = lambda event: None
) -> tuple[list[Path], list[Path]]:
    """The baseline and candidate result files: given, or produced by running `from_version` and the candidate
    target through the engine's run path."""
    ran = request.from_version or request.to
    given = request.baseline or request.candidate
    if ran and given:
        raise ConformanceError(
            "give either --baseline/--candidate (result sets) or --from/--to (versions to run), not both"
        )
    if ran:
        if len(request.to) > 1:
            named = ["--to VERSION"] + [f"--to-{kind.option} {kind.metavar}" for kind in BUILD_KINDS]
            raise ConformanceError(f"give one candidate: {', '.join(named[:-1])} or {named[-1]}")
        if not (request.from_version and request.to):
            others = ", ".join(f"--to-{kind.option}" for kind in BUILD_KINDS)
            raise ConformanceError(
                f"--from and --to go together (or {others}): the baseline JAX version and the candidate"
            )
        paths = matrix.run_for_answers(
            request.settings, make_builder(), [Release(request.from_version), request.to[0]], on_event
        )
        return [paths[0]], [paths[-1]]
    if not (request.baseline and request.candidate):
        raise ConformanceError("gate needs --baseline A --candidate B (result files or folders), or --from V1 --to V2")
    return list(request.baseline), list(request.candidate)


def run_gate(
    request: GateRequest,
    make_builder: Callable[[], Any],
    on_event: Callable[[Any], None] = lambda event: None,
    read: ExpectationsFile | None = None,
) -> GateReport:
    """Judge the candidate against the baseline (running them first when they are targets). `read`: the
    expectations file as the one gate already read it (else it is read here: once per gate either way)."""
    settings = (
        read
        if read is not None
        else (load_expectations_file(request.expectations) if request.expectations else ExpectationsFile([]))
    )
    given = [p for p in request.baseline + request.candidate if p.exists()]
    running = bool(request.from_version or request.to)
    check_outputs(
        [("--markdown", request.markdown)],
        inputs=given,
        results=request.settings.results if running else None,
        writing=running,
        reads=[
            request.expectations,
            *inputs_read(request.settings.cases),
            *(getattr(t, "python", None) or getattr(t, "folder", None) for t in request.to),
        ],
    )
    scope = decision_scope(matrix.case_folders(request.settings.cases), request.settings.expression)
    baseline_paths, candidate_paths = gate_sides(request, make_builder, on_event)
    baseline = result_set(load_results(baseline_paths), "baseline")
    candidate = result_set(load_results(candidate_paths), "candidate", newest=request.newest)
    pair = scoped_pair(baseline, candidate, scope)
    baseline, candidate = pair.baseline, pair.candidate
    on_event(SidesRead(tuple(baseline.conflicts + candidate.conflicts), tuple(candidate.left_out), tuple(pair.notes)))
    mismatch = version_mismatch(baseline, candidate)
    if mismatch and not request.allow_version_mismatch:
        raise ConformanceError(
            f"refusing to compare result sets of different versions: {mismatch}; "
            f"pass --allow-version-mismatch to compare them anyway"
        )
    outcome = gate(
        diff_sets(baseline, candidate, baseline_platforms_only=request.baseline_platforms),
        settings.entries,
        fail_on_printed=request.fail_on_printed or settings.fail_on_printed,
        allow_missing=request.allow_missing or settings.allow_missing,
        today=request.today or utc_today(),
        retired=pair.retired,
    )
    sides = ", ".join(
        f"{p}: jax {baseline.jax(p)} -> {candidate.jax(p)}" for p in sorted(baseline.runs) if p in candidate.runs
    )
    title = f"gate ({sides})" + (f" [versions differ: {mismatch}]" if mismatch else "")
    return GateReport(outcome, title)
