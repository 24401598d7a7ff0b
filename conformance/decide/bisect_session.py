"""A whole `bisect` session: from the cell and the two ends given to the release where the verdict changes.

`run_bisect(request, builder, on_event)` resolves the cell, lists the releases between the ends from the package
index, and searches them (`decide.bisect`) with the suite's own verdict as the oracle (`decide.runs.CellOracle`):
each release is answered from stored results where the keys allow (CI's shard files included), otherwise its
environment is prepared and the one cell run through the engine's run path, so it is stored like any run's. With
`find_fix` both ends are tested first and the search goes from the end that shows the documented bug. With `pre`
(`--pre`) it goes on through the dev builds the index lists between the two releases it ended at
(`decide.dev_builds`); `--attribute` and `--jax-source` then start from the narrowest pair found. It prints
nothing: progress goes to `on_event` (`BisectStarted`, `ReleaseTested`, `BisectStep`, and the engine's `Notice`
and `CellsDropped`), and it returns a `BisectReport` that the CLI prints.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conformance.decide.bisect import (
    BisectOutcome,
    Memo,
    Untestable,
    bisect,
    bug_reproduces,
    releases_between,
    same_bug_state,
    same_observation,
)
from conformance.decide.attribution import LIKE_BAD, LIKE_GOOD, NEITHER, Attribution, Mix, attribute
from conformance.decide.cellref import resolve_cell
from conformance.decide.commits import BuildCommits, commits_of_header
from conformance.decide.dev_builds import search_dev_builds
from conformance.decide.render import observation_line
from conformance.decide.runs import CellOracle
from conformance.engine import matrix
from conformance.engine.folders import case_folders
from conformance.engine.targets import JaxCommit, JaxPair, Release
from conformance.envs.pairs import installed_jax_facts, mix_problem
from conformance.errors import ConformanceError
from conformance.results.load import ResultsError, load_result_file
from conformance.results.store import ResultStore


@dataclass(frozen=True)
class BisectRequest:
    """`bisect CELL --good V --bad V [--find-fix]`, with the launcher, results folder and case folders to use."""

    cell: str
    good: str
    bad: str
    find_fix: bool = False
    launcher: str = "fork"
    results: Path = Path("results")
    cases: tuple[str, ...] = ()
    attribute: bool = False  # also run the jax/jaxlib mixes of the last good and first bad builds
    jax_source: Path | None = None  # a jax git checkout: go on through the commits between the two builds
    pre: bool = False  # go on through the dev builds the index lists between the two releases (`--pre`)
    downstream: str = ""  # `--downstream SUITE`: `cell` is a node id of that suite (`downstream.bisecting`)
    manifest: Path | None = None  # with `downstream`: the suite's manifest (`--manifest FILE`)


@dataclass(frozen=True)
class BisectStarted:
    """The search begins: the cell and the releases between the ends (an event)."""

    cell_id: str
    releases: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseTested:
    """A release's verdict on the cell, and how it was had: `stored result` or the seconds it took (an event)."""

    version: str
    line: str
    how: str


@dataclass(frozen=True)
class BisectStep:
    """A step of the binary search, said as a line (an event)."""

    text: str


@dataclass
class BisectReport:
    """The session's outcome: the search's (None when `find_fix` found the bug on both ends or on neither, then
    `no_fix` says which), the releases answered from storage and those run, and the wall time."""

    cell_id: str
    find_fix: bool
    releases: list[str]
    results: Path
    outcome: BisectOutcome | None = None
    no_fix: str = ""
    from_storage: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    # The jax and jaxlib versions and commits of the last good and first bad builds, as their result files record.
    good_build: BuildCommits | None = None
    bad_build: BuildCommits | None = None
    cell: Any = None  # the resolved cell (`engine.selection.Cell`): its case makes the bug report's script
    # The first bad build's platform, Python, numpy and backend, as its result file records them.
    environment: dict[str, str] = field(default_factory=dict)
    attribution: Any = None  # `decide.attribution.Attribution` with --attribute
    source: Any = None  # `decide.source_bisect.SourceOutcome` with --jax-source
    dev: Any = None  # `decide.dev_builds.DevStep` with --pre

    def narrowest(self) -> tuple[Any, Any, Any]:
        """The outcome and the last good and first bad builds of the narrowest pair found: the dev builds' with
        `--pre` when that step found them, else the releases'."""
        if self.dev is not None and self.dev.found:
            return self.dev.outcome, self.dev.good_build, self.dev.bad_build
        return self.outcome, self.good_build, self.bad_build

    @property
    def exit_code(self) -> int:
        """0 when the verdict changes between the ends (found; from source too with --jax-source), 1 when not."""
        if self.source is not None and self.source.outcome is not None and self.source.outcome.first_bad:
            return 0
        return 1 if self.outcome is None or self.outcome.ends_agree else 0


