"""What the report shows of a chapter run as written: the data, from result files, for the HTML report to draw. Pure.

`chapter_views(runs)` gives one `ChapterView` per chapter and platform found in the merged runs
(`results.merge.merge_files`), holding:

- `grid`: the block × release grid (`ChapterGrid`): per block its heading, first code line, line and hash, and per
  release its status, the detail that decided it (the failed assert and its line, the exception and the first line
  of its message, the missing name), and the printed difference;
- `summaries`: per release, its counts in words that add up to its blocks (`0.9.2: 47 ran as written, 3 raised, 2
  skipped (of 52 blocks)`);
- `grid.title`: the chapter's own name, its first heading, as its cells record it;
- `since`: per block, since which release it runs as written (the oldest of the releases, up to the newest, on
  which it ran as written);
- `links`: per block, the probe cells and rows of its subsection (`§3.1` blocks ↔ the cases whose `subsection` is
  3.1, as their cells' `section` records it, and the cells that check a row of section 3.1 in the row list,
  `core/rows.tsv`), and back, per row;
- `disagreements`: every (block, release) whose status points the opposite way from the probes that cover it on
  that release: the block did not run as written (assert_failed, raised, timeout, crash) while every judged probe
  of its subsection conforms, or it ran as written while every judged probe differs (or is unsupported); with both
  sides' observations. Probes that ended in error, crash, timeout, skipped or flaky, and blocks skipped or
  `after_failure`, are not judged;
- `steps`: per pair of adjacent releases, the blocks whose status changed between them and those whose printed
  output changed alone (`block_steps`).

A printed difference is marked only on a block that ran as written (`ran`, `raised as documented`): a block that
raised, failed an assert or did not run printed only part of its output, or none, and its status already says so.

Links and disagreements are drawn for the chapter the suite's probes encode (`core.versions.DOCUMENTED_CHAPTER`)
only: another chapter numbers its sections its own way, so its grid, summaries and `since` stand alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from conformance.chapter.cells import HEADING_PREFIX, block_status, is_block_cell
from conformance.chapter.model import AS_WRITTEN, FAILED, NOT_JUDGED, BlockStatus, counted
from conformance.core.rowlist import load_rows
from conformance.core.status import Status
from conformance.core.versions import DOCUMENTED_CHAPTER
from conformance.results.merge import MergedRun
from conformance.results.schema import CellResult, ResultFile
from conformance.results.versions import version_order

_AS_WRITTEN_WORDS = frozenset(s.value for s in AS_WRITTEN)
_ORDER = {s.value: i for i, s in enumerate(BlockStatus)}


def _words(status: str) -> str:
    """A block status in words (`assert_failed` → `assert failed`); an unknown word as it is."""
    try:
        return BlockStatus(status).words
    except ValueError:
        return status.replace("_", " ")


BLOCK_BAD = FAILED  # a block that ran but not as written (raised otherwise and did not raise included)
PROBE_GOOD, PROBE_BAD = frozenset({Status.CONFORMS}), frozenset({Status.DIFFERS, Status.UNSUPPORTED})


@dataclass(frozen=True)
class GridCell:
    """One block on one release: its status word, what decided it, the printed difference (`-` shown, `+`
    printed), the stdout tail and its time; `cell` is the stored cell itself."""

    status: str
    detail: str
    printed_differs: bool
    printed_lines: tuple[str, ...]
    stdout_tail: str
    duration_s: float
    cell: CellResult


@dataclass(frozen=True)
class GridRow:
    """One block: its id, cell id, place (1-based index, line), heading, section, first code line and hash, and its
    cell per column label (a release's version; a build of its own as `0.12.0.1 (wheels-1a2b3c4d5e)`)."""

    block: str
    cell_id: str
    index: int
    line: int
    heading: str
    section: str
    first_code: str
    hash: str
    cells: dict[str, GridCell]
    form: str = ""  # the page's form (`notebook`: its `line` is the cell's number, as `--blocks` says it)


@dataclass(frozen=True)
class ChapterGrid:
    """The block × release grid of one chapter on one platform (columns in PEP 440 order)."""

    chapter: str
    platform: str
    versions: tuple[str, ...]
    rows: tuple[GridRow, ...]
    title: str = ""  # the chapter's first heading ('' where its cells do not record one: name it by `chapter`)
    origin: str = ""  # where a listed page comes from: `jax-ml/jax@8c0c43c0:docs/debugging.md`


@dataclass(frozen=True)
class ReleaseSummary:
    """One release's line, in the words the terminal uses too (`chapter.model.counted`): `0.12.0.1: 89 of 90 blocks
    run as written (1 skipped; 1 raised)`; `ran` counts the blocks run as written (ran, raised as documented),
    `judged` those neither skipped nor listings, `total`
    every block, `counts` every status."""

    version: str
    ran: int  # run as written: ran, or raised as the page states
    judged: int  # every block but the skipped ones and the listings
    skipped: int
    printed_differs: int
    counts: dict[str, int]
    total: int = 0

    @property
    def parts(self) -> list[str]:
        """Each status's count in words, the blocks run as written first: `89 ran as written`, `1 raised`."""
        ordered = sorted(
            self.counts.items(), key=lambda item: (item[0] not in _AS_WRITTEN_WORDS, _ORDER.get(item[0], 99))
        )
        return [f"{n} {_words(status)}" for status, n in ordered if n]

    @property
    def text(self) -> str:
        """The line a reader sees."""
        return f"{self.version}: {counted(self.counts, self.printed_differs)}"


@dataclass(frozen=True)
class Since:
    """Since which release a block runs as written: `version` (the oldest release, up to the newest, on which it
    ran), `all_measured` when that is the oldest release measured ("≤ 0.4.38"); `version` '' when it does not run
    as written on the newest release."""

    version: str
    all_measured: bool

    @property
    def text(self) -> str:
        """`since 0.6.0`, `≤0.4.38 (every release measured)`, or `not on the newest release`."""
        if not self.version:
            return "not on the newest release"
        return f"≤{self.version} (every release measured)" if self.all_measured else f"since {self.version}"


@dataclass(frozen=True)
class ProbeLink:
    """A probe cell of a block's subsection: its id, its rows and its status per column label."""

    cell_id: str
    rows: tuple[str, ...]
    statuses: dict[str, str]


@dataclass(frozen=True)
class ProbeSide:
    """A probe's observation beside a block in a disagreement: its cell, status, and what it observed (its diff
    where it differs, else its asserted facts), as short text."""

    cell_id: str
    status: str
    observed: str


@dataclass(frozen=True)
class Disagreement:
    """A (block, release) whose status points the opposite way from the probes covering it, with both sides."""

    block: str
    version: str
    block_status: str
    block_detail: str
    probes_say: str  # "every probe conforms" or "every probe differs"
    probes: tuple[ProbeSide, ...]

    @property
    def text(self) -> str:
        """One line for a person."""
        what = _words(self.block_status) + (f" ({self.block_detail})" if self.block_detail else "")
        return (
            f"On {self.version}, block {self.block} {what}, while {self.probes_say} of its subsection: "
            + "; ".join(
                f"{p.cell_id} {p.status} ({p.observed})" if p.observed else f"{p.cell_id} {p.status}"
                for p in self.probes
            )
            + "."
        )


@dataclass(frozen=True)
class BlockChange:
    """One block between two adjacent releases: its status word on each (equal when only its printed output's mark
    changed)."""

    block: str
    before: str
    after: str
    printed: bool = False  # whether its printed output differs from the page's on the later release


@dataclass(frozen=True)
class BlockStep:
    """Two adjacent releases of a grid: the blocks whose status changed (`changes`), and those whose status stayed
    and whose printed-output mark came or went (`printed`)."""

    before: str
    after: str
    changes: tuple[BlockChange, ...]
    printed: tuple[BlockChange, ...]


@dataclass(frozen=True)
class ChapterView:
    """Everything the report shows of one chapter on one platform (see the module's docstring)."""

    grid: ChapterGrid
    summaries: tuple[ReleaseSummary, ...]
    since: dict[str, Since]
    links: dict[str, tuple[ProbeLink, ...]]
    blocks_of_row: dict[str, tuple[str, ...]]
    disagreements: tuple[Disagreement, ...] = field(default_factory=tuple)
    steps: tuple[BlockStep, ...] = field(default_factory=tuple)


def _label(run: MergedRun) -> str:
    return run.jax if not run.build else f"{run.jax} ({run.build})"


def _detail(cell: CellResult, key: str, default: object = "") -> object:
    return cell.details.get(key, default) if isinstance(cell.details, dict) else default


def chapter_of(cell: CellResult) -> str:
    """The chapter a block cell belongs to (its name, as the chapter command was given the file)."""
    named = _detail(cell, "chapter")
    return (
        str(named)
        if named
        else cell.heading[len(HEADING_PREFIX) :]
        if cell.heading.startswith(HEADING_PREFIX)
        else cell.case.split("/", 1)[1].split(".", 1)[0]
    )


def chapter_grid(runs: Sequence[MergedRun], chapter: str, platform: str) -> ChapterGrid:
    """The grid of `chapter` on `platform` from the merged runs (rows in the newest column's block order)."""
    columns = sorted((r for r in runs if r.platform == platform), key=lambda r: (version_order(r.jax), r.build))
    rows: dict[str, dict] = {}
    named = {"title": "", "origin": ""}
    for run in columns:
        label = _label(run)
        for cell in run.cells.values():
            if not is_block_cell(cell) or chapter_of(cell) != chapter:
                continue
            block = cell.case.rsplit(".", 1)[1]
            status = block_status(cell)
            named.update({k: str(_detail(cell, k)) for k in named if _detail(cell, k)})
            row = rows.setdefault(block, {"cells": {}})
            row.update(
                cell_id=cell.cell_id,
                index=int(_detail(cell, "index", 0) or 0),
                line=int(_detail(cell, "line", 0) or 0),
                heading=str(_detail(cell, "heading")),
                section=str(_detail(cell, "section")),
                first_code=str(_detail(cell, "first_code")),
                hash=str(_detail(cell, "hash")),
                form=str(_detail(cell, "form")),
            )
            ran = status in AS_WRITTEN  # a printed difference is a mark on a block that ran (module docstring)
            row["cells"][label] = GridCell(
                status.value if status else cell.status.value,
                cell.reason,
                cell.printed_differs and ran,
                tuple(_detail(cell, "printed_lines", ()) or ()) if ran else (),
                cell.stdout_tail,
                cell.duration_s,
                cell,
            )
    labels = tuple(_label(r) for r in columns if any(_label(r) in row["cells"] for row in rows.values()))
    ordered = sorted(rows.items(), key=lambda item: (item[1]["index"], item[1]["line"], item[0]))
    return ChapterGrid(
        chapter,
        platform,
        labels,
        tuple(GridRow(block=block, **row) for block, row in ordered),
        named["title"],
        named["origin"],
    )


def release_summaries(grid: ChapterGrid) -> tuple[ReleaseSummary, ...]:
    """Per release of the grid, how many blocks ran as written, and each other status's count (see `ReleaseSummary`)."""
    found = []
    for version in grid.versions:
        statuses = [row.cells[version].status for row in grid.rows if version in row.cells]
        counts = {s: statuses.count(s) for s in dict.fromkeys(statuses)}
        skipped = counts.get(BlockStatus.SKIPPED.value, 0)
        printed = sum(row.cells[version].printed_differs for row in grid.rows if version in row.cells)
        ran = sum(counts.get(status.value, 0) for status in AS_WRITTEN)
        judged = sum(n for s, n in counts.items() if s not in {w.value for w in NOT_JUDGED})
        found.append(ReleaseSummary(version, ran, judged, skipped, printed, counts, len(statuses)))
    return tuple(found)


def block_steps(grid: ChapterGrid) -> tuple[BlockStep, ...]:
    """Per pair of adjacent releases of the grid, its blocks' status changes and printed-output changes alone (a
    block measured on only one of the two is in neither)."""
    steps = []
    for before, after in zip(grid.versions, grid.versions[1:]):
        changes, printed = [], []
        for row in grid.rows:
            old, new = row.cells.get(before), row.cells.get(after)
            if old is None or new is None:
                continue
            if old.status != new.status:
                changes.append(BlockChange(row.block, old.status, new.status, new.printed_differs))
            elif old.printed_differs != new.printed_differs:
                printed.append(BlockChange(row.block, old.status, new.status, new.printed_differs))
        steps.append(BlockStep(before, after, tuple(changes), tuple(printed)))
    return tuple(steps)


def runs_since(grid: ChapterGrid) -> dict[str, Since]:
    """Per block, since which release it runs as written (see `Since`)."""
    since = {}
    for row in grid.rows:
        measured = [v for v in grid.versions if v in row.cells]
        streak = []
        for version in reversed(measured):
            if row.cells[version].status not in {s.value for s in AS_WRITTEN}:
                break
            streak.append(version)
        since[row.block] = Since(streak[-1] if streak else "", bool(streak) and len(streak) == len(measured))
    return since


_RANGE = re.compile(r"^(.*?)(\d+)\s*[–-]\s*(?:\1)?(\d+)$")


def sections_of(section: str) -> set[str]:
    """The subsections a probe cell's `section` covers: `§3.1` → {3.1}; a range `§Ex2–4` → {Ex2, Ex3, Ex4}."""
    text = section.lstrip("§").strip()
    found = _RANGE.match(text)
    if found:
        prefix, low, high = found.group(1), int(found.group(2)), int(found.group(3))
        if low <= high <= low + 50:
            return {f"{prefix}{n}" for n in range(low, high + 1)}
    return {text} if text else set()


def row_sections() -> dict[str, str]:
    """Each row's section in the project's row list (`conformance/core/rows.tsv`, from behaviours.md)."""
    return {row.id: row.section for row in load_rows()}


def _probes_by_section(
    runs: Iterable[MergedRun], platform: str, sections_of_rows: Mapping[str, str]
) -> dict[str, dict[str, dict[str, CellResult]]]:
    """section → probe cell id → column label → cell, for the probe cells of `platform`: a cell covers the
    subsection its case names and the sections of the rows it checks."""
    found: dict[str, dict[str, dict[str, CellResult]]] = {}
    for run in runs:
        if run.platform != platform:
            continue
        for cell in run.cells.values():
            if is_block_cell(cell):
                continue
            covered = sections_of(cell.section).union(
                *(sections_of(sections_of_rows[row]) for row in cell.rows if row in sections_of_rows)
            )
            for section in covered:
                found.setdefault(section, {}).setdefault(cell.cell_id, {})[_label(run)] = cell
    return found


def probe_links(
    grid: ChapterGrid, runs: Sequence[MergedRun], sections_of_rows: Mapping[str, str] | None = None
) -> tuple[dict[str, tuple[ProbeLink, ...]], dict[str, tuple[str, ...]]]:
    """Per block, the probe cells of its subsection (their rows and statuses); per row, the blocks linked to it.
    `sections_of_rows` (row → section; default the project's row list) links a cell through the rows it checks."""
    by_section = _probes_by_section(
        runs, grid.platform, row_sections() if sections_of_rows is None else sections_of_rows
    )
    links: dict[str, tuple[ProbeLink, ...]] = {}
    back: dict[str, list[str]] = {}
    for row in grid.rows:
        probes = by_section.get(row.section, {}) if row.section else {}
        found = []
        for cell_id, by_label in sorted(probes.items()):
            rows = tuple(dict.fromkeys(r for cell in by_label.values() for r in cell.rows))
            found.append(ProbeLink(cell_id, rows, {label: cell.status.value for label, cell in by_label.items()}))
            for probe_row in rows:
                back.setdefault(probe_row, []).append(row.block)
        links[row.block] = tuple(found)
    return links, {r: tuple(dict.fromkeys(blocks)) for r, blocks in back.items()}


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _observed(cell: CellResult) -> str:
    """What a probe observed, in words: for a cell that differs, each fact that differs (`mentions_tracer is false
    where the chapter says true`); for one that conforms, that every fact it asserts holds."""
    if cell.diff:
        parts = [
            f"{d.get('path')} is {_short(d.get('observed'))} where the chapter says {_short(d.get('expected'))}"
            if d.get("kind") not in ("missing", "unexpected")
            else f"{d.get('path')} {'is missing' if d.get('kind') == 'missing' else 'is not documented'}"
            for d in cell.diff[:3]
        ]
        more = f" and {len(cell.diff) - 3} more" if len(cell.diff) > 3 else ""
        return "; ".join(parts) + more
    if cell.status is Status.CONFORMS:
        return "every fact it asserts holds"
    # A cell that differs without a fact-level diff (a plain observation) still says what it observed.
    return (cell.reason or (repr(cell.observation) if cell.observation is not None else ""))[:300]


def disagreements(
    grid: ChapterGrid, runs: Sequence[MergedRun], sections_of_rows: Mapping[str, str] | None = None
) -> tuple[Disagreement, ...]:
    """Every (block, release) of the grid pointing the opposite way from its subsection's probes (see the module)."""
    by_section = _probes_by_section(
        runs, grid.platform, row_sections() if sections_of_rows is None else sections_of_rows
    )
    found = []
    for row in grid.rows:
        probes = by_section.get(row.section, {}) if row.section else {}
        for version, cell in row.cells.items():
            try:
                status = BlockStatus(cell.status)
            except ValueError:
                continue
            if status not in BLOCK_BAD and status not in AS_WRITTEN:
                continue
            judged = [
                (cell_id, by_label[version])
                for cell_id, by_label in sorted(probes.items())
                if version in by_label and by_label[version].status in PROBE_GOOD | PROBE_BAD
            ]
            if not judged:
                continue
            if status in BLOCK_BAD and all(p.status in PROBE_GOOD for _, p in judged):
                says = "every probe conforms"
            elif status in AS_WRITTEN and all(p.status in PROBE_BAD for _, p in judged):
                says = "every probe differs"
            else:
                continue
            found.append(
                Disagreement(
                    row.block,
                    version,
                    cell.status,
                    cell.detail,
                    says,
                    tuple(ProbeSide(cell_id, p.status.value, _observed(p)) for cell_id, p in judged),
                )
            )
    return tuple(found)


def chapters_in(runs: Iterable[MergedRun]) -> list[tuple[str, str]]:
    """The (chapter, platform) pairs whose blocks the runs hold, in order of first appearance."""
    return list(
        dict.fromkeys(
            (chapter_of(cell), run.platform) for run in runs for cell in run.cells.values() if is_block_cell(cell)
        )
    )


def chapter_views(
    runs: Sequence[MergedRun], sections_of_rows: Mapping[str, str] | None = None, documented: str = DOCUMENTED_CHAPTER
) -> list[ChapterView]:
    """One view per chapter and platform found in `runs` (see the module's docstring); `sections_of_rows` as for
    `probe_links`. Only the chapter named `documented` (the one the suite's probes encode) is linked to the probes
    and judged against them: another chapter's "3.1" is not the suite's §3.1, so its grid and summaries stand alone.
    The documented chapter comes first, the others in the order the runs hold them."""
    rows = row_sections() if sections_of_rows is None else sections_of_rows
    views = []
    found_chapters = chapters_in(runs)
    for chapter, platform in sorted(
        found_chapters, key=lambda pair: (pair[0] != documented, found_chapters.index(pair))
    ):
        grid = chapter_grid(runs, chapter, platform)
        if chapter == documented:
            links, back = probe_links(grid, runs, rows)
            found = disagreements(grid, runs, rows)
        else:
            links, back, found = {}, {}, ()
        views.append(
            ChapterView(grid, release_summaries(grid), runs_since(grid), links, back, found, block_steps(grid))
        )
    return views


def without_blocks(files: Iterable[ResultFile]) -> list[ResultFile]:
    """The result files with their chapters' block cells left out: what the report's main table, overview and
    outputs for other tools read (a block is shown in its chapter's view, `chapter_views`, not as a probe)."""
    kept = []
    for result_file in files:  # a file of blocks only stays, as a column without cells
        probes = [cell for cell in result_file.cells if not is_block_cell(cell)]
        kept.append(replace(result_file, cells=probes) if len(probes) != len(result_file.cells) else result_file)
    return kept
