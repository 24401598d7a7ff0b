"""The report's table model, built from result files and the declared cases. Pure logic.

Columns are runs (a JAX version on a platform), sorted by version then platform; rows are
cells (a case parameter), grouped by case and by chapter section. Each table cell knows the
word a person reads for its status (directional known-issue wording included) and points
into the compact data block that the page renders on demand.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance.core.case import Case, section_order
from conformance.core.case import Change as DeclaredChange
from conformance.core.status import (
    BROKEN,
    KNOWN_ISSUE_ABSENT,
    KNOWN_ISSUE_CHANGED,
    KNOWN_ISSUE_PRESENT,
    Status,
    describe,
)
from conformance.core.versions import DOCUMENTED_JAX, direction, release_tuple
from conformance.decide.commits import BuildCommits, compare_url
from conformance.errors import ConformanceError
from conformance.results.versions import is_exactly, version_order
from conformance.results.merge import Conflict, merge_files
from conformance.report.conditions import MISCOMPILE_CASE, cpu_conditions
from conformance.results.schema import CellResult, ResultFile

NOT_RUN = "not run"
COMPACT_FROM_VERSIONS = 12
# One glyph per status, readable without colour, for the compact view (known-issue rows use the bug glyphs).
GLYPHS = {
    "conforms": "✓",
    "differs": "✗",
    "unsupported": "–",
    "error": "E",
    "crash": "!",
    "timeout": "T",
    "skipped": "s",
    "flaky": "~",
    NOT_RUN: "·",
}
BUG_PRESENT_GLYPH, BUG_ABSENT_GLYPH = "●", "○"
UNKNOWN_SECTION = "Cases not declared by this version of the suite"


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key of a version string: PEP 440 order (pre-releases and dev builds before their release, a local
    build after it); unparseable versions last, by text."""
    return version_order(version)


@dataclass
class Column:
    """One run: a JAX version on a platform, with its environment and its counts per status."""

    jax: str
    platform: str
    python: str
    jaxlib: str
    numpy: str
    launcher: str
    suite_version: str
    schema_version: int
    started_at: str
    finished_at: str
    sources: list[str]
    counts: dict[str, int] = field(default_factory=dict)
    printed_differs: int = 0  # cells whose printed output differs from the chapter's (any status)
    newest_in_series: bool = True  # the newest patch of its minor series among the report's columns
    origin: str = "the package index"  # where its jax came from, without any path of the machine (`origin_text`)
    conditions: str = ""  # the CPU conditions the chapter's miscompile may need (`report.conditions.cpu_conditions`)
    jax_git_hash: str = ""  # the commits its jax and jaxlib record (schema 4; '' when none is recorded)
    jaxlib_git_hash: str = ""
    build: str = ""  # "" for a release from an index; for a build of its own where it came from (`BUILD_KINDS`)
    build_kind: str = ""  # the source's kind for a build of its own (`python`, `wheels`, `pair`, `source`), else ""

    @property
    def label(self) -> str:
        """What names the column: its JAX version, and for a build of its own where it came from
        (`0.12.0.1 (existing interpreter)`), so a build never reads as the release of its version."""
        return f"{self.jax} ({self.build})" if self.build else self.jax

    @property
    def series(self) -> str:
        """The minor series, `0.8` for 0.8.0 to 0.8.3 (the version itself when it does not parse)."""
        try:
            major_minor = (release_tuple(self.jax) + (0, 0))[:2]
        except ValueError:
            return self.jax
        return f"{major_minor[0]}.{major_minor[1]}"

    @property
    def jaxlib_differs(self) -> bool:
        """Whether the release ran with a jaxlib of another number (jax 0.5.2 with jaxlib 0.5.1; a build with a
        local label, jax 0.12.0.1+corp.3, with the released jaxlib 0.12.0.1)."""
        return self.jaxlib not in ("?", self.jax)

    @property
    def conforming_percent(self) -> float | None:
        """Conforming cells as a share of the cells with a result, not counting skipped ones."""
        counted = sum(n for word, n in self.counts.items() if word not in (NOT_RUN, Status.SKIPPED.value))
        return 100.0 * self.counts.get(Status.CONFORMS.value, 0) / counted if counted else None

    @property
    def conforming_text(self) -> str:
        """`91.7%`, or `–` when nothing counts."""
        share = self.conforming_percent
        return "–" if share is None else f"{share:.1f}".rstrip("0").rstrip(".") + "%"

    @property
    def quoted_version(self) -> str:
        """The version, shell-quoted for a command line."""
        return shlex.quote(self.jax)

    @property
    def run_target(self) -> str:
        """How `run` names this column's JAX: `--jax V` for a release; for a build of its own the option of its kind
        (`--python PYTHON`, `--wheels WHEELS_DIR`, `--pair JAX:JAXLIB`), never `--jax`, which would run the release of
        its version; a version with a local label and no recorded kind is a folder of wheels, which no index has."""
        if self.build_kind == "pair":
            return f"--pair {shlex.quote(f'{self.jax}:{self.jaxlib}')}"
        if self.build_kind in ("python", "source"):  # an interpreter holding this build (a commit: bisect made one)
            return "--python PYTHON"
        if self.build_kind == "wheels" or "+" in self.jax:
            return "--wheels WHEELS_DIR"
        return f"--jax {self.quoted_version}"