def _oracle(request: BisectRequest, builder: Any, on_event: Callable[[Any], None]) -> tuple[Any, list[str], Any, Any]:
    """The cell, the releases between the ends, the oracle that answers a release's verdict on the cell, and the
    run request of that one cell."""
    folders = case_folders(request.cases)
    cell = resolve_cell(request.cell, matrix.load_all_cases(folders))
    if request.find_fix and not cell.case.param(cell.param).known_issue:
        raise ConformanceError(
            f"{cell.id} documents no known issue; --find-fix looks for the release where a "
            f"documented bug stops reproducing (bisect without it for any change)"
        )
    releases = releases_between(builder.index.releases("jax"), request.good, request.bad)
    folder = next((f for f in folders if f.name == cell.case.package), None)
    run = matrix.RunRequest(
        versions=(),
        results=request.results,
        cell_ids=(cell.id,),
        sources=(folder,),
        case_folders=tuple(folders),
        workers=1,
        retries=1,
        launcher=request.launcher,
    )
    run.check()
    quiet = lambda event: on_event(event) if isinstance(event, (matrix.Notice, matrix.CellsDropped)) else None  # noqa

    def run_cell(env: Any) -> Any:
        target = Release(env.version)
        return (
            matrix.run_targets(run, builder, [target], quiet, keep_going=False, prepared={target: env})
            .runs[target]
            .file
        )

    oracle = CellOracle(
        builder, cell, run_cell, stored=lambda version: matrix.stored_cells(run, builder, version, [cell]).get(cell.id)
    )
    return cell, releases, oracle, run


def stored_header(results: Path, version: str) -> Any:
    """The run header of `version`'s stored result file here (its shard files after it), None when none reads."""
    path = ResultStore(results).path_for(version, matrix.host_platform())
    for candidate in [path, *sorted(Path(results).glob(path.stem + "-shard*of*.json"))]:
        try:
            return load_result_file(candidate).header
        except (ResultsError, OSError):
            continue
    return None


def stored_build(results: Path, version: str) -> BuildCommits:
    """The jax/jaxlib versions and commits the stored result file of `version` records (versions only, and no
    commits, when it cannot be read or predates schema 4)."""
    header = stored_header(results, version)
    return commits_of_header(header) if header is not None else BuildCommits(version, version)


def run_bisect(
    request: BisectRequest, builder: Any, on_event: Callable[[Any], None] = lambda event: None
) -> BisectReport:
    """Bisect the releases between the good and bad ends for the first whose verdict on the cell changes."""
    started = time.monotonic()
    matrix.remove_orphans(Path(request.results))  # even a bisect answered from storage alone cleans what -9 left
    cell, releases, oracle, run = _oracle(request, builder, on_event)

    def announced(version: str) -> Any:
        found = oracle(version)
        for text in matrix.take_notices(builder):
            on_event(matrix.Notice(text))
        if hasattr(found, "status"):
            how = "stored result" if version in oracle.from_storage else f"{oracle.seconds.get(version, 0):.0f}s"
            on_event(ReleaseTested(version, observation_line(found, version), how))
        return found

    on_event(BisectStarted(cell.id, tuple(releases)))
    memo, like = Memo(announced), same_observation
    report = BisectReport(cell.id, request.find_fix, releases, Path(request.results).absolute(), cell=cell)
    if request.find_fix:
        like = same_bug_state
        first, last = memo(releases[0]), memo(releases[-1])
        if hasattr(first, "status") and hasattr(last, "status"):
            if bug_reproduces(last) and not bug_reproduces(first):
                releases = releases[::-1]
            elif bug_reproduces(first) == bug_reproduces(last):
                report.no_fix = "reproduces" if bug_reproduces(first) else "does not reproduce"
                return report
    report.outcome = bisect(releases, memo, like, on_step=lambda line: on_event(BisectStep(line)))
    if report.outcome.first_bad:
        report.good_build = stored_build(request.results, report.outcome.last_good)
        report.bad_build = stored_build(request.results, report.outcome.first_bad)
        header = stored_header(request.results, report.outcome.first_bad)
        if header is not None:
            report.environment = {
                "platform": header.platform,
                "python": header.python or "?",
                "numpy": header.numpy or "?",
                "backend": header.backend or "?",
            }
        if request.pre:
            report.dev = search_dev_builds(
                builder.index.releases("jax"),
                report.outcome,
                memo,
                like,
                lambda version: stored_build(request.results, version),
                on_step=lambda line: on_event(BisectStep(line)),
                find_fix=request.find_fix,
            )
        if request.attribute:
            report.attribution = attribute_change(run, builder, report, like, on_event)
    if request.jax_source is not None:
        ends = (
            report.narrowest()[1:]
            if report.outcome.first_bad
            else (stored_build(request.results, releases[0]), stored_build(request.results, releases[-1]))
        )
        report.source = source_steps(request, run, builder, cell, ends, like, on_event)
    order = [*releases, *(report.dev.candidates if report.dev is not None else [])]
    report.ran = sorted(set(oracle.seconds) - oracle.from_storage, key=order.index)
    report.from_storage = sorted(oracle.from_storage, key=order.index)
    report.wall_s = time.monotonic() - started
    return report


