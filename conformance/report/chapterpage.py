"""The report's section "The chapter as written": what the page draws of each chapter run block by block
(`jax-conformance chapter`, `conformance.chapter.grid.ChapterView`). Pure logic: plain data for the template.

Per chapter and platform, named by its own title (its first heading; a listed page links to its source at its
commit): the summary per release in words whose counts add up to its blocks, with the first block that does not run
as written and why; a block × release grid (a glyph per block and release, whose accessible name is the glyph and
its status in words; one tab stop per grid), under a row per heading; the detail of a (block, release) in the page's
panel, beside the grid on a desktop and as a sheet on a phone (the assert or exception, the printed difference, the
probes of its subsection on that release, since which release it runs); the list where a block and the probes that
cover it point opposite ways, one sentence per entry with both observations. One name for a block everywhere:
`block_name` (its section, its line and its first line of code).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from conformance.chapter.grid import BlockChange, BlockStep, ChapterView, GridRow
from conformance.chapter.model import FAILED, BlockStatus
from conformance.report.common import cell_address, visible

GLYPHS = {
    BlockStatus.RAN.value: "✓",
    BlockStatus.ASSERT_FAILED.value: "✗",
    BlockStatus.RAISED.value: "!",
    BlockStatus.TIMEOUT.value: "T",
    BlockStatus.CRASH.value: "C",
    BlockStatus.SKIPPED.value: "s",
    BlockStatus.AFTER_FAILURE.value: "↷",
    BlockStatus.RAISED_AS_DOCUMENTED.value: "✓",
    BlockStatus.RAISED_OTHERWISE.value: "≠",
    BlockStatus.DID_NOT_RAISE.value: "∅",
    BlockStatus.LISTING.value: "–",
    BlockStatus.INTERACTIVE.value: "‖",
}
MEANINGS = {
    BlockStatus.RAN.value: "ran as written: every assert held and nothing raised",
    BlockStatus.ASSERT_FAILED.value: "assert failed: an assert of the block failed",
    BlockStatus.RAISED.value: "raised: the block raised an exception",
    BlockStatus.TIMEOUT.value: "timed out: the block ran past its time limit",
    BlockStatus.CRASH.value: "crashed: the process died in the block",
    BlockStatus.SKIPPED.value: "skipped by the chapter's skip list, with its reason",
    BlockStatus.AFTER_FAILURE.value: "after an earlier failure: a name it needs was to come from an earlier block "
    "that failed",
    BlockStatus.RAISED_AS_DOCUMENTED.value: "raised as documented: the error the page states, a subclass counting",
    BlockStatus.RAISED_OTHERWISE.value: "raised otherwise: an error of another class than the page states",
    BlockStatus.DID_NOT_RAISE.value: "did not raise the error the page states",
    BlockStatus.LISTING.value: "not run: a listing the page's own build does not execute",
    BlockStatus.INTERACTIVE.value: "not run: it waits for a person (breakpoint(), input(), jax.debug.breakpoint())",
}
FIRST_CODE_CHARS = 70
_FAILED = frozenset(s.value for s in FAILED)
_ORIGIN = re.compile(r"^([\w.-]+/[\w.-]+)@([0-9a-fA-F]{7,40}):(.+)$")


def words(status: str) -> str:
    """A block's status in words (`assert_failed` → `assert failed`); a probe's or an unknown word as it is."""
    try:
        return BlockStatus(status).words
    except ValueError:
        return status.replace("_", " ")


def anchor(chapter: str, platform: str, block: str) -> str:
    """The id of a block's row on the page."""
    return "chb-" + re.sub(r"[^A-Za-z0-9_-]", "-", f"{chapter}-{platform}-{block}")


def short_code(first_code: str) -> str:
    """A block's first line of code on one line, cut to `FIRST_CODE_CHARS`."""
    first = " ".join(visible(first_code).split())
    return first if len(first) <= FIRST_CODE_CHARS else first[: FIRST_CODE_CHARS - 1] + "…"


def block_name(row: GridRow) -> str:
    """A block's one name, on the page and in every list: `§1.1, line 214: jax.debug.print("x = {x}", x=x)`; a
    notebook's block by its cell (`cell 8: ...`), as `chapter --blocks` names it."""
    where = "cell" if row.form == "notebook" else "line"
    place = (f"§{row.section}, " if row.section else "") + f"{where} {row.line}"
    code = short_code(row.first_code)
    return f"{place}: {code}" if code else place


def source_link(origin: str) -> str:
    """Where a listed page is read, at its commit, on GitHub (`jax-ml/jax@8c0c43c0:docs/debugging.md`); '' for
    another origin."""
    found = _ORIGIN.match(origin)
    if not found:
        return ""
    repo, commit, path = found.groups()
    return f"https://github.com/{repo}/blob/{commit}/{quote(path)}"