@dataclass
class TableCell:
    """One cell of the table: the result of a row in a column (or its absence)."""

    status: str  # a Status value, or NOT_RUN
    word: str
    result: CellResult | None = None

    @property
    def css(self) -> str:
        """CSS class suffix."""
        return self.status.replace(" ", "-")

    @property
    def printed_differs(self) -> bool:
        """Whether what the chapter only prints (wording, reprs, counts) came out otherwise in this cell."""
        return self.result is not None and self.result.printed_differs

    @property
    def bug_state(self) -> str:
        """On a known-issue row, the bug's state (`present`, `absent`, `maybe-fixed`) that colours the cell; else ''."""
        return {KNOWN_ISSUE_PRESENT: "present", KNOWN_ISSUE_ABSENT: "absent", KNOWN_ISSUE_CHANGED: "maybe-fixed"}.get(
            self.word, ""
        )

    @property
    def glyph(self) -> str:
        """The compact view's one-character form: the status's glyph, or the bug's on a known-issue row."""
        if self.word == KNOWN_ISSUE_PRESENT:
            return BUG_PRESENT_GLYPH
        if self.word in (KNOWN_ISSUE_ABSENT, KNOWN_ISSUE_CHANGED):
            return BUG_ABSENT_GLYPH
        return GLYPHS.get(self.status, "?")


@dataclass
class ParamRow:
    """One row: a case parameter, its rows and its cells across the columns."""

    case_id: str
    param: str
    label: str
    rows: list[str]
    known_issue: bool  # a known issue on at least one column's platform
    cells: list[TableCell]
    known_at: list[bool] = field(default_factory=list)  # per column: a known issue on that column's platform
    discrepancy: str = ""  # the case's note on why the chapter's claim is false on the documented release
    declared_changes: tuple[DeclaredChange, ...] = ()  # the case's `Change`s that apply to this row

    def why(self, before: str, after: str) -> Explanation | None:
        """The declared explanation of this row's status change between JAX versions `before` and `after`."""
        return explain_change(self.declared_changes, before, after)

    @property
    def cell_id(self) -> str:
        """`case[param]`, or the case id."""
        return f"{self.case_id}[{self.param}]" if self.param else self.case_id

    @property
    def quoted_id(self) -> str:
        """The cell id, shell-quoted for `-k`."""
        return shlex.quote(self.cell_id)

    @property
    def changes(self) -> bool:
        """Whether the statuses differ across the columns that have a result."""
        return len({c.status for c in self.cells if c.status != NOT_RUN}) > 1


@dataclass
class CaseBlock:
    """A case: its claim once, and its parameters as rows."""

    case_id: str
    section: str
    claim: str
    notes: str
    source: str
    module: str
    probe: str
    env: dict[str, str]
    stdin: str | None
    params: list[ParamRow]

    @property
    def rows(self) -> list[str]:
        """Every row ID of the case."""
        return list(dict.fromkeys(r for p in self.params for r in p.rows))

    @property
    def known_issue(self) -> bool:
        """Whether any parameter is a known issue."""
        return any(p.known_issue for p in self.params)