def source_steps(
    request: BisectRequest,
    run: Any,
    builder: Any,
    cell: Any,
    ends: tuple[BuildCommits, BuildCommits],
    like: Callable[[Any, Any], bool],
    on_event: Callable[[Any], None],
) -> Any:
    """`--jax-source`: the commits between the two builds, each installed from the checkout over a jaxlib it
    accepts and run as a `JaxCommit` target through the run path (`decide.source_bisect`)."""
    from conformance.decide.source_bisect import SourceOutcome, source_session

    quiet = lambda event: on_event(event) if isinstance(event, (matrix.Notice, matrix.CellsDropped)) else None  # noqa

    def run_tree(tree: Path, commit: str, jaxlib: str) -> Any:
        target = JaxCommit(str(tree), commit, jaxlib)
        try:
            env = target.prepare(builder)
        except ConformanceError as exc:
            return Untestable(commit, str(exc))
        finally:
            shutil.rmtree(tree, ignore_errors=True)
        done = matrix.run_targets(run, builder, [target], quiet, keep_going=False, prepared={target: env})
        found = next(c for c in done.runs[target].file.cells if c.cell_id == cell.id)
        on_event(BisectStep(f"    {observation_line(found, env.version)}"))
        return found

    with tempfile.TemporaryDirectory(prefix="jax-source-") as work:  # the exported trees, gone once installed
        try:
            return source_session(
                Path(request.jax_source),
                ends[0],
                ends[1],
                Path(work),
                run_tree,
                like,
                on_step=lambda line: on_event(BisectStep(line)),
            )
        except ConformanceError as exc:  # the verdict found so far is printed and written all the same
            return SourceOutcome([], stopped=str(exc))


def attribute_change(
    run: Any, builder: Any, report: BisectReport, like: Callable[[Any, Any], bool], on_event: Callable[[Any], None]
) -> Attribution:
    """jax or jaxlib: the cell on the first bad jax over the last good jaxlib and on the last good jax over the first
    bad jaxlib, each a `JaxPair` target run (and stored, under `builds/pair-<jax>-<jaxlib>/`) through the run path
    where jax accepts that jaxlib (`decide.attribution`)."""
    (outcome, good, bad), cell = report.narrowest(), report.cell
    quiet = lambda event: on_event(event) if isinstance(event, (matrix.Notice, matrix.CellsDropped)) else None  # noqa

    def problem(jax: str, jaxlib: str) -> str:
        return mix_problem(jax, jaxlib, installed_jax_facts(builder.prepare(jax).path)["minimum"])

    def run_mix(jax: str, jaxlib: str) -> Mix:
        on_event(BisectStep(f"attributing: {cell.id} on jax {jax} over jaxlib {jaxlib}"))
        target = JaxPair(f"{jax}:{jaxlib}")
        done = matrix.run_targets(run, builder, [target], quiet, keep_going=False).runs[target]
        found = next(c for c in done.file.cells if c.cell_id == cell.id)
        said = (
            LIKE_GOOD
            if like(outcome.last_good_result, found)
            else LIKE_BAD
            if like(outcome.first_bad_result, found)
            else NEITHER
        )
        return Mix(
            jax,
            jaxlib,
            said,
            no_deps=bool(done.file.header.source.get("no_deps")),
            observation_line=observation_line(found, jax),
        )

    return attribute((good.jax, good.jaxlib), (bad.jax, bad.jaxlib), problem, run_mix)


def write_bisect_files(report: BisectReport, issue: Path | None, verdict: Path | None, suite: str = "") -> list[str]:
    """Write `--issue` (the bug report, when the search found a change) and `--json` (the verdict, always); the
    lines that say what was written."""
    from conformance.atomic import write_text_atomically
    from conformance.decide.bug_report import issue_markdown, verdict_json
    from conformance.jsonout import write_json

    said = []
    if verdict is not None:
        where = write_json(verdict, json.dumps(verdict_json(report), indent=1, default=repr) + "\n")
        said.append(f"wrote the verdict as JSON to {where.removeprefix('json: ')}")
    if issue is not None:
        if report.outcome is None or report.outcome.ends_agree:
            said.append(f"no bug report written to {issue}: the verdict does not change between the ends")
        elif report.cell is None:  # a downstream test's: no case to make a script of; the JSON has the verdict
            said.append(f"no bug report written to {issue}: a downstream test's bisect writes its verdict with --json")
        else:
            write_text_atomically(issue, issue_markdown(report, suite))
            said.append(f"wrote the bug report to {issue}")
    return said
