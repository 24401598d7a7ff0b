"""The work of the `api` commands, returning typed outcomes for the CLI to print (it prints nothing itself; lines
of progress go to `say`).

- `run_censuses` (`api census`): the census of each target, answered from storage or taken and stored;
- `run_api_diff` (`api diff A B`): the changes from A to B, dated over the censuses between them;
- `run_scan` (`api scan PATH... --to V [--from V] [--private]`): the uses of JAX names in a team's files, judged
  (with `--private`, its `jax._src` uses against a census of just those names on V).

A side (`A`, `B`, `--to`, `--from`) is a census file (an existing `.json` file), a folder of wheels (an existing
folder), an interpreter with jax (another existing file) or a JAX release (anything else).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import conformance
from conformance.api.diff import Change, changes_json, changes_named, diff_chain
from conformance.api.findings import render
from conformance.api.judge import Censuses, Finding, exit_status, judge, private_name
from conformance.api.model import Census, load_census
from conformance.api.scan import uses_in_files
from conformance.api.store import CensusRun, private_census, stored_censuses, take_census
from conformance.jsonout import write_json
from conformance.results.outputs import check_outputs
from conformance.engine.targets import ExistingPython, Release, WheelFolder
from conformance.envs.matrix import matrix_versions
from conformance.errors import ConformanceError
from conformance.readfile import TooLarge, read_regular_bytes
from conformance.results.versions import version_order

Say = Callable[[str], None]
MAX_SOURCE_BYTES = 16 * 1024 * 1024
SKIPPED_FOLDERS = ("__pycache__", "site-packages", "node_modules")


def _quiet(line: str) -> None:
    pass


def side_of(text: str) -> Any:
    """What a side names: a census file (Path), a `WheelFolder`, an `ExistingPython` or a `Release`."""
    path = Path(text)
    if path.is_file() and path.suffix == ".json":
        return path
    if path.is_dir():
        return WheelFolder(text)
    if path.is_file():
        return ExistingPython(text)
    return Release(text)


def census_line(run: CensusRun) -> str:
    """One line for a target's census: counts, and whether it was taken or read from storage."""
    counted = run.census.counts()
    how = "answered from storage" if run.stored else f"census taken in {run.seconds:.1f}s"
    return (
        f"jax {run.census.label}: {counted['names']} names ({counted['deprecated']} deprecated, "
        f"{counted['removed']} removed) in {counted['modules']} modules ({counted['failed_modules']} failed to "
        f"import); {how}: {run.path}"
    )


class _Sides:
    """Censuses for the sides of a command, the builder made only when a side needs one."""

    def __init__(self, builder: Callable[[], Any], results: Path, rerun: bool, say: Say) -> None:
        self._make, self._builder = builder, None
        self.results, self.rerun, self.say = results, rerun, say

    @property
    def builder(self) -> Any:
        if self._builder is None:
            self._builder = self._make()
        return self._builder

    def check(self, sides: Sequence[Any]) -> None:
        """Fail before any long work: a release unknown or without a Python here (census files need nothing)."""
        for side in sides:
            if isinstance(side, Release):
                side.check(self.builder)

    def census(self, side: Any) -> Census:
        if isinstance(side, Path):
            return load_census(side)
        run = take_census(side, self.builder, self.results, self.rerun)
        self.say(census_line(run))
        return run.census


@dataclass(frozen=True)
class CensusRequest:
    """`api census`: the targets, the results folder, and whether to take every census again."""

    targets: tuple[Any, ...]
    results: Path
    rerun: bool = False


@dataclass
class CensusOutcome:
    """The censuses taken or read, and the targets that produced none (with why)."""

    runs: list[CensusRun] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def run_censuses(request: CensusRequest, builder: Any, say: Say = _quiet) -> CensusOutcome:
    """The census of every target, in order; a target that fails is named and the next one runs."""
    outcome = CensusOutcome()
    ready = {}
    for target in request.targets:  # bad input first, one line before any long work; a given build is prepared now
        target.check(builder)
        ready[target] = None if target.release else target.prepare(builder)
    for target in request.targets:
        name = target.failure_name(target.label or ready[target].version)
        try:
            run = take_census(target, builder, request.results, request.rerun, ready[target])
        except ConformanceError as exc:
            outcome.failures.append(f"{name}: {exc}")
            say(f"jax {name}: no census ({exc})")
            continue
        outcome.runs.append(run)
        say(census_line(run))
    return outcome


@dataclass(frozen=True)
class ApiDiffRequest:
    """`api diff A B`: the sides, the results folder, the matrix whose releases date the changes, name prefixes to
    keep, whether to take the censuses again, and the JSON file to write."""

    a: str
    b: str
    results: Path
    matrix: str | None = None
    names: tuple[str, ...] = ()
    rerun: bool = False
    json_path: Path | None = None


@dataclass(frozen=True)
class ApiDiffOutcome:
    """The changes from A to B and the releases (censuses) they were dated over, A and B included."""

    changes: list[Change]
    chain: list[Census]

    def lines(self) -> list[str]:
        """The changes as text, grouped by kind of change."""
        first, last = self.chain[0], self.chain[-1]
        head = (
            f"api diff jax {first.label} → {last.label}: {len(self.changes)} change(s), dated over "
            f"{', '.join(c.jax for c in self.chain)}"
        )
        lines = [head]
        for kind in ("removed", "added", "deprecated", "undeprecated", "moved", "signature"):
            found = [c for c in self.changes if c.change == kind]
            if found:
                lines.append(f"\n{kind} ({len(found)}):")
                lines += [f"  {c.name} (since {c.since}): {c.message}" for c in found]
        return lines