@dataclass
class SectionBlock:
    """A chapter section and its cases."""

    heading: str
    cases: list[CaseBlock]


@dataclass(frozen=True)
class Explanation:
    """Why a cell's status differs between two versions: the declared changes between them, in release order."""

    changes: tuple[DeclaredChange, ...]

    @property
    def why(self) -> str:
        """The sentences, each with its release (`in 0.8.0: ...`) when there are several."""
        if len(self.changes) == 1:
            return self.changes[0].why
        return " ".join(f"{c.range_text[0].upper()}{c.range_text[1:]}: {c.why}" for c in self.changes)

    @property
    def evidence(self) -> str:
        """The evidence of each change, joined."""
        return "; ".join(c.evidence for c in self.changes)

    @property
    def text(self) -> str:
        """`why (evidence: ...)`, one line."""
        return f"{self.why} (evidence: {self.evidence})"


def explain_change(declared: Sequence[DeclaredChange], before: str, after: str) -> Explanation | None:
    """The declared explanation of a cell's status change from JAX version `before` to `after` (either order), or
    None when no declared change lies between them: an *unexplained* change.

    A change `since="S"` lies between when before < S <= after; `versions="L..H"` when the range (L, H] overlaps
    (before, after]. Versions compare in PEP 440 order.
    """
    low, high = sorted((before, after), key=version_key)
    if version_key(low) == version_key(high):
        return None
    found = []
    for change in declared:
        after_release, upto = change.bounds
        if version_key(low) < version_key(upto) and (
            not after_release or version_key(after_release) < version_key(high)
        ):
            if after_release or version_key(upto) <= version_key(high):
                found.append(change)
    if not found:
        return None
    return Explanation(tuple(sorted(found, key=lambda c: version_key(c.bounds[1]))))


@dataclass
class Change:
    """One cell that changed between two adjacent versions on one platform."""

    cell_id: str
    before: str
    after: str
    detail: str = ""
    status_changed: bool = False
    why: Explanation | None = None


@dataclass
class VersionStep:
    """What changed from one version to the next on a platform, grouped."""

    platform: str
    before: str
    after: str
    groups: dict[str, list[Change]]
    compared: int = 0  # cells with a result in both columns: 0 says nothing was compared, not that nothing changed

    @property
    def total(self) -> int:
        """How many cells changed."""
        return sum(len(v) for v in self.groups.values())


CHANGE_GROUPS = ("regressed", "fixed", "API added", "API removed", "changed", "printed output changed")


@dataclass
class Timeline:
    """Since when a cell behaves as documented, or when its known issue appeared and went away, per platform."""

    cell_id: str
    platform: str
    known_issue: bool
    text: str
    # Where the known issue appears between two adjacent stored releases: the jax-ml/jax compare link of their
    # commits (or release tags), '' otherwise.
    compare_url: str = ""


@dataclass
class Transition:
    """A status change of one row between two adjacent columns of a platform (columns without a result skipped),
    with its declared explanation, or None: unexplained."""

    cell_id: str
    platform: str
    before: str  # JAX versions
    after: str
    before_status: str
    after_status: str
    why: Explanation | None

    @property
    def text(self) -> str:
        """`0.7.2 → 0.8.0: differs → conforms: why (evidence: ...)`, or `... unexplained`."""
        head = f"{self.before} → {self.after}: {self.before_status} → {self.after_status}"
        return f"{head}: {self.why.text}" if self.why else f"{head}: unexplained (no declared Change)"


@dataclass
class DeprecatedApi:
    """A deprecated JAX API the chapter's probes touch: the JAX deprecation id (or the warning's module and
    category when JAX gave none), one message, the first release that warns on each platform, and the cells."""

    api: str
    category: str
    message: str
    first_warns: dict[str, str]  # platform -> the oldest JAX version of the report whose cell warned
    cells: list[str]


