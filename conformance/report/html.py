"""The compatibility report as one self-contained HTML page; `write_report` also writes the outputs asked for beside
it through the registry `report.formats` (Markdown, JUnit, compat JSON, wptreports).

`build_model` (report.model) turns typed result files into plain dataclasses; `page_data`
makes the compact data block the page draws its table from (only the rows and columns near the visible part) and
renders cell details from on demand; `render_html`
turns those into the page. Only `write_report` touches files.
Every string that comes from a result file is escaped by Jinja's autoescaping in the markup,
and by `json_for_script` inside the data block; no path of the machine that made the report
is written into it.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

import conformance
from conformance.api.model import Census
from conformance.atomic import write_text_atomically
from conformance.core.case import Case, load_cases
from conformance.core.status import (
    KNOWN_ISSUE_ABSENT,
    KNOWN_ISSUE_CHANGED,
    KNOWN_ISSUE_PRESENT,
    KNOWN_ISSUE_WORDING,
    LETTER,
    MEANING,
    Status,
)
from conformance.core.versions import DOCUMENTED_JAX
from conformance.chapter.grid import ChapterView
from conformance.report.apiview import ApiView, api_view
from conformance.report.perfview import PerfView
from conformance.report.downstreamview import DownstreamView
from conformance.report.upgradeview import downstream_pairs, probed_releases, upgrade_data
from conformance.report.chapterpage import (
    GLYPHS as BLOCK_GLYPHS,
    MEANINGS as BLOCK_MEANINGS,
    blocks_of_rows,
    changes_said,
    chapter_pages,
    pages_said,
)
from conformance.report.common import STATUS_ORDER, cell_address, visible
from conformance.report.conditions import MISCOMPILE_CASE
from conformance.report.formats import render_outputs, write_outputs
from conformance.report.outputs import OutputSettings, ReportData
from conformance.report.model import (
    BUG_ABSENT_GLYPH,
    BUG_PRESENT_GLYPH,
    CHANGE_GROUPS,
    GLYPHS,
    NOT_RUN,
    ReportModel,
    build_model,
    version_key,
)
from conformance.report.since import SinceView, run_label
from conformance.report.repro import main_template, module_source, prelude, script_sources, scripts_used
from conformance.results.load import PathLike, load_results
from conformance.decide.diff import warning_line
from conformance.results.schema import SCHEMA_VERSION, ResultFile

TEMPLATE_NAME = "report.html.j2"
BAR_COLOURS = {
    "conforms": "#3b9b6d",
    "differs": "#e69f00",
    "unsupported": "#a8a8a8",
    "error": "#cc79a7",
    "crash": "#9c4f8a",
    "timeout": "#56b4e9",
    "skipped": "#dddddd",
    "flaky": "#d9c800",
    NOT_RUN: "#f1f1f1",
}


# Paths of the machine that produced a result, replaced so the published page names none of them.
_LOCAL_PATHS = [
    (
        re.compile(
            r"(?:[A-Za-z]:)?[/\\][^\s\"'<>]*?(?=[/\\]conformance[/\\](?:cases|scripts|child|core|engine|report)[/\\])"
        ),
        "<suite>",
    ),
    (re.compile(r"(?:[A-Za-z]:)?[/\\][^\s\"'<>]*?[/\\]jax-conformance[/\\]envs[/\\][^/\\\s\"'<>]+"), "<env>"),
    (re.compile(r"(?:/home/|/Users/|[A-Za-z]:\\Users\\)[^/\\\s\"'<>]+"), "~"),
    (re.compile(r"/root(?=[/\\\s\"'<>]|$)"), "~"),
    (re.compile(r"/(?:tmp|var/folders)/[^\s\"'<>]*?(?=/conformance/|[\s\"'<>]|$)"), "<tmp>"),
]
MAX_DEPTH = 100
TOO_DEEP = "[… nested too deeply to show]"


def without_local_paths(text: str) -> str:
    """`text` with the environment cache, home folders and temporary folders replaced by placeholders."""
    for pattern, placeholder in _LOCAL_PATHS:
        text = pattern.sub(placeholder, text)
    return text


def visible_tree(value: Any, depth: int = 0) -> Any:
    """`value` ready for the page: strings visible and without local paths, non-finite numbers as text,
    and anything nested deeper than `MAX_DEPTH` replaced by a mark."""
    if depth > MAX_DEPTH:
        return TOO_DEEP
    if isinstance(value, str):
        return without_local_paths(visible(value))
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    if isinstance(value, dict):
        return {visible(str(k)): visible_tree(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_tree(v, depth + 1) for v in value]
    return value


def rerun_command(jax_version: str, cell_id: str) -> str:
    """The CLI line that reruns a cell against one JAX version, every part shell-quoted (a build with a local label,
    on no public index, is named by its wheels' folder)."""
    target = "--wheels WHEELS_DIR" if "+" in jax_version else f"--jax {shlex.quote(jax_version)}"
    return f"jax-conformance run {target} -k {shlex.quote(cell_id)}"


def json_for_script(value: Any) -> str:
    """`value` as JSON that is safe inside a `<script>` element and encodable as UTF-8."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr, allow_nan=False)
    except ValueError:  # a non-finite number slipped through: JSON.parse would reject the whole block
        text = json.dumps(visible_tree(value), ensure_ascii=False, separators=(",", ":"), default=repr)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        text.encode("utf-8", "backslashreplace")
        .decode("utf-8")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# ---------------------------------------------------------------- the data block


def _cell_data(result, expected_index: dict[str, int], expected_table: list[Any], word: str) -> dict[str, Any]:
    expected_text = json.dumps(result.expected, sort_keys=True, default=repr)
    if expected_text not in expected_index:
        expected_index[expected_text] = len(expected_table)
        expected_table.append(result.expected)
    data: dict[str, Any] = {"s": result.status.value, "e": expected_index[expected_text]}
    if word != result.status.value:
        data["w"] = word
    if result.observation != result.expected:  # null included: the page then says there is no observation
        data["o"] = visible_tree(result.observation)
    optional = {
        "r": result.reason,
        "d": result.diff,
        "x": result.details,
        "so": result.stdout_tail,
        "se": result.stderr_tail,
        "a": result.attempts,
        "l": result.launcher,
        "pd": result.printed_diff,
        "pe": result.printed_expected,
        "wn": [warning_line(w) for w in result.warnings],
    }
    data.update({k: visible_tree(v) for k, v in optional.items() if v})
    if result.duration_s:
        data["t"] = round(result.duration_s, 3)
    if result.reused:
        data["u"] = 1
    return data


def version_ranks(model: ReportModel) -> dict[str, int]:
    """A rank per version of the columns and of every declared change's bounds, in PEP 440 order, so the page can
    match a declared change to any two columns (`explain_change`'s rule) without parsing versions itself."""
    versions = {c.jax for c in model.columns}
    for row in model.param_rows:
        for change in row.declared_changes:
            versions.update(v for v in change.bounds if v)
    ordered = sorted(versions, key=version_key)
    ranks, rank = {}, -1
    for i, version in enumerate(ordered):
        if i == 0 or version_key(version) != version_key(ordered[i - 1]):
            rank += 1
        ranks[version] = rank
    return ranks


def cell_looks() -> dict[str, Any]:
    """How the page draws a table cell from its status and word (`model.TableCell`'s rules): the compact view's glyph
    per status, and per known-issue word its bug state (the cell's colour) and glyph."""
    return {
        "glyphs": GLYPHS,
        "bugs": {
            KNOWN_ISSUE_PRESENT: ["present", BUG_PRESENT_GLYPH],
            KNOWN_ISSUE_ABSENT: ["absent", BUG_ABSENT_GLYPH],
            KNOWN_ISSUE_CHANGED: ["maybe-fixed", BUG_ABSENT_GLYPH],
        },
    }


def page_data(model: ReportModel) -> dict[str, Any]:
    """The compact data block: what a click shows, kept out of the markup of every cell."""
    expected_index: dict[str, int] = {}
    expected_table: list[Any] = []
    cases, rows, cells = [], [], []
    modules: dict[str, str] = {}
    timelines: dict[str, list[str]] = {}
    for timeline in model.timelines:
        timelines.setdefault(timeline.cell_id, []).append(f"{timeline.platform}: {timeline.text}")
    ranks = version_ranks(model)
    for section_index, section in enumerate(model.sections):
        for block in section.cases:
            if block.module and block.module not in modules:
                modules[block.module] = module_source(block.module)
            cases.append(
                {
                    "id": block.case_id,
                    "section": block.section,
                    "claim": block.claim,
                    "notes": block.notes,
                    "source": block.source,
                    "module": block.module,
                    "probe": block.probe,
                    "env": block.env,
                    "stdin": block.stdin,
                    "rows": block.rows,
                    "si": section_index,
                    "scripts": scripts_used(modules.get(block.module, "")),
                }
            )
            for row in block.params:
                entry = {
                    "c": len(cases) - 1,
                    "p": row.param,
                    "id": row.cell_id,
                    "rows": row.rows,
                    "k": int(row.known_issue),
                    "since": timelines.get(row.cell_id, []),
                }
                if row.label:
                    entry["lb"] = row.label
                if row.discrepancy:
                    entry["disc"] = row.discrepancy
                if row.declared_changes:
                    # [rank of the release after which it changed (-1: none), rank of the release it is in at the
                    # latest, why, evidence, `in 0.8.0`]; the page lists a row's status changes from its cells
                    entry["ch"] = [
                        [ranks[c.bounds[0]] if c.bounds[0] else -1, ranks[c.bounds[1]], c.why, c.evidence, c.range_text]
                        for c in row.declared_changes
                    ]
                rows.append(entry)
                cells.append(
                    [_cell_data(c.result, expected_index, expected_table, c.word) if c.result else 0 for c in row.cells]
                )
    return {
        "suite": conformance.__version__,
        "schema": SCHEMA_VERSION,
        "documented": DOCUMENTED_JAX,
        "columns": [
            {
                "jax": c.jax,
                "platform": c.platform,
                "qv": c.quoted_version,
                "rt": c.run_target,
                "series": c.series,
                "newest": c.newest_in_series,
                "vr": ranks[c.jax],
                "cond": c.conditions,
            }
            for c in model.columns
        ],
        "condcase": MISCOMPILE_CASE,
        "sections": [s.heading for s in model.sections],
        "looks": cell_looks(),
        "cases": cases,
        "rows": rows,
        "cells": cells,
        "expected": expected_table,
        "modules": modules,
        "prelude": prelude(),
        "scripts": script_sources(),
        "mains": [main_template(v) for v in (1, 0)],
    }


# ---------------------------------------------------------------- HTML


def overview_bar(counts: dict[str, int], width: int = 120, height: int = 10) -> str:
    """An inline SVG stacked bar of the counts per status (markup; numbers only, nothing from results)."""
    total = sum(counts.values()) or 1
    x, parts = 0.0, []
    for status in STATUS_ORDER:
        n = counts.get(status, 0)
        if not n:
            continue
        w = width * n / total
        parts.append(
            f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" fill="{BAR_COLOURS[status]}">'
            f"<title>{n} {status}</title></rect>"
        )
        x += w
    return (
        f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="statuses">{"".join(parts)}</svg>'
    )


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["visible"] = visible
    env.filters["nolocal"] = without_local_paths
    env.globals["overview_bar"] = lambda counts: Markup(overview_bar(counts))
    return env


@dataclass(frozen=True)
class PageLinks:
    """The page's links into its own table, in its URL state: a cell (`#cell=ID&at=VERSION`, which opens the cell's
    panel and scrolls to and marks the cell) and a column question (`#col=VERSION&status=STATUS`, the rows with that
    status in that column); `VERSION@PLATFORM` in a report of several platforms."""

    rows: frozenset[str]
    columns: frozenset[tuple[str, str]]
    several_platforms: bool

    @classmethod
    def of(cls, model: ReportModel) -> PageLinks:
        """The links of `model`'s page."""
        return cls(
            frozenset(row.cell_id for row in model.param_rows),
            frozenset((c.jax, c.platform) for c in model.columns),
            len(model.platforms) > 1,
        )

    def cell(self, cell_id: str, jax: str, platform: str) -> str:
        """The link to one cell, or '' when the report has no such row or column."""
        if cell_id not in self.rows or (jax, platform) not in self.columns:
            return ""
        return cell_address("", cell_id, jax, platform if self.several_platforms else "")

    def column(self, jax: str, platform: str, status: str) -> str:
        """The link to the rows with `status` in the column of `jax` on `platform`."""
        at = f"{jax}@{platform}" if self.several_platforms else jax
        return f"#col={quote(at, safe='')}&status={quote(status, safe='')}"


def first_warned(model: ReportModel) -> dict[str, tuple[str, str]]:
    """Per cell id, the (jax, platform) of the first column in which its probe triggered a deprecation warning: where
    the list of deprecated APIs links each of its cells."""
    found: dict[str, tuple[str, str]] = {}
    for row in model.param_rows:
        for column, cell in zip(model.columns, row.cells):
            if cell.result is not None and cell.result.warnings and row.cell_id not in found:
                found[row.cell_id] = (column.jax, column.platform)
    return found


def template_context(
    model: ReportModel,
    generated_at: dt.datetime | str,
    since: SinceView | None = None,
    api: ApiView | None = None,
    chapters: Sequence[ChapterView] = (),
    perf: PerfView | None = None,
    downstream: DownstreamView | None = None,
) -> dict[str, Any]:
    """What the page's template renders from (also what `benchmarks/report_scale.py` renders an older template
    with); `api` is the API section's view (None: no section), `chapters` the chapters run as written, `perf` the
    Performance section's view and `downstream` the downstream suites' (None: no section)."""
    moment = generated_at.isoformat(timespec="seconds") if isinstance(generated_at, dt.datetime) else generated_at
    pages = chapter_pages(chapters, len(model.platforms) > 1)
    data = page_data(model)
    upgrade = upgrade_data(
        [c.jax for c in model.columns] + (api.all_versions if api else []),
        perf.outcome if perf else None,
        probed=probed_releases(model),
        downstream=downstream_pairs(downstream),
    )  # "Everything that changes from A to B"
    back = blocks_of_rows(pages, chapters)
    for row in data["rows"]:  # a probe cell's panel links to the chapter's own code for its rows
        found = [link for row_id in row["rows"] for link in back.get(row_id, [])]
        if found:
            row["bl"] = list({link[0]: link for link in found}.values())
    return dict(
        model=model,
        data_json=json_for_script(data),
        suite_version=conformance.__version__,
        schema_version=SCHEMA_VERSION,
        generated_at=moment,
        statuses=STATUS_ORDER,
        meaning=MEANING,
        letters={s.value: LETTER[s] for s in Status},
        known_wording=KNOWN_ISSUE_WORDING,
        groups=CHANGE_GROUPS,
        documented=DOCUMENTED_JAX,
        glyphs=GLYPHS,
        bug_glyphs=(BUG_PRESENT_GLYPH, BUG_ABSENT_GLYPH),
        since=since,
        run_label=run_label,
        links=PageLinks.of(model),
        first_warned=first_warned(model),
        api=api,
        api_json=json_for_script(api.data()) if api else "",
        chapters=pages,
        chapter_glyphs=BLOCK_GLYPHS,
        chapter_meanings=BLOCK_MEANINGS,
        chapter_json=json_for_script({p.key: p.details for p in pages}) if pages else "",
        perf=perf,
        upgrade=upgrade,
        upgrade_json=json_for_script(upgrade),
        # A report of pages and no probe says only what its pages hold (the template's probes' sections hidden).
        probes=bool(model.param_rows),
        pages_said=pages_said(pages) if pages else "",
        page_changes_said=changes_said(pages),
        downstream=downstream,
        # A report of downstream suites and no probe or page says only what its suites hold.
        suites_only=downstream is not None and not model.param_rows and not pages,
    )


def render_html(
    model: ReportModel,
    generated_at: dt.datetime | str,
    since: SinceView | None = None,
    api: ApiView | None = None,
    chapters: Sequence[ChapterView] = (),
    perf: PerfView | None = None,
    downstream: DownstreamView | None = None,
) -> str:
    """The report as one self-contained HTML page (inline CSS and script, no external resources); `since` adds
    "Since the last run" at the top, `api` the section of every public name per release, `chapters` "The chapter as
    written", `perf` "Performance" and `downstream` "Downstream test suites"."""
    return (
        _environment()
        .get_template(TEMPLATE_NAME)
        .render(**template_context(model, generated_at, since, api, chapters, perf, downstream))
    )


# ---------------------------------------------------------------- writing


def _as_files(paths_or_files: Any) -> list[ResultFile]:
    if isinstance(paths_or_files, (str, Path)):
        return load_results(paths_or_files)
    items = list(paths_or_files)
    if items and all(isinstance(item, ResultFile) for item in items):
        return items
    return load_results(items)


def write_report(
    paths_or_files: PathLike | Iterable[PathLike] | Iterable[ResultFile],
    out_path: PathLike,
    *,
    cases: Sequence[Case] | None = None,
    generated_at: dt.datetime | str | None = None,
    releases: Sequence[str] | None = None,
    outputs: Mapping[str, PathLike] | None = None,
    settings: OutputSettings | None = None,
    since: SinceView | None = None,
    censuses: Sequence[Census] = (),
    chapters: Sequence[ChapterView] = (),
    perf: PerfView | None = None,
    downstream: DownstreamView | None = None,
) -> Path:
    """Render result files to the HTML report at `out_path` (atomically), and the outputs beside it that `outputs`
    asks for (`{format name: path}`, the names of `report.formats.FORMATS`), shaped by `settings` (how full the
    Markdown is, its link, "From A to B", the site's address).

    `releases`, the JAX releases of the package index, let the report name the exact release of each change;
    `since` (`report.since.since_view` of the run history) adds "Since the last run" to the page and the Markdown;
    `censuses` (`api census`, stored beside the results) add the API section and the compat JSON's `api` entries;
    `chapters` (`conformance.chapter.grid.chapter_views` of the results' block cells) "The chapter as written";
    `perf` (`report.perfview.perf_view` of the results' workload samples) the Performance section, `downstream`
    (`report.downstreamview.downstream_view` of the results' downstream cells) "Downstream test suites".
    """
    model = build_model(_as_files(paths_or_files), load_cases() if cases is None else cases, releases)
    moment = generated_at or dt.datetime.now(dt.timezone.utc)
    out, api = Path(out_path), api_view(censuses)
    wanted = {name: Path(path) for name, path in (outputs or {}).items()}
    data = ReportData(
        model,
        moment,
        settings=settings or OutputSettings(),
        since=since,
        api=api,
        censuses=censuses,
        chapters=chapters,
        perf=perf,
        downstream=downstream,
    )
    # Every output first: a --compare naming no column is refused before anything is written.
    rendered = render_outputs(data, wanted)
    write_text_atomically(out, render_html(model, moment, since, api, chapters, perf, downstream))
    write_outputs(rendered, wanted)
    return out