def _between(first: Census, last: Census, versions: Sequence[str]) -> list[str]:
    low, high = sorted([version_order(first.jax), version_order(last.jax)])
    return [v for v in versions if low < version_order(v) < high]


def run_api_diff(request: ApiDiffRequest, builder: Callable[[], Any], say: Say = _quiet) -> ApiDiffOutcome:
    """The changes from A to B (see `conformance.api.diff`), with `--matrix`'s releases between them censused."""
    sides = _Sides(builder, request.results, request.rerun, say)
    a, b = side_of(request.a), side_of(request.b)
    sides.check([a, b])
    first, last = sides.census(a), sides.census(b)
    if request.matrix:
        versions = _between(first, last, matrix_versions(request.matrix, sides.builder.index))
        between = [sides.census(Release(v)) for v in versions]
    else:
        stored = stored_censuses(request.results, last.platform)
        between = [c for c in stored if c.jax in _between(first, last, [c.jax for c in stored])]
    descending = version_order(first.jax) > version_order(last.jax)
    between.sort(key=lambda c: version_order(c.jax), reverse=descending)
    chain = [first, *between, last]
    changes = diff_chain(chain)
    if request.names:
        changes = changes_named(changes, request.names)
    if request.json_path is not None:
        write_json(request.json_path, json.dumps(changes_json(changes), indent=1, ensure_ascii=False))
    return ApiDiffOutcome(changes, chain)


@dataclass(frozen=True)
class ScanRequest:
    """`api scan`: the files and folders, the release to upgrade to and the one run today, the results folder, the
    output format, and whether to take the censuses again."""

    paths: tuple[Path, ...]
    to: str
    before: str | None = None
    results: Path = Path("results")
    fmt: str = "text"
    rerun: bool = False
    private: bool = False
    json_path: Path | None = None  # `--json PATH` (`-`: standard output): the findings' JSON beside `fmt`'s text


# `--format json`, kept for one release (its JSON still on standard output), said in a note on stderr
DEPRECATED_FORMAT = "`api scan --format json` is deprecated and goes in the next release; write `--json -` (or PATH)"


@dataclass(frozen=True)
class ScanOutcome:
    """The findings, their rendering, the exit status, and the notes: files left out (not parsed), a deprecated
    option used."""

    findings: list[Finding]
    text: str
    exit_code: int
    files: int
    skipped: list[str]


def python_files(paths: Sequence[Path]) -> list[Path]:
    """The `.py` files of the paths given: a file as it is, a folder's files below it (hidden folders,
    `__pycache__`, `site-packages` and `node_modules` left out), sorted; a path that does not exist is an error."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(
                p
                for p in path.rglob("*.py")
                if p.is_file()
                and not any(part.startswith(".") or part in SKIPPED_FOLDERS for part in p.relative_to(path).parts[:-1])
            )
        else:
            raise ConformanceError(f"{path}: no such file or folder to scan")
    return list(dict.fromkeys(found))


def history_for(to: Census, before: Census | None, results: Path) -> list[Census]:
    """The censuses the scan dates against: those stored for `to`'s platform up to `to`, `before` and `to`; one per
    release (the sides' own censuses preferred), oldest first."""
    limit = version_order(to.jax)
    chosen = {c.jax: c for c in stored_censuses(results, to.platform) if version_order(c.jax) <= limit}
    if before is not None and version_order(before.jax) <= limit:
        chosen[before.jax] = before
    chosen[to.jax] = to
    return sorted(chosen.values(), key=lambda c: version_order(c.jax))


def run_scan(request: ScanRequest, builder: Callable[[], Any], say: Say = _quiet) -> ScanOutcome:
    """Find the uses in the files, judge them against the censuses, render them (see `conformance.api.judge`)."""
    check_outputs([("--json", request.json_path)], results=request.results, reads=list(request.paths))
    files = python_files(request.paths)
    sides = _Sides(builder, request.results, request.rerun, say)
    to_side, before_side = side_of(request.to), side_of(request.before) if request.before else None
    sides.check([to_side, *([before_side] if before_side else [])])
    sources, too_large = [], []
    for path in files:
        try:
            sources.append((str(path), read_regular_bytes(path, MAX_SOURCE_BYTES)))
        except TooLarge:  # a note, like a file that does not parse: the scan goes on
            too_large.append(f"{path}: not scanned (larger than {MAX_SOURCE_BYTES // 2**20} MB)")
        except OSError as exc:
            raise ConformanceError(f"{path}: cannot be read ({exc})") from None
    uses, skipped = uses_in_files(sources)
    skipped = too_large + skipped + ([DEPRECATED_FORMAT] if request.fmt == "json" else [])
    to = sides.census(to_side)
    before = sides.census(before_side) if before_side else None
    private = None
    if request.private:
        if isinstance(to_side, Path):
            raise ConformanceError(
                "--private takes its census in the release's environment: give --to a release or "
                "a build, not a census file"
            )
        private = private_census(to_side, sides.builder, [u.name for u in uses if private_name(u.name)])
    findings = judge(uses, Censuses(to, before, tuple(history_for(to, before, request.results)), private))
    text = render(findings, request.fmt, to.jax, before.jax if before else "", len(sources), conformance.__version__)
    if request.json_path is not None:
        write_json(request.json_path, render(findings, "json", to.jax))
    return ScanOutcome(findings, text, exit_status(findings), len(sources), skipped)