def deprecated_apis(columns: Sequence[Column], rows: Sequence[ParamRow]) -> list[DeprecatedApi]:
    """Every distinct deprecation the report's cells recorded (a cell's `warnings`), in the order first seen by
    column, with the first release that warns per platform. Warnings never change a status: this only lists."""
    found: dict[str, DeprecatedApi] = {}
    for i, column in enumerate(columns):
        for row in rows:
            result = row.cells[i].result
            for warned in result.warnings if result is not None else []:
                api = warned.get("deprecation") or f"{warned.get('module') or '?'}: {warned.get('category') or '?'}"
                entry = found.setdefault(
                    api, DeprecatedApi(api, warned.get("category", ""), warned.get("message", ""), {}, [])
                )
                known = entry.first_warns.get(column.platform)
                if known is None or version_key(column.jax) < version_key(known):
                    entry.first_warns[column.platform] = column.jax
                if row.cell_id not in entry.cells:
                    entry.cells.append(row.cell_id)
    return list(found.values())


@dataclass
class Discrepancy:
    """A row whose asserted facts differ on the documented release, on a platform the chapter covers: the chapter is
    wrong there, or the behaviour depends on something it does not say."""

    cell_id: str
    rows: list[str]
    claim: str
    platform: str
    jax: str
    result: CellResult
    note: str  # the case's measured reason; empty when nobody has explained it yet


@dataclass
class ReportModel:
    """Everything the report shows."""

    columns: list[Column]
    sections: list[SectionBlock]
    steps: list[VersionStep]
    timelines: list[Timeline]
    conflicts: list[Conflict]
    discrepancies: list[Discrepancy] = field(default_factory=list)
    transitions: list[Transition] = field(default_factory=list)
    deprecations: list[DeprecatedApi] = field(default_factory=list)

    def compare(self, before: str, after: str) -> list[VersionStep]:
        """What changed from the column of JAX `before` to the column of `after`, per platform that has both (any
        two columns, not only neighbours; each status change with the why that spans them). `ConformanceError`
        naming the versions there are when a platform has neither pair. A version names the release's column; a
        build of its own is named by its label (`0.12.0.1 (existing interpreter)`)."""
        steps = []
        for platform in self.platforms:
            at = {c.label: i for i, c in enumerate(self.columns) if c.platform == platform}
            if before in at and after in at:
                steps.append(_step(self.columns, self.param_rows, at[before], at[after]))
        if not steps:
            shown = ", ".join(dict.fromkeys(c.label for c in self.columns)) or "none"
            raise ConformanceError(
                f"--compare {before} {after}: the report has no column of both on one platform; "
                f"its versions are {shown}"
            )
        return steps

    @property
    def unexplained(self) -> list[Transition]:
        """The status changes that no declared `Change` explains."""
        return [t for t in self.transitions if t.why is None]

    @property
    def versions(self) -> list[tuple[str, list[int]]]:
        """Each JAX version with the indices of its columns (one per platform)."""
        grouped: dict[str, list[int]] = {}
        for i, column in enumerate(self.columns):
            grouped.setdefault(column.jax, []).append(i)
        return list(grouped.items())

    @property
    def platforms(self) -> list[str]:
        """Every platform, in order."""
        return sorted({c.platform for c in self.columns})

    @property
    def series(self) -> list[tuple[str, list[int]]]:
        """Each minor series with the indices of its columns, in column order (a header group in the table)."""
        grouped: dict[str, list[int]] = {}
        for i, column in enumerate(self.columns):
            grouped.setdefault(column.series, []).append(i)
        return list(grouped.items())

    @property
    def compact(self) -> bool:
        """Whether the table opens in its compact view: more than 12 version columns."""
        return len(self.versions) > COMPACT_FROM_VERSIONS

    @property
    def param_rows(self) -> list[ParamRow]:
        """Every row, section after section."""
        return [p for s in self.sections for c in s.cases for p in c.params]


def launch_summary(last_run: str, cells: Iterable[CellResult]) -> str:
    """How the column's cells were started: the last run's launcher, then how many cells each launcher ran
    (a merged file holds cells of several runs, reused ones included)."""
    counts = Counter(cell.launcher for cell in cells if cell.launcher)
    mix = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
    return f"{mix} (last run: {last_run or '?'})" if mix else (last_run or "?")