@dataclass(frozen=True)
class ChapterPage:
    """One chapter on one platform, as the page draws it: its `title` (its first heading, else its file's name) and
    `source` link, `rows` (per block: anchor, name, heading, the glyph and words of each release, since, probes),
    `summaries` (per release, its line and the first block that does not run as written), `disagreements` (a
    sentence's parts each), and `details` (per block and release what the panel shows: the section's data block)."""

    chapter: str
    platform: str
    versions: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    summaries: tuple[dict[str, Any], ...]
    disagreements: tuple[dict[str, Any], ...]
    details: dict[str, dict[str, Any]]
    title: str = ""
    source: str = ""
    steps: tuple[dict[str, Any], ...] = ()  # per adjacent releases: the blocks whose status or printed mark changed
    breaks: tuple[dict[str, Any], ...] = ()  # the blocks that do not run as written on the newest release
    after_failure: int = 0  # the blocks that, on the newest release, need a name a broken block was to define
    linked: bool = False  # whether the suite's probes encode this chapter (its blocks link to them, `grid`)
    misprinted: tuple[dict[str, Any], ...] = ()  # the blocks that ran on the newest release and print otherwise

    @property
    def key(self) -> str:
        """What names the section's data: the chapter and platform."""
        return f"{self.chapter} on {self.platform}"

    @property
    def name(self) -> str:
        """What the page calls the chapter: its own title, else its file's name."""
        return self.title or self.chapter


def _probe_link(cell_id: str, version: str, platform: str, several: bool) -> str:
    return cell_address("", cell_id, version, platform if several else "")


def _cell_label(version: str, status: str, printed: bool, detail: str) -> str:
    """The words a glyph stands for (after the glyph itself, in its accessible name)."""
    return (
        f"{version}: {words(status)}"
        + (f": {detail}" if detail else "")
        + ("; printed output differs" if printed else "")
    )


def _row(view: ChapterView, row: GridRow, several: bool) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    grid = view.grid
    key = anchor(grid.chapter, grid.platform, row.block)
    name = visible(block_name(row))
    since = view.since.get(row.block)
    links = view.links.get(row.block, ())
    cells, details = [], {}
    for version in grid.versions:
        cell = row.cells.get(version)
        if cell is None:
            cells.append({"glyph": "", "status": "not-run", "label": f"{version}: not run"})
            continue
        detail = visible(cell.detail)
        probes = [
            [link.cell_id, link.statuses[version], _probe_link(link.cell_id, version, grid.platform, several)]
            for link in links
            if version in link.statuses
        ]
        details[f"{key}|{version}"] = {
            "name": name,
            "heading": visible(row.heading),
            "version": version,
            "status": cell.status,
            "words": words(cell.status),
            "detail": detail,
            "printed": [visible(line) for line in cell.printed_lines],
            "stdout": visible(cell.stdout_tail)[-2000:],
            "seconds": cell.duration_s,
            "since": since.text if since else "",
            "probes": probes,
            # a page the probes do not encode has no probe to name: its panel says nothing of probes (`grid`)
            "section": row.section if view.links else "",
        }
        cells.append(
            {
                "glyph": GLYPHS.get(cell.status, "?"),
                "status": cell.status,
                "printed": cell.printed_differs,
                "label": _cell_label(version, cell.status, cell.printed_differs, detail[:160]),
            }
        )
    newest = grid.versions[-1] if grid.versions else ""
    probes = [
        {"cell": link.cell_id, "href": _probe_link(link.cell_id, newest, grid.platform, several)} for link in links
    ]
    return (
        {
            "anchor": key,
            "block": row.block,
            "name": name,
            "heading": visible(row.heading),
            "line": row.line,
            "section": row.section,
            "first_code": short_code(row.first_code),
            "cells": cells,
            "since": since.text if since else "",
            "probes": probes,
        },
        details,
    )


def _first_broken(
    page_rows: Sequence[dict[str, Any]], details: dict[str, dict[str, Any]], version: str
) -> dict[str, Any] | None:
    """The first block, in the chapter's order, that does not run as written on `version` (what breaks first)."""
    for row in page_rows:
        found = details.get(f"{row['anchor']}|{version}")
        if found and found["status"] in _FAILED:
            return {"anchor": row["anchor"], "name": row["name"], "words": found["words"], "detail": found["detail"]}
    return None


def _step(step: BlockStep, names: dict[str, str], anchors: dict[str, str]) -> dict[str, Any]:
    """Two adjacent releases as the page says them: each block's status change, and printed changes alone."""

    def said(change: BlockChange) -> dict[str, Any]:
        return {
            "anchor": anchors[change.block],
            "name": names[change.block],
            "before": words(change.before),
            "after": words(change.after),
            "printed": change.printed,
        }

    return {
        "before": step.before,
        "after": step.after,
        "changes": [said(c) for c in step.changes],
        "printed": [said(c) for c in step.printed],
    }


