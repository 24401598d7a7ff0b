"""The conformance report: result files in, one self-contained HTML page (or a Markdown table) out.

Only `write_report` touches files (reading is `conformance.results.load`). `build_table`
turns parsed result files into plain dataclasses, and `render_html` and
`markdown_summary` turn those into text, so all three are pure and testable with
hand-made runs.

A result file is a pytest-json-report file written by the suite's pytest plugin:
its top-level `jax_conformance` object describes the run (`plugin.report_header`)
and each test entry's `metadata` is one cell's result (`verdict.CellResult.to_json`).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import shlex
from html import escape as html_escape
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from packaging.version import InvalidVersion, Version

import conformance
from conformance.atomic import write_text_atomically
from conformance.core.case import Case, load_cases, section_order
from conformance.core.versions import direction
from conformance.results.load import PathLike, load_results
from conformance.results.schema import ResultFile
from conformance.core.status import (KNOWN_ISSUE_ABSENT, KNOWN_ISSUE_CHANGED, KNOWN_ISSUE_PRESENT,
                                     KNOWN_ISSUE_WORDING, MEANING, Status, describe)

NOT_RUN = "not run"
NOT_RUN_MEANING = "no result for this cell in this run"
UNKNOWN_SECTION = "Unknown section"
TEMPLATE_NAME = "report.html.j2"
UNKNOWN = "?"

CellKey = tuple[str, str]  # (case id, param)

# ---------------------------------------------------------------- the table


def pretty_json(value: Any) -> str:
    """`value` as indented JSON for a person to read (non-JSON values by their repr)."""
    return visible(json.dumps(value, indent=2, ensure_ascii=False, default=repr))


def compact_json(value: Any) -> str:
    """`value` as one-line JSON (non-JSON values by their repr)."""
    return visible(json.dumps(value, ensure_ascii=False, default=repr))


def rerun_command(jax_version: str, cell_id: str) -> str:
    """The CLI line that reruns a cell against one JAX version, every part shell-quoted."""
    return f"jax-conformance run --jax {shlex.quote(jax_version)} -k {shlex.quote(cell_id)}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: str) -> str:
    """`text` safe to render and to encode: control characters and lone surrogates shown as escapes."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Cell:
    """One cell of the table: a case parameter's result in one column, or its absence ("not run")."""

    status: Status | None
    word: str
    reason: str = ""
    observation: Any = None
    expected: Any = None
    diff: tuple[Mapping[str, Any], ...] = ()
    details: Any = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_s: float | None = None
    command: str = ""
    rerun: str = ""
    attempts: tuple[Mapping[str, Any], ...] = ()

    @property
    def ran(self) -> bool:
        """Whether the run holds a result for this cell."""
        return self.status is not None

    @property
    def css(self) -> str:
        """The CSS class suffix of the cell's status (`not-run` without a result)."""
        return self.status.value if self.status is not None else "not-run"

    @property
    def traceback(self) -> str:
        """The probe's traceback, for an `error` cell whose details carry one."""
        if isinstance(self.details, Mapping) and isinstance(self.details.get("traceback"), str):
            return self.details["traceback"]
        return ""

    @property
    def other_details(self) -> Any:
        """The details without the traceback (shown on its own); None when nothing is left."""
        if isinstance(self.details, Mapping):
            rest = {k: v for k, v in self.details.items() if k != "traceback" or not self.traceback}
            return rest or None
        return self.details if self.details not in ("", []) else None

    @property
    def duration_text(self) -> str:
        """The duration for display, e.g. `2.23 s`; empty when unknown."""
        return f"{self.duration_s:.2f} s" if self.duration_s is not None else ""


NOT_RUN_CELL = Cell(status=None, word=NOT_RUN)


@dataclass(frozen=True)
class Row:
    """One row: a cell (case id + param) with what the chapter says about it, and its result per column."""

    case_id: str
    param: str
    section: str
    claim: str
    rows: tuple[str, ...]
    known_issue: bool
    notes: str
    source: str
    cells: tuple[Cell, ...]

    @property
    def cell_id(self) -> str:
        """The cell's identifier, e.g. `numerics.debug_nans_vmap_miss[vmap]`."""
        return f"{self.case_id}[{self.param}]" if self.param else self.case_id