def _column(files: Sequence[ResultFile], cells: Mapping[str, CellResult]) -> Column:
    header = files[-1].header
    kind = str((header.source or {}).get("kind") or "index")
    return Column(
        jax=header.jax,
        platform=header.platform,
        python=header.python or "?",
        jaxlib=header.jaxlib or "?",
        numpy=header.numpy or "?",
        launcher=launch_summary(header.launcher, cells.values()),
        suite_version=header.suite_version or "?",
        schema_version=header.schema_version,
        # a file that recorded no time (a downstream suite's) leaves the others' times as they are
        started_at=min((f.header.started_at for f in files if f.header.started_at), default=""),
        finished_at=max((f.header.finished_at for f in files if f.header.finished_at), default=""),
        sources=[f.source.replace("\\", "/").rsplit("/", 1)[-1] for f in files],
        origin=origin_text(header.source),
        conditions=cpu_conditions(next((c.details for c in cells.values() if c.case == MISCOMPILE_CASE), None)),
        build=BUILD_KINDS.get(kind, ""),
        build_kind=kind if kind in BUILD_KINDS else "",
        jax_git_hash=header.jax_git_hash,
        jaxlib_git_hash=header.jaxlib_git_hash,
    )


BUILD_KINDS = {
    "python": "existing interpreter",
    "wheels": "wheel files",
    "pair": "jax/jaxlib pair",
    "source": "jax commit",
}


def origin_text(source: Mapping[str, Any]) -> str:
    """Where a run's jax came from, for a reader: an index's host, the wheel files' names and short hashes, or "an
    existing interpreter". Never a path of the machine that ran it (an interpreter's path is left out), nor an
    index URL's credentials or path."""
    kind = source.get("kind") or "index"
    if kind == "python":
        return "an existing interpreter (not built by the suite)"
    if kind == "wheels":
        wheels = [w for w in source.get("wheels") or [] if isinstance(w, Mapping)]
        named = ", ".join(f"{w.get('name')} (sha256 {str(w.get('sha256'))[:12]})" for w in wheels)
        return f"wheel files {named or '(none recorded)'}"
    url = str(source.get("index_url") or "")
    host = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    return f"the package index {host}" if host else "the package index"


def _word(result: CellResult | None, known_issue: bool, jax_version: str) -> TableCell:
    if result is None:
        return TableCell(NOT_RUN, NOT_RUN)
    word = describe(result.status, known_issue, direction(jax_version))
    if result.observation_verdict and result.status in (Status.CRASH, Status.TIMEOUT):
        word += f" (observation {result.observation_verdict})"
    return TableCell(result.status.value, word, result)


def _printed_keys(*results: CellResult) -> set[str]:
    return {str(k) for r in results if isinstance(r.printed_expected, dict) for k in r.printed_expected}


def _asserted_part(observation: Any, printed: set[str]) -> Any:
    if not isinstance(observation, dict):
        return observation
    return {k: v for k, v in observation.items() if k not in printed}


def classify_change(before: CellResult, after: CellResult, known_issue: bool) -> str | None:
    """The group of a change between two versions of one cell, or None when nothing changed.

    A change of the printed facts alone (same status, same asserted facts) is "printed output changed".
    """
    printed = _printed_keys(before, after)
    if before.status == after.status:
        if _asserted_part(before.observation, printed) == _asserted_part(after.observation, printed):
            if before.observation == after.observation and before.printed_differs == after.printed_differs:
                return None
            return "printed output changed"
    b, a = before.status, after.status
    if b is Status.UNSUPPORTED and a is not Status.UNSUPPORTED:
        return "API added"
    if a is Status.UNSUPPORTED or (a is Status.DIFFERS and after.reason.startswith("removed:")):
        return "API removed"
    if a in BROKEN and b not in BROKEN:
        return "regressed"
    if known_issue:
        if b is Status.CONFORMS and a is Status.DIFFERS:
            return "fixed"
        if b is Status.DIFFERS and a is Status.CONFORMS:
            return "regressed"
    else:
        if b is not Status.CONFORMS and a is Status.CONFORMS:
            return "fixed"
        if b is Status.CONFORMS and a is not Status.CONFORMS:
            return "regressed"
    return "changed"


