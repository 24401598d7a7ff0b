"""`jax-conformance chapter`: a chapter read, listed, or run on releases; the work behind the CLI, as typed outcomes.

`run_chapter(request, builder, on_line)` reads the chapter and its skip list, checks every release first (an unknown
version or no fitting Python is one error before any work), then for each release answers the whole chapter from
stored results (`store.stored_blocks`) or prepares its environment, runs the blocks in one process
(`session.run_blocks`), judges them (`statuses.block_outcomes`), stores them as cells (`store.store_blocks`), and
writes the public JSON when asked (`publicjson`). With `bisect` it searches the releases between two ends for the
first where one block changes, running (or answering from storage) only the releases the search tests
(`bisecting`). With `--pages LIST --docs CHECKOUT`, `run_pages` runs each page of a list from a local checkout
(`pages`) through the same work, one chapter after the other. It never prints: `on_line` gets the progress lines,
and the outcome the summary lines.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from conformance.jsonout import write_json
from conformance.chapter.bisecting import bisect_block, find_block
from conformance.chapter.cells import block_cell, block_keys, block_status, chapter_ident, runner_digest
from conformance.chapter.interactive import interactive_call
from conformance.chapter.listing import block_lines
from conformance.chapter.model import AS_WRITTEN, BlockStatus, Chapter, counted
from conformance.chapter.pages import locate_pages, read_pages
from conformance.chapter.publicjson import chapter_json, dumps
from conformance.chapter.read import chapter_inputs, read_chapter, read_runs, read_setup, read_skip_list
from conformance.chapter.runner import block_limit_missing
from conformance.chapter.session import run_blocks
from conformance.chapter.skiplist import block_limits, listings_to_run, skip_reasons
from conformance.chapter.statuses import block_outcomes
from conformance.chapter.store import (
    as_before,
    describe,
    digest_of,
    probe_snapshot,
    run_header,
    store_blocks,
    stored_blocks,
    utc_now,
)
from conformance.engine.matrix import host_platform
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult

DEFAULT_TIMEOUT_S = 300.0  # a block can be a whole training loop: longer than a probe's 120 s
LETTER = {
    BlockStatus.RAN: ".",
    BlockStatus.ASSERT_FAILED: "A",
    BlockStatus.RAISED: "R",
    BlockStatus.TIMEOUT: "T",
    BlockStatus.CRASH: "C",
    BlockStatus.SKIPPED: "s",
    BlockStatus.AFTER_FAILURE: "a",
    BlockStatus.RAISED_AS_DOCUMENTED: "e",
    BlockStatus.RAISED_OTHERWISE: "O",
    BlockStatus.DID_NOT_RAISE: "N",
    BlockStatus.LISTING: "l",
    BlockStatus.INTERACTIVE: "i",
}


def bisect_of(path: Path | None, block: str | None, good: str | None, bad: str | None) -> tuple[str, str, str] | None:
    """`--bisect BLOCK --good G --bad V` as one triple (None when none of the three is given), or a one-line
    `ConformanceError` when the chapter or one of the three is missing."""
    if path is None:
        raise ConformanceError(
            "name the chapter to run (jax-conformance chapter FILE), or a list of pages (--pages LIST --docs CHECKOUT)"
        )
    if not (block or good or bad):
        return None
    if not (block and good and bad):
        raise ConformanceError("--bisect BLOCK needs --good VERSION and --bad VERSION")
    return block, good, bad


@dataclass(frozen=True)
class ChapterRequest:
    """What `chapter` was asked: the chapter file, the releases, the skip list and map file (None: found beside the
    chapter or in the project's chapters/), the results folder, the JSON output, the block time limit, and whether
    to list the blocks only or to rerun releases whose stored results would answer."""

    path: Path
    versions: tuple[str, ...] = ()
    skip: Path | None = None
    map: Path | None = None
    results: Path | None = None
    json_path: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    blocks_only: bool = False
    rerun: bool = False
    bisect: tuple[str, str, str] | None = None  # (block, good release, bad release): `--bisect B --good G --bad V`
    # `--with PACKAGE`: what the page imports besides jax, installed in an environment of its own beside each
    # release's (`envs.builder.page_packages` checks them); part of each block's key, so never mixed with a plain run
    with_packages: tuple[str, ...] = ()
    # a page of a list (`--pages`): its chapter's name, the path it is shown under (its path in the repository),
    # where it comes from; and whether to look for a skip list and map file beside it or in chapters/ (not for one)
    name: str | None = None
    shown_path: str | None = None
    origin: str = ""
    companions: bool = True

    def inputs(self) -> list[Path]:
        """Every file the command reads, given or found (the chapter, its skip list and map file): no output may
        name one."""
        return chapter_inputs(self.path, self.skip, self.map)


@dataclass
class ChapterOutcome:
    """What `chapter` did: the chapter, the cells of each release (by block id), the lines to print at the end,
    the result files written, and the releases answered from storage."""

    chapter: Chapter
    limits: dict[str, float] = field(default_factory=dict)  # the blocks' own time limits, by id (the skip list's)
    run_listings: set[str] = field(default_factory=set)  # the listings the skip list's [[run]] entries run, by id
    cells: dict[str, dict[str, CellResult]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)


def summary_line(version: str, cells: dict[str, CellResult], seconds: float, source: str) -> str:
    """`jax 0.12.0.1: 85 of 90 blocks run as written (1 skipped; 3 assert failed, 2 raised; 7 printed differently) in
    61.2s`."""
    statuses = [block_status(cell) for cell in cells.values()]
    words = [s.value if s else cell.status.value for s, cell in zip(statuses, cells.values())]
    printed = sum(cell.printed_differs and status in AS_WRITTEN for status, cell in zip(statuses, cells.values()))
    said = counted({word: words.count(word) for word in dict.fromkeys(words)}, printed)
    return f"jax {version}: {said} {source} in {seconds:.1f}s"


MAX_TIMEOUT_S = 86400.0  # a day: the bound a skip list's [[limit]] has too; past it, setitimer overflows


def check_timeout(timeout_s: float) -> None:
    """A one-line `ConformanceError` unless `--timeout` is a number of seconds above 0 and at most a day (1e10 was
    accepted, and every block was then stored as `raised OverflowError`)."""
    if not 0 < timeout_s <= MAX_TIMEOUT_S:  # NaN fails it too
        raise ConformanceError(
            f"--timeout takes a number of seconds above 0 and at most {MAX_TIMEOUT_S:g} (a day), not {timeout_s:g}"
        )


def _require_block_limit() -> None:
    if block_limit_missing():
        raise ConformanceError(block_limit_missing())


def _check_versions(versions: Sequence[str], builder: Any) -> None:
    if not versions:
        raise ConformanceError(
            "name the releases to run the chapter on (--jax VERSION or --matrix NAME), or list its blocks with --blocks"
        )
    for version in versions:
        builder.interpreter_for(version)  # unknown version, no Python that fits: one line, before any work


def run_chapter(
    request: ChapterRequest, builder: Any, on_line: Callable[[str], None] = lambda line: None
) -> ChapterOutcome:
    """See the module's docstring."""
    check_timeout(request.timeout_s)
    chapter = read_chapter(
        request.path,
        request.map,
        name=request.name,
        shown_path=request.shown_path,
        origin=request.origin,
        companions=request.companions,
    )
    if request.companions or request.skip is not None:
        skip_file, entries, limit_entries = read_skip_list(request.path, request.skip)
    else:
        skip_file, entries, limit_entries = None, (), ()
    reasons, unmatched = skip_reasons(chapter.blocks, entries)
    limits, unmatched_limits = block_limits(chapter.blocks, limit_entries)
    run_listings, unmatched_runs = listings_to_run(chapter.blocks, read_runs(skip_file))
    setup, why = read_setup(skip_file)
    if setup:
        chapter = replace(chapter, setup=setup)
        on_line(f"note: {skip_file}: [setup] runs before the first block: {why}")
    outcome = ChapterOutcome(chapter, limits=limits, run_listings=run_listings)
    for entry in [*unmatched, *unmatched_limits, *unmatched_runs]:
        on_line(
            f"note: {skip_file}: the entry {entry.describe()} names no block of {request.path.name} (edited "
            f"blocks have new hashes: see --blocks)"
        )
    if request.blocks_only:
        outcome.lines = block_lines(chapter, reasons, run_listings)
        return outcome
    _require_block_limit()
    if request.bisect is not None:
        name, good, bad = request.bisect
        block = find_block(chapter, name)

        def run_release(version: str) -> dict[str, CellResult]:
            if version not in outcome.cells:
                outcome.cells[version] = _one_release(request, chapter, reasons, version, builder, on_line, outcome)
            return outcome.cells[version]

        outcome.lines += bisect_block(chapter, block, good, bad, builder, run_release, on_line)[1]
    else:
        _check_versions(request.versions, builder)
        for version in request.versions:
            outcome.cells[version] = _one_release(request, chapter, reasons, version, builder, on_line, outcome)
    if request.json_path is not None:
        data = chapter_json(chapter, outcome.cells, host_platform())
        outcome.lines.append(write_json(request.json_path, dumps(data)))
    return outcome


def _one_release(
    request: ChapterRequest,
    chapter: Chapter,
    reasons: dict[str, str],
    version: str,
    builder: Any,
    on_line: Callable[[str], None],
    outcome: ChapterOutcome,
) -> dict[str, CellResult]:
    started, runner = time.monotonic(), runner_digest()

    def keys_for(environment: str) -> dict[str, str]:
        with_packages = f"+with:{' '.join(request.with_packages)}" if request.with_packages else ""
        return block_keys(
            chapter,
            reasons,
            request.timeout_s,
            environment + with_packages,
            runner,
            outcome.limits,
            outcome.run_listings,
        )

    if request.results is not None and not request.rerun:
        requirements = builder.requirements(version)
        found = stored_blocks(
            request.results,
            version,
            host_platform(),
            chapter,
            requirements.digest if requirements.pin_file is not None else None,
            builder.interpreter_for(version).version,
            keys_for,
        )
        if found is not None:
            outcome.stored.append(version)
            outcome.lines.append(summary_line(version, found, time.monotonic() - started, "(stored results)"))
            return found
    on_line(f"jax {version}: preparing its environment")
    env = builder.prepare(version, request.with_packages) if request.with_packages else builder.prepare(version)
    described = describe(env.python)  # before the blocks: nothing they leave running can cost the description
    if described.get("jax") != version:
        raise ConformanceError(f"the environment for jax {version} reports jax {described.get('jax')}")
    on_line(f"jax {version}: running {len(chapter.blocks)} blocks in one process")
    begun = utc_now()
    not_run = {
        b.index
        for b in chapter.blocks
        if reasons.get(b.id)
        or b.skip
        or (b.listing and b.id not in outcome.run_listings)
        or interactive_call(b.code_as_run)
    }
    before = probe_snapshot(request.results, version, host_platform()) if request.results is not None else None
    ran = run_blocks(
        chapter.blocks,
        not_run,
        env.python,
        request.timeout_s,
        argv0=str(request.path.name),
        limits={b.index: outcome.limits[b.id] for b in chapter.blocks if b.id in outcome.limits},
        setup=chapter.setup,
    )
    for note in ran.notes:
        on_line(f"jax {version}: {note}")
    keys = keys_for(digest_of(described))
    judged = block_outcomes(
        chapter.blocks, ran.results, reasons, request.timeout_s, outcome.limits, outcome.run_listings
    )
    cells = {b.id: block_cell(chapter, b, judged[b.id], version, keys[b.id]) for b in chapter.blocks}
    on_line(
        f"jax {version}: " + "".join(LETTER[block_status(cells[b.id]) or BlockStatus.CRASH] for b in chapter.blocks)
    )
    if request.results is not None:
        changed: list[str] = []
        stored = store_blocks(
            request.results, chapter, cells, run_header(described, env, begun, ran.wall_s), as_before(before, changed)
        )
        outcome.written.append(stored.path)
        for line in changed:
            on_line(f"note: {stored.path}: {line}")
        if stored.set_aside is not None:
            on_line(f"note: {stored.set_aside.describe()}")
    outcome.lines.append(
        summary_line(version, cells, time.monotonic() - started, f"(one process, {ran.wall_s:.1f}s running)")
    )
    return cells


@dataclass(frozen=True)
class PagesRequest:
    """`chapter --pages LIST --docs CHECKOUT`: the list file, the checkout its pages are read from, and what a
    chapter request takes (`json_dir`: a folder for one JSON document per page, `<chapter>.json`)."""

    pages: Path
    docs: Path
    versions: tuple[str, ...] = ()
    results: Path | None = None
    json_dir: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    blocks_only: bool = False
    rerun: bool = False

    def inputs(self) -> list[Path]:
        """Every file the command reads: the list, the skip lists it names and the pages in the checkout."""
        listed = read_pages(self.pages).pages
        return [
            self.pages,
            *(page.skip for page in listed if page.skip is not None),
            *(self.docs / page.path for page in listed),
        ]


def run_pages(
    request: PagesRequest, builder: Any, on_line: Callable[[str], None] = lambda line: None
) -> list[ChapterOutcome]:
    """Each page of the list run as a chapter (`run_chapter`), after every page was found and checked and every
    release checked; one outcome per page, its lines headed by the page."""
    check_timeout(request.timeout_s)
    listed = read_pages(request.pages)
    located = locate_pages(listed, request.docs)
    if not request.blocks_only:
        _require_block_limit()
        _check_versions(request.versions, builder)
    if request.json_dir is not None:
        request.json_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for page, local in located:
        on_line(f"page {page.path} ({listed.repository}@{page.commit[:12]}): {page.name}")
        json_path = request.json_dir / f"{chapter_ident(page.name)}.json" if request.json_dir else None
        chapter_request = ChapterRequest(
            local,
            request.versions,
            page.skip,
            None,
            request.results,
            json_path,
            request.timeout_s,
            request.blocks_only,
            request.rerun,
            name=page.name,
            shown_path=page.path,
            origin=page.origin(listed.repository),
            companions=False,
        )
        outcome = run_chapter(chapter_request, builder, on_line)
        outcome.lines.insert(0, f"page {page.path}:")
        done.append(outcome)
    return done
