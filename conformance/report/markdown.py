"""The Markdown page of the report, ready to paste (a pull request, a wiki, a CI step summary). Pure logic.

GitHub-flavoured Markdown: a header (what was checked, when, by which suite version, a link to the HTML
page), the overview per column, where the documented release differs from the chapter, the known issues and
rows that change as compact "since which release" tables, and a legend of every word. `full=True` adds what
changed between neighbouring releases and the table of every cell. Every string from a result file is flattened to
one line and backslash-escaped (never an HTML entity), so the raw text reads as the rendered one.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import conformance
from conformance.chapter.model import BlockStatus
from conformance.core.observation import decode_nonfinite
from conformance.core.status import (
    KNOWN_ISSUE_ABSENT,
    KNOWN_ISSUE_CHANGED,
    KNOWN_ISSUE_PRESENT,
    KNOWN_ISSUE_WORDING,
    MEANING,
    Status,
)
from conformance.core.versions import DOCUMENTED_JAX
from conformance.report.apiview import ApiView
from conformance.report.downstreamview import DownstreamView
from conformance.report.chapterpage import MEANINGS as BLOCK_MEANINGS
from conformance.report.chapterpage import ChapterPage, changes_said, pages_said
from conformance.report.common import STATUS_ORDER, cell_address, page_address, visible
from conformance.report.markdown_downstream import downstream_summary
from conformance.report.markdown_sections import api_summary, chapter_summary, perf_summary
from conformance.report.model import CHANGE_GROUPS, NOT_RUN, ParamRow, ReportModel, TableCell
from conformance.report.perfview import PerfView
from conformance.report.spans import joined, platform_states, spans

CHAPTER = "The Debugging Toolkit"
DEFAULT_HTML_LINK = "index.html"
PRINTED_DIFFERS = "printed output differs"
MAX_VALUE = 160  # characters of an observed or expected value quoted in the discrepancies

# Markdown's punctuation that can start or end markup anywhere in a line (`>` too, so that the raw page holds no
# tag; no line of the page starts with result text, so line-start markers need none). Two are escaped only where
# they could act, which keeps the raw text readable and URLs whole: `_` unless between two letters or digits
# (`debug_nans_vmap_miss`), `&` where it starts an entity (`&amp;`, `&#91;`).
_SPECIAL = re.compile(r"([\\`*\[\]<>|~])")
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
_ENTITY = re.compile(r"&(?=#?\w+;)")


def text(value: Any) -> str:
    """`value` as Markdown text that renders literally: one line, Markdown punctuation backslash-escaped."""
    return _escape(" ".join(visible(str(value)).split()))


def _escape(flat: str) -> str:
    return _ENTITY.sub(r"\\&", _UNDERSCORE.sub(r"\\_", _SPECIAL.sub(r"\\\1", flat)))


def code(value: Any, in_table: bool = False) -> str:
    """`value` as an inline code span (one line); in a table, its `|` escaped as GFM asks."""
    flat = " ".join(visible(str(value)).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    span = f"{fence}{pad}{flat}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


def literal(value: Any) -> str:
    """A value (a fact's name, an expected or observed value) as a code span; as escaped text where it holds `<` or
    `>`, which a code span cannot escape, so that the raw page never holds a tag."""
    flat = " ".join(visible(str(value)).split())
    return text(flat) if re.search(r"[<>]", flat) else code(flat)


# A file name (`debugging.py`, `jax/_src/config.py`, `rows.tsv`): a linkifying renderer reads `.py` or `.md` as a
# country's domain and makes the name a link to a host, so it is written as code.
_FILE_NAME = re.compile(
    r"(?<![\w/.`-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|md|toml|json|txt|ipynb|tsv|cfg|so|"
    r"sh|yml|yaml|html|c|cc|h))\b(?![\w/-])"
)


def prose(value: Any) -> str:
    """Text that marks code with backticks, as the case notes do: each `…` pair a code span (its backticks shown as
    escaped text where it holds `<` or `>`), the rest escaped text, where a bare file name is a code span too."""
    flat = " ".join(visible(str(value)).split())
    parts = re.split(
        r"`([^`]+)`",
        _FILE_NAME.sub(lambda m: f"`{m.group(1)}`", flat)
        if "`" not in flat
        else "`".join(
            _FILE_NAME.sub(lambda m: f"`{m.group(1)}`", part) if i % 2 == 0 else part
            for i, part in enumerate(flat.split("`"))
        ),
    )
    return "".join(
        _escape(f"`{part}`") if i % 2 and re.search(r"[<>]", part) else code(part) if i % 2 else _escape(part)
        for i, part in enumerate(parts)
    )


def link_target(url: str) -> str:
    """`url` made safe as a Markdown link destination: spaces, parentheses, angle brackets and controls encoded."""
    return quote(visible(url.strip()), safe=":/?#@!$&'*+,;=%~-._[]")


def _shorten(value: Any) -> str:
    shown = json.dumps(decode_nonfinite(value), ensure_ascii=False, default=repr)  # NaN, Infinity: as in the page
    return shown if len(shown) <= MAX_VALUE else shown[: MAX_VALUE - 1] + "…"


def cell_name(cell_id: str, jax: str, platform: str, page: str, several: bool, in_table: bool = False) -> str:
    """A cell id as code, linked to its cell's panel on the page (`page`, the page's absolute address; '' for no
    link) at the release the line is about."""
    name = code(cell_id, in_table=in_table)
    if not page:
        return name
    return f"[{name}]({link_target(cell_address(page, cell_id, jax, platform if several else ''))})"


def _header(
    model: ReportModel, generated_at: str, html_link: str, absolute: bool = False, pages: Sequence[ChapterPage] = ()
) -> list[str]:
    """The title and first lines; with `pages` (a report of pages and no probe) they say what the pages hold, in the
    sentences the HTML page's header and closing line use (`chapterpage.pages_said`, `changes_said`)."""
    versions = [jax for jax, _ in model.versions]
    span = f"{len(versions)} JAX release{'s' if len(versions) != 1 else ''}" + (
        f" ({text(versions[0])} to {text(versions[-1])})"
        if len(versions) > 1
        else f" ({text(versions[0])})"
        if versions
        else ""
    )
    platforms = ", ".join(text(p) for p in model.platforms) or "no platform"
    stamp = f"Generated {text(generated_at)} by jax-conformance {text(conformance.__version__)}."
    if pages:
        return [
            "# JAX conformance report",
            "",
            f"{text(pages_said(pages))} run block by block as written on {span} on {platforms}. "
            f"{text(changes_said(pages))} {stamp}",
            "",
            f"**[Open the interactive report]({link_target(html_link)})** for each block's status on each release, "
            "what it raised and what it printed against the page. The words of the tables are explained in the "
            "[legend](#legend) at the end. "
            + (
                ""
                if absolute
                else f"The link is relative: it works beside {code(html_link)} only, and pasted "
                "elsewhere (a pull request, a CI summary) it leads nowhere; `report --site-url URL` makes it absolute."
            ),
        ]
    return [
        "# JAX conformance report",
        "",
        f"Behaviours that the chapter “{CHAPTER}” documents for JAX {DOCUMENTED_JAX}, checked on {span} on "
        f"{platforms}: {len(model.param_rows)} cell{'s' if len(model.param_rows) != 1 else ''} each. "
        f"{stamp}",
        "",
        f"**[Open the interactive report]({link_target(html_link)})** for each cell's observation, its difference "
        f"from the chapter and a script that reproduces it. The words of the tables are explained in the "
        f"[legend](#legend) at the end. "
        + (
            "Every cell id links to its cell in the interactive report, at the release its line is about."
            if absolute
            else f"The link is relative: it works beside {code(html_link)} only, and pasted elsewhere (a pull request, "
            "a CI summary) it leads nowhere; `report --site-url URL` makes every link absolute and links each "
            "cell id to its cell."
        ),
    ]