def _step(model_columns: list[Column], rows: list[ParamRow], left: int, right: int) -> VersionStep:
    """What changed from column `left` to column `right` (one platform), grouped, each status change with its why."""
    groups: dict[str, list[Change]] = {g: [] for g in CHANGE_GROUPS}
    compared = 0
    for row in rows:
        before, after = row.cells[left].result, row.cells[right].result
        if before is None or after is None:
            continue
        compared += 1
        group = classify_change(before, after, row.known_at[right])
        if group:
            detail = "observation changed" if group == "changed" and before.status == after.status else ""
            moved = before.status != after.status
            why = row.why(model_columns[left].jax, model_columns[right].jax) if moved else None
            groups[group].append(Change(row.cell_id, row.cells[left].word, row.cells[right].word, detail, moved, why))
    return VersionStep(
        model_columns[left].platform, model_columns[left].jax, model_columns[right].jax, groups, compared
    )


def _steps(model_columns: list[Column], rows: list[ParamRow]) -> list[VersionStep]:
    steps = []
    for platform in sorted({c.platform for c in model_columns}):
        indices = [i for i, c in enumerate(model_columns) if c.platform == platform]
        steps += [_step(model_columns, rows, left, right) for left, right in zip(indices, indices[1:])]
    return steps


def _transitions(columns: list[Column], rows: list[ParamRow]) -> list[Transition]:
    found = []
    for platform in sorted({c.platform for c in columns}):
        indices = [i for i, c in enumerate(columns) if c.platform == platform]
        for row in rows:
            measured = [i for i in indices if row.cells[i].result is not None]
            for left, right in zip(measured, measured[1:]):
                a, b = row.cells[left].status, row.cells[right].status
                if a != b:
                    found.append(
                        Transition(
                            row.cell_id,
                            platform,
                            columns[left].jax,
                            columns[right].jax,
                            a,
                            b,
                            row.why(columns[left].jax, columns[right].jax),
                        )
                    )
    return found


def _releases_between(before: str, after: str, releases: Sequence[str]) -> list[str]:
    """The releases of `releases` strictly between two versions, oldest first."""
    low, high = version_key(before), version_key(after)
    return sorted((r for r in releases if low < version_key(r) < high), key=version_key)


def change_point(before: str, after: str, releases: Sequence[str] | None, last_before: str) -> str:
    """Where a change happened, as exactly as the results allow: `in 0.8.0 (0.7.2 is the last release without it)`
    when no release between the two has no result, else the range and the releases that have none.

    `releases` are the releases the package index lists; without them, which releases lie between is unknown,
    and the range says so. `last_before` words the release before (`without it`, `that does not`).
    """
    if releases is None:
        return f"between {before} and {after} (releases between them, if any, have no result here)"
    untested = _releases_between(before, after, releases)
    if not untested:
        return f"in {after} ({before} is the last release {last_before})"
    return f"between {before} and {after} ({', '.join(untested)} {'has' if len(untested) == 1 else 'have'} no result)"


def _printed_part(result: CellResult) -> Any:
    keys = _printed_keys(result)
    return (
        {k: v for k, v in result.observation.items() if k in keys} if isinstance(result.observation, dict) else None,
        result.printed_differs,
    )


def appears_compare_url(before: Column, after: Column) -> str:
    """The jax-ml/jax compare link between two columns' jax commits (release tags where none is recorded)."""
    return compare_url(
        BuildCommits(before.jax, before.jaxlib, before.jax_git_hash, before.jaxlib_git_hash),
        BuildCommits(after.jax, after.jaxlib, after.jax_git_hash, after.jaxlib_git_hash),
    )