@dataclass(frozen=True)
class Section:
    """The rows of one chapter section, under its heading."""

    title: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Column:
    """One run (a JAX version on a platform): what it ran on, and its counts per status."""

    jax: str
    jaxlib: str
    numpy: str
    python: str
    platform: str
    backend: str
    suite_version: str
    finished_at: str
    sources: tuple[str, ...]
    counts: Mapping[str, int]
    conforming_percent: float | None

    @property
    def label(self) -> str:
        """The column's heading, e.g. `jax 0.12.0.1`."""
        return f"jax {self.jax}"

    @property
    def conforming_text(self) -> str:
        """The conforming share for display, e.g. `91.7%`, or `–` when nothing counts."""
        if self.conforming_percent is None:
            return "–"
        return f"{self.conforming_percent:.1f}".rstrip("0").rstrip(".") + "%"


@dataclass(frozen=True)
class ReportTable:
    """Everything the report shows: the columns (sorted by JAX version) and the rows grouped by section."""

    columns: tuple[Column, ...]
    sections: tuple[Section, ...]

    @property
    def rows(self) -> tuple[Row, ...]:
        """Every row, section after section."""
        return tuple(row for section in self.sections for row in section.rows)


@dataclass
class _Run:
    """The results of one (jax version, platform), merged from one or more result files."""

    header: dict[str, Any]
    sources: list[str] = field(default_factory=list)
    results: dict[CellKey, dict[str, Any]] = field(default_factory=dict)


def _text(value: Any) -> str:
    """A header value for display; `?` when it is missing."""
    return UNKNOWN if value in (None, "") else str(value)


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key of a version string: PEP 440 order, unparseable versions after all others, by text."""
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def merge_runs(files: Iterable[ResultFile]) -> list[_Run]:
    """One `_Run` per (jax version, platform), sorted by JAX version then platform.

    Several files for the same version and platform (shards, or a full run and a rerun of
    one case) merge cell by cell; the file that finished last wins a cell.
    """
    ordered = sorted(files, key=lambda f: f.header.finished_at)
    merged: dict[tuple[str, str], _Run] = {}
    for result_file in ordered:
        header = result_file.header.to_json()
        key = (result_file.header.jax, result_file.header.platform)
        run = merged.setdefault(key, _Run(header=header))
        run.header = header
        run.sources.append(result_file.source)
        run.results.update({(c.case, c.param): c.to_json() for c in result_file.cells})
    return [merged[key] for key in sorted(merged, key=lambda k: (version_key(k[0]), k[1]))]


def make_cell(result: Mapping[str, Any] | None, jax_version: str, known_issue: bool) -> Cell:
    """The table cell for one result (None: not run), with the word a person reads for its status."""
    if result is None:
        return NOT_RUN_CELL
    status = Status(result["status"])
    word = describe(status, known_issue, direction(jax_version))
    if result.get("observation_verdict") and status in (Status.CRASH, Status.TIMEOUT):
        word += f" (observation {result['observation_verdict']})"
    return Cell(
        status=status,
        word=word,
        reason=visible(result.get("reason") or ""),
        observation=result.get("observation"),
        expected=result.get("expected"),
        diff=tuple(result.get("diff") or ()),
        details=result.get("details"),
        stdout_tail=visible(result.get("stdout_tail") or ""),
        stderr_tail=visible(result.get("stderr_tail") or ""),
        duration_s=result.get("duration_s"),
        command=result.get("command") or "",
        rerun=rerun_command(jax_version, f"{result['case']}[{result['param']}]" if result.get("param")
                            else result["case"]),
        attempts=tuple(result.get("attempts") or ()),
    )


def _reported_rows(key: CellKey, runs: Sequence[_Run]) -> tuple[str, ...]:
    """The row IDs a cell's results report, for a cell the loaded cases do not declare."""
    for run in reversed(runs):
        if key in run.results:
            return tuple(run.results[key].get("rows") or ())
    return ()