def _suites_header(
    model: ReportModel, generated_at: str, page: str, downstream: DownstreamView, absolute: bool
) -> list[str]:
    """The title and first lines of a report of downstream suites and no probe or page: what it holds, in the words
    of the HTML page's header."""
    suites, versions, platforms = len(downstream.suites), len(model.versions), len(model.platforms)
    return [
        "# JAX conformance report",
        "",
        f"{suites} downstream test suite{'' if suites == 1 else 's'} run on {versions} JAX "
        f"version{'' if versions == 1 else 's'} × {platforms} platform{'' if platforms == 1 else 's'}, no probe. "
        f"Generated {text(generated_at)} by jax-conformance {text(conformance.__version__)}.",
        "",
        f"**[Open the interactive report]({link_target(page)})** for each suite's tests on each release and the "
        "command that runs a regressed test again."
        + (
            ""
            if absolute
            else f" The link is relative: it works beside {code(page)} only; `report --site-url URL` makes it absolute."
        ),
    ]


# The words a page's counts use where they are not the status's own (`chapter.model.counted`), and the skip list's
# meaning said without the suite's chapter.
_PAGE_WORDS = {
    BlockStatus.SKIPPED: ("skipped", "left out by the skip list, with its reason"),
    BlockStatus.LISTING: ("listing not run", "a listing the page's own build does not execute"),
    BlockStatus.INTERACTIVE: (
        "interactive, not run",
        "it waits for a person (breakpoint(), input(), jax.debug.breakpoint())",
    ),
}