def _timeline(
    row: ParamRow, columns: list[Column], platform: str, releases: Sequence[str] | None = None
) -> Timeline | None:
    indices = [i for i, cell in enumerate(row.cells) if columns[i].platform == platform and cell.result is not None]
    if not indices:
        return None
    statuses = [(columns[i].jax, row.cells[i].result.status) for i in indices]  # type: ignore[union-attr]
    printed = [_printed_part(row.cells[i].result) for i in indices]  # type: ignore[arg-type]
    changed = next(
        (k for k in range(1, len(printed)) if printed[k] != printed[k - 1] and statuses[k][1] is statuses[k - 1][1]),
        None,
    )
    printed_text = (
        ""
        if changed is None
        else "; printed output changed "
        + change_point(statuses[changed - 1][0], statuses[changed][0], releases, "before it")
    )
    if any(row.known_at[i] for i in indices):
        compare = ""
        present = [s is Status.CONFORMS for _, s in statuses]
        if not any(present):
            text = f"the documented bug does not show in {statuses[0][0]}–{statuses[-1][0]}"
        else:
            first = present.index(True)
            appeared = (
                "appears " + change_point(statuses[first - 1][0], statuses[first][0], releases, "without it")
                if first
                else f"present since {statuses[0][0]} or earlier"
            )
            gone = next((i for i in range(first + 1, len(present)) if not present[i]), None)
            if (
                first
                and releases is not None
                and not _releases_between(statuses[first - 1][0], statuses[first][0], releases)
            ):
                compare = appears_compare_url(columns[indices[first - 1]], columns[indices[first]])
            text = appeared + (
                "; goes away " + change_point(statuses[gone - 1][0], statuses[gone][0], releases, "with it")
                if gone is not None
                else f"; still present in {statuses[-1][0]}"
            )
        return Timeline(row.cell_id, platform, True, text + printed_text, compare)
    conforming = [k for k, (_, s) in enumerate(statuses) if s is Status.CONFORMS]
    if not conforming:
        text = f"does not behave as documented in any tested version ({statuses[0][0]}–{statuses[-1][0]})"
    elif conforming[0] == 0:
        text = f"behaves as documented since {statuses[0][0]} or earlier"
    else:
        first = conforming[0]
        point = change_point(statuses[first - 1][0], statuses[first][0], releases, "that does not")
        text = (
            "behaves as documented from " + point[3:]
            if point.startswith("in ")
            else "starts to behave as documented " + point
        )
    if statuses[-1][1] is not Status.CONFORMS and conforming:
        text += f"; not in {statuses[-1][0]} ({statuses[-1][1].value})"
    return Timeline(row.cell_id, platform, False, text + printed_text)


ACCELERATOR_SUFFIXES = ("-cuda", "-rocm", "-tpu")


def chapter_covers(platform: str) -> bool:
    """Whether the chapter's claims are about `platform`: it documents the CPU backend (macOS arm64, and Linux x86
    where it says so), so every CPU platform; an accelerator platform is beyond what it says."""
    return not platform.endswith(ACCELERATOR_SUFFIXES)


def _discrepancies(columns: list[Column], rows: list[ParamRow], claims: Mapping[str, str]) -> list[Discrepancy]:
    found = []
    for row in rows:
        for column, cell in zip(columns, row.cells):
            result = cell.result
            # The documented release itself: a team's own build of it (`0.12.0.1+corp.3`) reads like it, but where
            # it differs, that is the build's change (listed under what changed), not the chapter's error.
            if (
                result is not None
                and result.status is Status.DIFFERS
                and is_exactly(column.jax, DOCUMENTED_JAX)
                and chapter_covers(column.platform)
            ):
                found.append(
                    Discrepancy(
                        row.cell_id,
                        row.rows,
                        claims.get(row.case_id, ""),
                        column.platform,
                        column.jax,
                        result,
                        row.discrepancy,
                    )
                )
    return found