def make_row(key: CellKey, case: Case | None, runs: Sequence[_Run]) -> Row:
    """The row of one cell: the case's declaration (when known) and a cell per run."""
    case_id, param = key
    reported = next((run.results[key] for run in reversed(runs) if key in run.results), {})
    known_issue = case.is_known_issue(param) if case else bool(reported.get("known_issue"))
    declared = case is not None and param in case.param_names
    return Row(
        case_id=case_id,
        param=param,
        section=case.heading if case else UNKNOWN_SECTION,
        claim=case.claim if case else "",
        rows=tuple(case.rows(param)) if declared else _reported_rows(key, runs),
        known_issue=known_issue,
        notes=case.notes if case else "",
        source=case.source() if case else "",
        cells=tuple(make_cell(run.results.get(key), _text(run.header.get("jax")),
                              known_issue and bool((run.results.get(key) or {}).get("known_issue", True)))
                    for run in runs),
    )


def section_key(title: str) -> tuple[Any, ...]:
    """Sort key of a section heading: numbers in numeric order (§5.3 before §10), the unknown section last."""
    if title == UNKNOWN_SECTION:
        return (1, [])
    return (0, section_order(title))


def _row_key(row: Row, cases: Mapping[str, Case], order: Mapping[str, int]) -> tuple[Any, ...]:
    """Sort key of a row inside its section: declaration order of cases and params, unknown ones after."""
    case = cases.get(row.case_id)
    params = case.param_names if case else ()
    param_key = (0, params.index(row.param)) if row.param in params else (1, row.param)
    return (order.get(row.case_id, len(order)), row.case_id, param_key)


def group_rows(rows: Iterable[Row], cases: Mapping[str, Case]) -> tuple[Section, ...]:
    """The rows grouped by section, sections in chapter order and rows in declaration order."""
    order = {case_id: i for i, case_id in enumerate(cases)}
    by_section: dict[str, list[Row]] = {}
    for row in rows:
        by_section.setdefault(row.section, []).append(row)
    return tuple(
        Section(title, tuple(sorted(by_section[title], key=lambda r: _row_key(r, cases, order))))
        for title in sorted(by_section, key=section_key)
    )


def count_statuses(cells: Iterable[Cell]) -> dict[str, int]:
    """How many cells have each status (every status, in vocabulary order), plus `not run`."""
    counts = {status.value: 0 for status in Status}
    counts[NOT_RUN] = 0
    for cell in cells:
        counts[cell.status.value if cell.status is not None else NOT_RUN] += 1
    return counts


def conforming_percent(counts: Mapping[str, int]) -> float | None:
    """Conforming cells as a percentage of the cells with a result, not counting skipped ones."""
    counted = sum(n for word, n in counts.items() if word not in (NOT_RUN, Status.SKIPPED.value))
    return 100.0 * counts[Status.CONFORMS.value] / counted if counted else None


def make_column(run: _Run, cells: Iterable[Cell]) -> Column:
    """The column of one run, with its counts over `cells` (its cell in every row)."""
    header = run.header
    counts = count_statuses(cells)
    return Column(
        jax=_text(header.get("jax")),
        jaxlib=_text(header.get("jaxlib")),
        numpy=_text(header.get("numpy")),
        python=_text(header.get("python")),
        platform=_text(header.get("platform")),
        backend=_text(header.get("backend")),
        suite_version=_text(header.get("suite_version")),
        finished_at=_text(header.get("finished_at")),
        sources=tuple(run.sources),
        counts=counts,
        conforming_percent=conforming_percent(counts),
    )


def build_table(runs: Iterable[ResultFile], cases: Iterable[Case] | None = None) -> ReportTable:
    """The report's table from result files (as `results.load` reads them).

    `cases` are the declared cases that give each row its section, claim, notes and
    probe source (default: `load_cases()`); a cell whose case is not among them
    still shows, under "Unknown section". Rows are the cells found in the runs.
    """
    declared = {case.id: case for case in (load_cases() if cases is None else cases)}
    merged = merge_runs(runs)
    keys = dict.fromkeys(key for run in merged for key in run.results)
    rows = [make_row(key, declared.get(key[0]), merged) for key in keys]
    columns = tuple(make_column(run, (row.cells[i] for row in rows)) for i, run in enumerate(merged))
    return ReportTable(columns=columns, sections=group_rows(rows, declared))