def _page_legend() -> list[str]:
    """The legend of a report of pages and no probe: the words its tables count blocks in."""
    lines = ["", "## Legend", "", "| word | meaning |", "|---|---|"]
    for status in BlockStatus:
        word, meaning = _PAGE_WORDS.get(status, (status.words, BLOCK_MEANINGS[status.value]))
        lines.append(f"| {text(word)} | {text(meaning.removeprefix(status.words + ': '))} |")
    lines.append(
        "| printed differently | a block that ran as written printed otherwise than the page shows after it; "
        "a mark, it does not change the block's status |"
    )
    return lines


def _legend() -> list[str]:
    lines = ["", "## Legend", "", "| word | meaning |", "|---|---|"]
    lines += [f"| {s.value} | {text(MEANING[s])} |" for s in Status]
    lines.append(f"| {NOT_RUN} | no result for this cell in this run |")
    lines += [
        f"| {text(word)} | {text(KNOWN_ISSUE_WORDING[word])} |"
        for word in (KNOWN_ISSUE_PRESENT, KNOWN_ISSUE_ABSENT, KNOWN_ISSUE_CHANGED)
    ]
    lines.append(
        f"| {PRINTED_DIFFERS} | what the chapter only prints (wording, reprs, counts) came out otherwise; "
        "a mark, it does not change the status |"
    )
    return lines


def _overview(model: ReportModel) -> list[str]:
    shown = [s for s in STATUS_ORDER if any(c.counts.get(s, 0) for c in model.columns)]
    several = len(model.platforms) > 1
    heads = ["jax"] + (["platform"] if several else []) + ["conforming"] + shown + [PRINTED_DIFFERS]
    lines = ["", "## Overview", "", "| " + " | ".join(heads) + " |", "|" + "---|" + "---|" * (len(heads) - 1)]
    for column in model.columns:
        version = text(column.label) + (" (documented)" if column.label == DOCUMENTED_JAX else "")
        cells = [version] + ([text(column.platform)] if several else []) + [column.conforming_text]
        cells += [str(column.counts.get(s, 0)) for s in shown] + [str(column.printed_differs)]
        lines.append("| " + " | ".join(cells) + " |")
    if not model.columns:
        lines = ["", "## Overview", "", "No result files."]
    return lines


def _discrepancies(model: ReportModel, page: str = "") -> list[str]:
    lines = ["", f"## Where JAX {DOCUMENTED_JAX} differs from the chapter", ""]
    if not model.discrepancies:
        return lines + ["None: on the documented release every asserted fact holds."]
    for found in model.discrepancies:
        observed = "; ".join(
            f"{literal(d.get('path'))}: expected {literal(_shorten(d.get('expected')))}, observed "
            f"{literal(_shorten(d.get('observed')))}"
            for d in found.result.diff
        )
        name = cell_name(found.cell_id, found.jax, found.platform, page, len(model.platforms) > 1)
        lines += [
            f"- {name} on {text(found.platform)}",
            "",
            f"  **The chapter:** {prose(found.claim) or 'no claim recorded'}",
            "",
            f"  **Observed:** {observed or prose(found.result.reason) or 'no difference recorded'}",
            "",
            f"  **Why:** {prose(found.note)}" if found.note else "  **Why:** no note yet: unexplained.",
            "",
        ]
    return lines[:-1]


