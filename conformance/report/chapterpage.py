"""The report's section "The chapter as written": what the page draws of each chapter run block by block
(`jax-conformance chapter`, `conformance.chapter.grid.ChapterView`). Pure logic: plain data for the template.

Per chapter and platform: a block × release grid (a glyph per block and release, its status in words on hover and
focus, what decided it on a click), the summary per release (`89 of 90 blocks run as written on 0.12.0.1`), since
which release each block runs as written, each block's links to the probe rows of its subsection (and, in the probe
cells' panels, back), and the list where a block and the probes that cover it point opposite ways.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.chapter.grid import ChapterView
from conformance.chapter.model import BlockStatus
from conformance.report.common import cell_address, visible

GLYPHS = {BlockStatus.RAN.value: "✓", BlockStatus.ASSERT_FAILED.value: "✗", BlockStatus.RAISED.value: "!",
          BlockStatus.TIMEOUT.value: "T", BlockStatus.CRASH.value: "C", BlockStatus.SKIPPED.value: "s",
          BlockStatus.AFTER_FAILURE.value: "↷", BlockStatus.RAISED_AS_DOCUMENTED.value: "✓",
          BlockStatus.RAISED_OTHERWISE.value: "≠", BlockStatus.DID_NOT_RAISE.value: "∅", BlockStatus.LISTING.value: "–"}
MEANINGS = {
    BlockStatus.RAN.value: "ran as written: every assert held and nothing raised",
    BlockStatus.ASSERT_FAILED.value: "an assert of the block failed",
    BlockStatus.RAISED.value: "the block raised an exception",
    BlockStatus.TIMEOUT.value: "the block ran past its time limit",
    BlockStatus.CRASH.value: "the process died in the block",
    BlockStatus.SKIPPED.value: "skipped by the chapter's skip list, with its reason",
    BlockStatus.AFTER_FAILURE.value: "a name it needs was to come from an earlier block that failed",
    BlockStatus.RAISED_AS_DOCUMENTED.value: "raised as documented: the error the page states, a subclass counting",
    BlockStatus.RAISED_OTHERWISE.value: "raised otherwise: an error of another class than the page states",
    BlockStatus.DID_NOT_RAISE.value: "did not raise the error the page states",
    BlockStatus.LISTING.value: "not run: a listing the page's own build does not execute",
}
FIRST_CODE_CHARS = 70


def anchor(chapter: str, platform: str, block: str) -> str:
    """The id of a block's row on the page."""
    return "chb-" + re.sub(r"[^A-Za-z0-9_-]", "-", f"{chapter}-{platform}-{block}")


@dataclass(frozen=True)
class ChapterPage:
    """One chapter on one platform, as the page draws it: `rows` (per block: anchor, heading, first code line, the
    glyph and words of each release, since, links), `summaries` (the release's line), `disagreements`, and `details`
    (per block and release what decided it and the printed difference: the section's data block)."""

    chapter: str
    platform: str
    versions: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    summaries: tuple[str, ...]
    disagreements: tuple[dict[str, Any], ...]
    details: dict[str, dict[str, Any]]

    @property
    def key(self) -> str:
        """What names the section: the chapter and platform."""
        return f"{self.chapter} on {self.platform}"


def _probe_link(cell_id: str, version: str, platform: str, several: bool) -> str:
    return cell_address("", cell_id, version, platform if several else "")


def chapter_page(view: ChapterView, several_platforms: bool = False) -> ChapterPage:
    """The page's data for one chapter view."""
    grid = view.grid
    newest = grid.versions[-1] if grid.versions else ""
    rows, details = [], {}
    for row in grid.rows:
        key = anchor(grid.chapter, grid.platform, row.block)
        cells = []
        for version in grid.versions:
            cell = row.cells.get(version)
            if cell is None:
                cells.append({"glyph": "", "status": "not run", "title": f"{version}: not run"})
                continue
            details[f"{key}|{version}"] = {"status": cell.status, "detail": visible(cell.detail),
                                           "printed": [visible(line) for line in cell.printed_lines],
                                           "stdout": visible(cell.stdout_tail)[-2000:], "seconds": cell.duration_s}
            cells.append({"glyph": GLYPHS.get(cell.status, "?"), "status": cell.status, "printed": cell.printed_differs,
                          "title": f"{version}: {cell.status}" + ("; printed output differs" if cell.printed_differs
                                                                   else "") + (f": {cell.detail}" if cell.detail
                                                                               else "")})
        first = " ".join(visible(row.first_code).split())
        probes = [{"cell": link.cell_id, "href": _probe_link(link.cell_id, newest, grid.platform, several_platforms),
                   "rows": list(link.rows)} for link in view.links.get(row.block, ())]
        since = view.since.get(row.block)
        rows.append({"anchor": key, "block": row.block, "heading": visible(row.heading), "line": row.line,
                     "first_code": first if len(first) <= FIRST_CODE_CHARS else first[:FIRST_CODE_CHARS - 1] + "…",
                     "cells": cells, "since": since.text if since else "", "probes": probes})
    disagreements = []
    for found in view.disagreements:
        key = anchor(grid.chapter, grid.platform, found.block)
        disagreements.append({"anchor": key, "block": found.block, "version": found.version,
                              "block_status": found.block_status, "block_detail": visible(found.block_detail),
                              "probes_say": found.probes_say,
                              "probes": [{"cell": p.cell_id, "status": p.status, "observed": visible(p.observed),
                                          "href": _probe_link(p.cell_id, found.version, grid.platform,
                                                              several_platforms)} for p in found.probes]})
    return ChapterPage(grid.chapter, grid.platform, grid.versions, tuple(rows),
                       tuple(s.text for s in view.summaries), tuple(disagreements), details)


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
                    label = f"{page.chapter} {row['heading'] or block} (line {row['line']})"
                    back.setdefault(row_id, []).append([row["anchor"], label])
    return back