# ---------------------------------------------------------------- rendering


@dataclass(frozen=True)
class LegendEntry:
    """One line of the legend: a status word, its CSS class suffix and its meaning."""

    word: str
    css: str
    meaning: str


def legend() -> tuple[LegendEntry, ...]:
    """Every status with its meaning, then `not run`."""
    entries = [LegendEntry(status.value, status.value, MEANING[status]) for status in Status]
    return (*entries, LegendEntry(NOT_RUN, "not-run", NOT_RUN_MEANING))


def known_issue_legend() -> tuple[tuple[LegendEntry, str], ...]:
    """For each status worded differently on known-issue rows: the entry and the plain word it replaces."""
    plain = {KNOWN_ISSUE_PRESENT: Status.CONFORMS, KNOWN_ISSUE_ABSENT: Status.DIFFERS,
             KNOWN_ISSUE_CHANGED: Status.DIFFERS}
    return tuple((LegendEntry(word, plain[word].value, meaning), plain[word].value)
                 for word, meaning in KNOWN_ISSUE_WORDING.items())


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The Jinja2 environment of the report templates (autoescaping on, undefined names an error)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pretty_json"] = pretty_json
    env.filters["compact_json"] = compact_json
    return env


def _timestamp(moment: dt.datetime | str) -> str:
    """A generation time for display: ISO 8601 to the second."""
    return moment.isoformat(timespec="seconds") if isinstance(moment, dt.datetime) else str(moment)


def render_html(table: ReportTable, generated_at: dt.datetime | str) -> str:
    """The report as one self-contained HTML page (inline CSS, no scripts, no external resources)."""
    template = _environment().get_template(TEMPLATE_NAME)
    return template.render(
        table=table,
        legend=legend(),
        known_issue_legend=known_issue_legend(),
        suite_version=conformance.__version__,
        generated_at=_timestamp(generated_at),
        not_run=NOT_RUN,
    )


def _md(text: str) -> str:
    """`text` made safe inside a Markdown table cell: one line, no live HTML, no code spans, no cell breaks."""
    flat = html_escape(" ".join(visible(text).split()), quote=False)
    return flat.replace("|", "\\|").replace("`", "&#96;")


def markdown_summary(table: ReportTable) -> str:
    """A Markdown table for docs authors: one row per cell, one column per run, the status word in each."""
    heads = [f"{c.label} ({c.platform})" for c in table.columns]
    lines = ["| Section | Cell | " + " | ".join(map(_md, heads)) + " |",
             "|---|---|" + "---|" * len(heads)]
    for row in table.rows:
        name = _md(row.cell_id) + (" (known issue)" if row.known_issue else "")
        words = " | ".join(_md(cell.word) for cell in row.cells)
        lines.append(f"| {_md(row.section)} | {name} | {words} |")
    lines.append("| | % conforming | " + " | ".join(c.conforming_text for c in table.columns) + " |")
    return "\n".join(lines) + "\n"


def _as_runs(paths_or_runs: Any) -> list[ResultFile]:
    """Result files as given, or loaded from paths."""
    if isinstance(paths_or_runs, (str, os.PathLike)):
        return load_results(paths_or_runs)
    items = list(paths_or_runs)
    if items and all(isinstance(item, ResultFile) for item in items):
        return items
    return load_results(items)


def write_report(
    paths_or_runs: PathLike | Iterable[PathLike] | Iterable[ResultFile],
    out_path: PathLike,
    *,
    cases: Iterable[Case] | None = None,
    generated_at: dt.datetime | str | None = None,
    markdown_path: PathLike | None = None,
) -> Path:
    """Render result files (paths or already parsed runs) to an HTML report at `out_path`, atomically.

    With `markdown_path`, the Markdown summary is written there too.
    """
    table = build_table(_as_runs(paths_or_runs), cases)
    moment = generated_at or dt.datetime.now(dt.timezone.utc)
    out = Path(out_path)
    write_text_atomically(out, render_html(table, moment))
    if markdown_path is not None:
        write_text_atomically(markdown_path, markdown_summary(table))
    return out