def _newest(row: ParamRow, model: ReportModel, platform: str) -> TableCell | None:
    measured = [
        cell
        for column, cell in zip(model.columns, row.cells)
        if column.platform == platform and cell.result is not None
    ]
    return measured[-1] if measured else None


def _history(row: ParamRow, model: ReportModel, platform: str) -> tuple[str, str]:
    """Where the row conforms, and where it does not (other statuses named), over the platform's releases."""
    states = platform_states(model.columns, [[cell] for cell in row.cells], platform, lambda c: c[0].status)
    runs = spans(states)
    conforming = [r for r in runs if r.state == Status.CONFORMS.value]
    others = [
        r.text + ("" if r.state == Status.DIFFERS.value else f" ({r.state})")
        for r in runs
        if r.state != Status.CONFORMS.value
    ]
    return joined(conforming) or "never", ", ".join(others) or "–"


def _since_tables(model: ReportModel, page: str = "") -> list[str]:
    several = len(model.platforms) > 1
    lead = "| platform " if several else ""
    known, changing = [], []
    for row in model.param_rows:
        for platform in model.platforms:
            at = [k for k, column in zip(row.known_at, model.columns) if column.platform == platform]
            newest = _newest(row, model, platform)
            if newest is None:
                continue
            yes, no = _history(row, model, platform)
            newest_jax = [
                c.jax for c, cell in zip(model.columns, row.cells) if c.platform == platform and cell.result is not None
            ][-1]
            start = f"| {cell_name(row.cell_id, newest_jax, platform, page, several, in_table=True)} " + (
                f"| {text(platform)} " if several else ""
            )
            if any(at):
                known.append(f"{start}| {yes} | {no} | {text(newest.word)} |")
            elif row.changes:
                changing.append(f"{start}| {yes} | {no} | {text(newest.word)} |")
    lines = []
    if known:
        lines += [
            "",
            "## Known issues",
            "",
            "A known issue is a bug the chapter documents: where the row conforms, the bug reproduces.",
            "",
            f"| known issue {lead}| bug reproduces in | not in | on the newest release |",
            "|---|" + "---|" * (3 + several),
        ]
        lines += known
    if changing:
        lines += [
            "",
            "## Since which release",
            "",
            "Rows whose status changes across the releases (a release without a result is left out).",
            "",
            f"| cell {lead}| conforms in | not in | on the newest release |",
            "|---|" + "---|" * (3 + several),
        ]
        lines += changing
    return lines


def _changes(model: ReportModel, page: str = "") -> list[str]:
    lines = []
    for step in model.steps:
        if not step.total:
            continue
        printed = len(step.groups["printed output changed"])
        lines += ["", f"### {text(step.before)} → {text(step.after)} ({text(step.platform)})", ""]
        for group in CHANGE_GROUPS[:-1]:
            for change in step.groups[group]:
                name = cell_name(change.cell_id, step.after, step.platform, page, len(model.platforms) > 1)
                lines.append(f"- {group}: {name} ({text(change.before)} → {text(change.after)})")
        if printed:
            lines.append(f"- printed output changed in {printed} cell{'s' if printed != 1 else ''}, status unchanged")
    return (["", "## What changed between neighbouring releases"] + lines) if lines else []


def from_to(model: ReportModel, before: str, after: str, page: str = "") -> list[str]:
    """ "From A to B": what an upgrade from `before` to `after` changes, per platform: the status changes first, each
    with its why (the declared `Change` between the two, or "unexplained"), then how many cells changed only their
    printed output or only their observation. With `page` (the report's absolute address) each cell links to its
    panel there."""
    lines = ["", f"## From {text(before)} to {text(after)}", ""]
    steps = model.compare(before, after)
    for step in steps:
        moved = [
            (group, change) for group in CHANGE_GROUPS[:-1] for change in step.groups[group] if change.status_changed
        ]
        quiet = len(step.groups["changed"]) - sum(1 for group, _ in moved if group == "changed")
        printed = len(step.groups["printed output changed"])
        if len(steps) > 1:
            lines += [f"### {text(step.platform)}", ""]
        if not step.compared:
            lines += [f"No cell has a result on both {text(before)} and {text(after)}: nothing to compare.", ""]
            continue
        if moved:
            lines.append(f"{len(moved)} cell{'s change' if len(moved) != 1 else ' changes'} status:")
            lines.append("")
            for group, change in moved:
                why = prose(change.why.why) if change.why else "unexplained (no declared Change)"
                name = cell_name(change.cell_id, after, step.platform, page, len(model.platforms) > 1)
                lines.append(f"- **{group}**: {name} ({text(change.before)} → {text(change.after)}): {why}")
        else:
            lines.append("No cell changes status.")
        lines += [
            "",
            f"Printed output alone changed in {printed} cell{'s' if printed != 1 else ''}; the observation "
            f"alone (same status) in {quiet}.",
            "",
        ]
    return lines[:-1]