def _is_final_release(version: str) -> bool:
    """Whether `version` is a plain release (no local label, pre-release or dev part); unparsable counts as one."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return True
    return not (parsed.local or parsed.is_prerelease or parsed.is_devrelease or parsed.is_postrelease)


def build_model(
    files: Iterable[ResultFile], cases: Iterable[Case], releases: Sequence[str] | None = None
) -> ReportModel:
    """The report model from result files (any number of versions, platforms and shards).

    `releases` (the JAX releases the package index lists) let "what changed" name the exact release where a row
    changed; without them it names the range of the two columns.
    """
    merged = sorted(merge_files(files), key=lambda m: (version_key(m.jax), m.platform))
    columns = [_column(m.files, m.cells) for m in merged]
    newest = {}
    for column in columns:  # sorted by version: the last final release of a series is its newest patch
        if _is_final_release(column.jax):
            newest[column.series] = column.jax
    for column in columns:  # a build of one's own (local label, pre-release, dev) always stays in view
        column.newest_in_series = newest.get(column.series) == column.jax or not _is_final_release(column.jax)
    declared = {c.id: c for c in cases}
    seen: dict[str, set[str]] = {}
    for run in merged:
        for cell in run.cells.values():
            seen.setdefault(cell.case, set()).add(cell.param)

    def param_row(case_id: str, param: str, label: str, rows: list[str], case: Case | None) -> ParamRow:
        cell_id = f"{case_id}[{param}]" if param else case_id
        results = [run.cells.get(cell_id) for run in merged]
        # Declared cases say where their known issue reproduces; for others, trust what the results recorded.
        known_at = [
            case.is_known_issue(param, run.platform)
            if case is not None
            else bool(result is not None and result.known_issue)
            for run, result in zip(merged, results)
        ]
        cells = [_word(result, known, run.jax) for run, result, known in zip(merged, results, known_at)]
        note = case.discrepancy_note(param) if case is not None else ""
        declared = case.changes_for(param) if case is not None else ()
        return ParamRow(case_id, param, label, rows, any(known_at), cells, known_at, note, declared)

    blocks: dict[str, list[CaseBlock]] = {}
    order = list(declared) + sorted(set(seen) - set(declared))
    for case_id in order:
        case = declared.get(case_id)
        if case is None:
            # Not declared here (a team's folder, or another version of the suite): the result files say what it is.
            reported = [r for run in merged for r in run.cells.values() if r.case == case_id]
            rows_of = {r.param: r.rows for r in reported}
            params = [param_row(case_id, p, "", rows_of.get(p, []), None) for p in sorted(seen[case_id])]
            for row in params:
                row.discrepancy = next((r.discrepancy for r in reported if r.param == row.param and r.discrepancy), "")
            described = next((r for r in reversed(reported) if r.heading), None)
            heading = described.heading if described else UNKNOWN_SECTION
            claim = described.claim if described else ""
            # No module or probe: the page offers no reproduction script for a case this suite does not declare.
            block = CaseBlock(case_id, heading, claim, "", "", "", "", {}, None, params)
        else:
            if case_id not in seen:
                continue
            params = [param_row(case_id, p.name, p.label, list(p.rows), case) for p in case.params]
            block = CaseBlock(
                case_id,
                case.heading,
                case.claim,
                case.notes,
                case.source(),
                case.probe.__module__,
                case.probe.__name__,
                dict(case.env),
                case.stdin,
                params,
            )
        blocks.setdefault(block.section, []).append(block)
    sections = [
        SectionBlock(h, blocks[h]) for h in sorted(blocks, key=lambda h: (h == UNKNOWN_SECTION, section_order(h)))
    ]
    rows = [p for s in sections for c in s.cases for p in c.params]
    for i, column in enumerate(columns):
        counts = {s.value: 0 for s in Status}
        counts[NOT_RUN] = 0
        for row in rows:
            counts[row.cells[i].status] = counts.get(row.cells[i].status, 0) + 1
        column.counts = counts
        column.printed_differs = sum(row.cells[i].printed_differs for row in rows)
    timelines = [
        t
        for row in rows
        for platform in sorted({c.platform for c in columns})
        for t in [_timeline(row, columns, platform, releases)]
        if t is not None
    ]
    claims = {block.case_id: block.claim for section in sections for block in section.cases}
    return ReportModel(
        columns,
        sections,
        _steps(columns, rows),
        timelines,
        [c for m in merged for c in m.conflicts],
        _discrepancies(columns, rows, claims),
        _transitions(columns, rows),
        deprecated_apis(columns, rows),
    )