def _newest_breaks(
    rows: Sequence[dict[str, Any]], details: dict[str, dict[str, Any]], version: str
) -> tuple[tuple[dict[str, Any], ...], int]:
    """The blocks that do not run as written on `version`, in the page's order, and how many more did not run
    because a block before them failed (`after an earlier failure`)."""
    found, after = [], 0
    for row in rows:
        cell = details.get(f"{row['anchor']}|{version}")
        if cell and cell["status"] in _FAILED:
            found.append(
                {"anchor": row["anchor"], "name": row["name"], "words": cell["words"], "detail": cell["detail"]}
            )
        after += bool(cell) and cell["status"] == BlockStatus.AFTER_FAILURE.value
    return tuple(found), after


def _disagreement(view: ChapterView, found, names: dict[str, str], several: bool) -> dict[str, Any]:
    grid = view.grid
    conforms = found.probes_say == "every probe conforms"
    return {
        "anchor": anchor(grid.chapter, grid.platform, found.block),
        "name": names.get(found.block, found.block),
        "version": found.version,
        "words": words(found.block_status),
        "detail": visible(found.block_detail),
        "probes_say": (
            "every probe of its subsection conforms there"
            if conforms
            else "every probe of its subsection differs there"
        ),
        "probes": [
            {
                "cell": p.cell_id,
                "words": p.status,
                "observed": visible(p.observed),
                "href": _probe_link(p.cell_id, found.version, grid.platform, several),
            }
            for p in found.probes
        ],
    }


def chapter_page(view: ChapterView, several_platforms: bool = False) -> ChapterPage:
    """The page's data for one chapter view."""
    grid = view.grid
    rows, details = [], {}
    for row in grid.rows:
        drawn, found = _row(view, row, several_platforms)
        rows.append(drawn)
        details.update(found)
    summaries = tuple(
        {"version": s.version, "text": s.text, "first": _first_broken(rows, details, s.version)} for s in view.summaries
    )
    names = {row["block"]: row["name"] for row in rows}
    disagreements = tuple(_disagreement(view, d, names, several_platforms) for d in view.disagreements)
    anchors = {row["block"]: row["anchor"] for row in rows}
    steps = tuple(_step(step, names, anchors) for step in view.steps)
    breaks, after = _newest_breaks(rows, details, grid.versions[-1]) if grid.versions else ((), 0)
    misprinted = tuple(
        {"anchor": row["anchor"], "name": row["name"]}
        for row in rows
        if grid.versions and row["cells"][-1].get("printed")
    )
    return ChapterPage(
        grid.chapter,
        grid.platform,
        grid.versions,
        tuple(rows),
        summaries,
        disagreements,
        details,
        visible(grid.title),
        source_link(grid.origin),
        steps,
        breaks,
        after,
        bool(view.links),
        misprinted,
    )


def chapter_pages(views: Sequence[ChapterView], several_platforms: bool = False) -> list[ChapterPage]:
    """Every chapter view as the page draws it."""
    return [chapter_page(view, several_platforms) for view in views]


def blocks_of_rows(pages: Sequence[ChapterPage], views: Sequence[ChapterView]) -> dict[str, list[list[str]]]:
    """Per behaviour row ID, the blocks that cover it (`[anchor, label]`): the probe cells' panels link back."""
    back: dict[str, list[list[str]]] = {}
    for page, view in zip(pages, views):
        by_block = {row["block"]: row for row in page.rows}
        for row_id, blocks in view.blocks_of_row.items():
            for block in blocks:
                row = by_block.get(block)
                if row is not None:
                    back.setdefault(row_id, []).append([row["anchor"], f"{page.name}, {row['name']}"])
    return back


def pages_said(pages: Sequence[ChapterPage]) -> str:
    """The pages of a report, each once with its blocks, for its first line: `The page “Debugging” (5 blocks)`."""
    found = list({page.chapter: page for page in pages}.values())
    named = [f"“{page.name}” ({len(page.rows)} block{'' if len(page.rows) == 1 else 's'})" for page in found]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return f"The page{'' if len(named) == 1 else 's'} {listed}"


def changes_said(pages: Sequence[ChapterPage]) -> str:
    """How many block status changes the pages hold between adjacent releases, in one sentence."""
    count = sum(len(step["changes"]) for page in pages for step in page.steps)
    if not any(page.steps for page in pages):
        return "Only one release of each page: no status change to count."
    return (
        f"{count} block status change{'' if count == 1 else 's'} between adjacent releases."
        if count
        else "No block changed its status between adjacent releases."
    )