def _every_cell(model: ReportModel, page: str = "") -> list[str]:
    heads = [f"{c.label} ({c.platform})" if len(model.platforms) > 1 else c.label for c in model.columns]
    lines = [
        "",
        "## Every cell",
        "",
        "| section | cell | " + " | ".join(map(text, heads)) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for section in model.sections:
        for block in section.cases:
            for row in block.params:
                column = next(
                    (c for c, cell in zip(model.columns, row.cells) if cell.result is not None),
                    model.columns[-1] if model.columns else None,
                )
                name = (
                    cell_name(row.cell_id, column.jax, column.platform, page, len(model.platforms) > 1, True)
                    if column
                    else code(row.cell_id, in_table=True)
                ) + (" (known issue)" if row.known_issue else "")
                words = " | ".join(
                    text(c.word) + (f" ({PRINTED_DIFFERS})" if c.printed_differs else "") for c in row.cells
                )
                lines.append(f"| {text(section.heading)} | {name} | {words} |")
    return lines


def _moment(generated_at: dt.datetime | str | None) -> str:
    if generated_at is None:
        generated_at = dt.datetime.now(dt.timezone.utc)
    if isinstance(generated_at, dt.datetime):
        return generated_at.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return generated_at


def markdown_summary(
    model: ReportModel,
    *,
    full: bool = False,
    generated_at: dt.datetime | str | None = None,
    html_link: str = DEFAULT_HTML_LINK,
    lead: list[str] | None = None,
    compare: tuple[str, str] | None = None,
    site_url: str = "",
    chapters: Sequence[ChapterPage] = (),
    api: ApiView | None = None,
    perf: PerfView | None = None,
    downstream: DownstreamView | None = None,
) -> str:
    """The Markdown page: header with date, suite version, platforms and a link to the HTML page (`html_link`,
    relative `index.html` by default); overview; where the documented release differs from the chapter; known
    issues and "since which release" tables; legend. `full` adds, before the legend, what changed between
    neighbouring releases and the table of every cell. `lead` are lines to put right after the header ("Since the last
    run", `report.since.since_markdown`); `compare` (A, B) puts "From A to B" (`from_to`) first of all, an upgrade's
    delta for its pull request. `site_url` makes the page link absolute and links every cell id to its cell's panel,
    so the pasted page has no link that breaks; without it the header says its link is relative. `chapters` (the
    page's `ChapterPage`s), `api` (its `ApiView`), `perf` (its `PerfView`) and `downstream` (its `DownstreamView`) add
    short summaries of those sections (`report.markdown_sections`, `report.markdown_downstream`)."""
    page = page_address(html_link, site_url)
    cells = page if site_url else ""
    # A report of pages, or of downstream suites, and no probe says only what those hold, as the HTML page does
    # (`html.template_context`'s `probes` and `suites_only`): no overview of probes, no legend of their words.
    suites_only = downstream is not None and not model.param_rows and not chapters
    probes = (bool(model.param_rows) or not chapters) and not suites_only
    delta = from_to(model, *compare, page=cells) if compare else []
    header = (
        _suites_header(model, _moment(generated_at), page, downstream, bool(site_url))
        if suites_only and downstream
        else _header(model, _moment(generated_at), page, bool(site_url), () if probes else chapters)
    )
    lines: list[str] = header + delta + list(lead or [])
    if probes:
        lines += _overview(model) + _discrepancies(model, cells) + _since_tables(model, cells)
    lines += chapter_summary(chapters, text, code, cells, probes) + api_summary(api, text, cells)
    lines += perf_summary(perf, text, cells) + downstream_summary(downstream, text, literal, cells)
    if full and probes:
        lines += _changes(model, cells) + _every_cell(model, cells)
    legend = [] if suites_only else _legend() if probes else _page_legend()
    return "\n".join(lines + legend) + "\n"
