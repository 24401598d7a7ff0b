"""Compatibility data for other tools, in the shape of MDN's published browser-compat-data (BCD). Pure logic on the
report model.

The file is BCD's public build format, with JAX platforms where BCD has browsers:

- `__meta`: BCD's release metadata (`version`, the suite's; `timestamp`);
- `browsers`: one entry per platform (`linux-x86_64`, ...) with the JAX releases measured there as its releases;
- `jax`: one feature per chapter row, nested by the row ID's dotted parts, each with a `__compat` statement:
  `description` (the row's own summary in the row list, not its case's claim, which several rows share), `source_file`
  (the case module), `support` (per platform, BCD support
  statements over the final releases measured: `version_added`, the first release of a span where the row behaves
  as the chapter says, `≤0.4.38` when it already does on the oldest; `version_removed` and `version_last` where the
  span ends, as BCD puts them; `partial_implementation` where only some of the row's cells do; `notes`, short HTML
  with a link to the cell) and `status`. A row that documents a JAX bug (a known issue) is a feature of its own
  whose description starts "Known issue, a JAX bug (where this reads as supported, the bug is present)": its support
  reads as the bug being present, where BCD readers look;
- `api` (when the results hold censuses, `conformance.api`): BCD's own category, every public JAX name as a feature
  whose `version_added`, `version_removed` and `status.deprecated` are computed from the release's census;
- `jax_conformance`: what BCD has no place for: the format's name and version, the documented release, each row's
  cells, and `known_issues`, the rows that document a JAX bug (where `conforms` means the bug reproduces), as a tree
  of their own with the bug's state per release in the report's words.

The part BCD readers read validates against BCD's own schemas (tests/bcd/, with the commit they came from) with
the browser names replaced by the platform names (docs/result-format.md). The project's schema of the whole file is
`schemas/compat.schema.json`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from packaging.version import InvalidVersion, Version

import conformance
from conformance.core.rowlist import load_rows
from conformance.core.status import Status
from conformance.core.versions import DOCUMENTED_JAX
from conformance.report.common import cell_address, page_address, visible
from conformance.report.model import CaseBlock, ParamRow, ReportModel, TableCell
from conformance.report.spans import Span, platform_states, spans

FORMAT = "jax-conformance compat"
FORMAT_VERSION = 3
KNOWN_ISSUE_LEAD = "Known issue, a JAX bug (where this reads as supported, the bug is present): "
# How a cell's status reads in a sentence (`<code>a.p[y]</code> differs in 0.6.0`).
_STATUS_VERB = {
    "conforms": "conforms",
    "differs": "differs",
    "unsupported": "is unsupported",
    "error": "ends in an error",
    "crash": "crashes",
    "timeout": "times out",
    "skipped": "is skipped",
    "flaky": "is flaky",
}
FULL, PARTIAL, NONE = "full", "partial", "none"
NOTE_CHARS = 300  # BCD's notes are a sentence or two; the whole why is one click away, on the page


def is_final(version: str) -> bool:
    """Whether `version` is a final release: what BCD's version strings (`\\d+(\\.\\d+)*`) can name."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return False
    return not (parsed.is_prerelease or parsed.is_devrelease or parsed.is_postrelease or parsed.local)


def html_note(text: str, limit: int = NOTE_CHARS) -> str:
    """Prose of the suite (code in backticks) as a short HTML note: escaped, each `…` a `<code>`; a text longer than
    `limit` characters is cut to its first sentence, or at a word before `limit` with `…`."""
    flat = " ".join(visible(text).split())
    if len(flat) > limit:
        first = re.match(r"(.+?[.!?])(?=\s+[A-Z(`]|$)", flat)
        if first and len(first.group(1)) <= limit:
            flat = first.group(1)
        else:
            flat = flat[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    parts = flat.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick (a cut code span): no code element
        parts = [flat.replace("`", "")]
    return "".join(f"<code>{_text(p)}</code>" if i % 2 else _text(p) for i, p in enumerate(parts))


def _text(value: str) -> str:
    return html.escape(value, quote=False)


def _link(page: str, cell_id: str, jax: str, platform: str, several: bool, words: str) -> str:
    href = cell_address(page, cell_id, jax, platform if several else "")
    return f'<a href="{html.escape(href, quote=True)}">{_text(words)}</a>'


def _state(cells: list[TableCell]) -> str:
    conforming = sum(c.status == Status.CONFORMS.value for c in cells)
    return FULL if conforming == len(cells) else PARTIAL if conforming else NONE


def _partial_note(span: Span[str], members: Sequence[ParamRow], index: dict[str, int]) -> str:
    """Which of the row's cells do not behave as the chapter says over the span, and what they are instead, release
    by release (`unsupported` where its API is not there yet is not `differs`)."""
    releases = list(index)
    inside = releases[releases.index(span.first) : releases.index(span.last) + 1]
    others = []
    for row in members:
        states = [
            (release, row.cells[index[release]].status)
            for release in inside
            if row.cells[index[release]].result is not None
        ]
        if any(status != Status.CONFORMS.value for _, status in states):
            parts = [
                f"{_text(_STATUS_VERB.get(part.state, 'is ' + part.state))} in {_text(part.text)}"
                for part in spans(states)
            ]
            told = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
            others.append(f"<code>{_text(row.cell_id)}</code> {told}")
    good = len(members) - len(others)
    return (
        f"In {_text(span.text)}, {good} of this row's {len(members)} cells behave{'s' if good == 1 else ''} as the "
        f"chapter says; " + "; ".join(others) + "."
    )


class _Context:
    """What every statement of one file shares: the model, the page's address and whether several platforms."""

    def __init__(self, model: ReportModel, page: str) -> None:
        self.model = model
        self.page = page
        self.several = len(model.platforms) > 1

    def releases(self, platform: str) -> dict[str, int]:
        """The final releases measured on `platform`, with their column index, oldest first (not the builds of
        their own, which carry a release's number without being that release)."""
        return {
            c.jax: i
            for i, c in enumerate(self.model.columns)
            if c.platform == platform and is_final(c.jax) and not c.build
        }


def _change_note(context: _Context, members: Sequence[ParamRow], platform: str, before: str, after: str) -> str:
    """The why of the status change between two releases, short, with a link to the cell that changed."""
    for row in members:
        explained = row.why(before, after)
        if explained is not None:
            link = _link(context.page, row.cell_id, after, platform, context.several, "why and evidence")
            return f"{html_note(explained.why)} ({link})"
    return ""


def support_statement(
    context: _Context, members: Sequence[ParamRow], platform: str, discrepancy: str
) -> dict[str, Any] | list[dict[str, Any]] | None:
    """BCD support for a row made of the cells `members` on `platform`: one statement, or an array of them (newest
    first) where support comes and goes; None when nothing was measured there."""
    index = context.releases(platform)
    columns = [context.model.columns[i] for i in index.values()]
    states = platform_states(columns, [[row.cells[i] for row in members] for i in index.values()], platform, _state)
    if not states:
        return None
    measured = [release for release, _ in states]
    runs = [s for s in spans(states) if s.state != NONE]
    if not runs:
        note = discrepancy or f"Not as the chapter says on any measured release ({measured[0]}–{measured[-1]})."
        return {"version_added": False, "notes": note}
    statements = []
    for k, run in enumerate(reversed(runs)):
        statement: dict[str, Any] = {"version_added": f"≤{run.first}" if run.first == measured[0] else run.first}
        notes = []
        if run.next:
            statement["version_removed"], statement["version_last"] = run.next, run.last
            notes.append(_change_note(context, members, platform, run.last, run.next))
        if run.first != measured[0]:
            notes.append(_change_note(context, members, platform, measured[measured.index(run.first) - 1], run.first))
        if run.state == PARTIAL:
            statement["partial_implementation"] = True
            notes.insert(0, _partial_note(run, members, index))
        if k == 0 and discrepancy:
            notes.append(discrepancy)
        notes = [n for n in dict.fromkeys(notes) if n]
        if notes:
            statement["notes"] = notes[0] if len(notes) == 1 else notes
        statements.append(statement)
    return statements[0] if len(statements) == 1 else statements


def bug_states(context: _Context, members: Sequence[ParamRow], platform: str) -> dict[str, str]:
    """Per measured release of `platform`, the known issue's state in the report's words (`bug still present`,
    `bug absent`, `changed: maybe fixed`, or the status where the probe did not get that far)."""
    out = {}
    for i, column in enumerate(context.model.columns):
        if column.platform != platform or column.build or not any(row.known_at[i] for row in members):
            continue
        words = list(dict.fromkeys(row.cells[i].word for row in members if row.cells[i].result is not None))
        if words:
            out[column.jax] = "; ".join(words)
    return out


def _known_on(members: Sequence[ParamRow], model: ReportModel, platform: str) -> bool:
    return any(
        row.known_at[i]
        for row in members
        for i, c in enumerate(model.columns)
        if c.platform == platform and not c.build
    )


def _discrepancy_note(context: _Context, members: Sequence[ParamRow], platform: str) -> str:
    documented = context.releases(platform).get(DOCUMENTED_JAX)
    for row in members:
        if row.discrepancy and documented is not None and row.cells[documented].status != Status.CONFORMS.value:
            link = _link(context.page, row.cell_id, DOCUMENTED_JAX, platform, context.several, "measured why")
            return f"The chapter is wrong on {DOCUMENTED_JAX}: {html_note(row.discrepancy)} ({link})"
    return ""


def _deprecated(members: Sequence[ParamRow], model: ReportModel) -> bool:
    """Whether the row's probe triggers a deprecation warning on the newest release measured."""
    newest = [
        i
        for i, c in enumerate(model.columns)
        if not c.build and any(row.cells[i].result is not None for row in members)
    ]
    return bool(newest) and any(
        row.cells[newest[-1]].result is not None and row.cells[newest[-1]].result.warnings for row in members
    )


def _source_file(block: CaseBlock) -> str:
    return block.module.replace(".", "/") + ".py" if block.module else "unknown"


def _key(part: str) -> str:
    """A row ID's part as a BCD feature name (`[a-zA-Z_0-9-$@]*`, never a `__` name)."""
    part = re.sub(r"[^a-zA-Z_0-9$@-]", "_", part)
    return "_" + part.lstrip("_") if part.startswith("__") else part or "_"


def _place(tree: dict[str, Any], row_id: str, leaf: str, value: dict[str, Any]) -> None:
    node = tree
    for part in row_id.split("."):
        node = node.setdefault(_key(part), {})
    node[leaf] = value


def browsers_block(model: ReportModel) -> dict[str, Any]:
    """BCD's `browsers`, one per platform: its name, and the JAX releases measured there as its releases (the newest
    final one `current`, older ones `retired`; pre-releases `beta`, dev and local builds `nightly`)."""
    block = {}
    for platform in model.platforms:
        versions = [c.jax for c in model.columns if c.platform == platform and not c.build]
        finals = [v for v in versions if is_final(v)]
        releases = {}
        for version in versions:
            if is_final(version):
                status = "current" if version == finals[-1] else "retired"
            else:
                status = (
                    "beta"
                    if Version(version).is_prerelease
                    and not Version(version).is_devrelease
                    and not Version(version).local
                    else "nightly"
                )
            releases[version] = {"status": status}
        block[platform] = {
            "name": f"JAX on {platform}",
            "type": "server",
            "accepts_flags": False,
            "accepts_webextensions": False,
            "releases": releases,
        }
    return block


API_SOURCE_FILE = "conformance/api/census.py"  # what computes the `api` entries: the census of each release


def _with_source_file(tree: dict[str, Any]) -> dict[str, Any]:
    """`conformance.api.table.compat_entries`' tree with BCD's `source_file` in each statement: the file of this
    repository that computes it (an API entry is measured by the census, never written by hand)."""
    out = {}
    for key, value in tree.items():
        out[key] = {**value, "source_file": API_SOURCE_FILE} if key == "__compat" else _with_source_file(value)
    return out


def _row_support(context: _Context, members: Sequence[ParamRow]) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """A row's BCD support per platform, its known issue's state per platform and release, and whether it is a
    known issue on some platform (its support then reads as the bug being present)."""
    support, bugs, known_here = {}, {}, False
    for platform in context.model.platforms:
        if _known_on(members, context.model, platform):
            known_here = True
            if states := bug_states(context, members, platform):
                bugs[platform] = states
            note = ""
        else:
            note = _discrepancy_note(context, members, platform)
        if (found := support_statement(context, members, platform, note)) is not None:
            support[platform] = found
    return support, bugs, known_here


def row_summaries() -> dict[str, str]:
    """Each row's own summary in the project's row list (`core/rows.tsv`, from behaviours.md)."""
    return {row.id: row.summary for row in load_rows()}


def feature_description(row_id: str, claim: str, summaries: dict[str, str]) -> str:
    """A row's BCD description: its own summary in the row list, not its case's claim, which several rows share and
    which, for the siblings of a known issue, describes the bug; the claim where the row list says no more
    (`KNOWN ISSUE 2.`) or has no such row."""
    own = " ".join(summaries.get(row_id, "").split())
    return own if own and not re.match(r"KNOWN ISSUE\b", own) else claim


def compat_data(
    model: ReportModel,
    generated_at: str = "",
    *,
    html_link: str = "index.html",
    site_url: str = "",
    api: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The compat JSON (see the module's docstring); its notes link to cells of the page at `html_link`, made
    absolute against `site_url` when one is given. `api` (`conformance.api.table.compat_entries` of the stored
    censuses) becomes BCD's `api` category: every public JAX name, when it was added, deprecated and removed."""
    context = _Context(model, page_address(html_link, site_url))
    grouped: dict[str, list[tuple[CaseBlock, ParamRow]]] = {}
    for section in model.sections:
        for block in section.cases:
            for row in block.params:
                for row_id in row.rows or [row.cell_id.replace("[", ".").rstrip("]")]:
                    grouped.setdefault(row_id, []).append((block, row))
    features: dict[str, Any] = {}
    known: dict[str, Any] = {}
    cells: dict[str, list[str]] = {}
    summaries = row_summaries()
    for row_id, entries in grouped.items():
        block, members = entries[0][0], [row for _, row in entries]
        claim = " ".join(visible(block.claim).split())
        cells[row_id] = [row.cell_id for row in members]
        support, bugs, known_here = _row_support(context, members)
        description = KNOWN_ISSUE_LEAD + claim if known_here else feature_description(row_id, claim, summaries)
        if support:
            _place(
                features,
                row_id,
                "__compat",
                {
                    "description": description,
                    "source_file": _source_file(block),
                    "support": support,
                    "status": {
                        "experimental": False,
                        "standard_track": False,
                        "deprecated": _deprecated(members, model),
                    },
                },
            )
        if bugs:
            _place(
                known,
                row_id,
                "__known_issue",
                {"description": claim, "source_file": _source_file(block), "cells": cells[row_id], "bug": bugs},
            )
    return {
        "__meta": {"version": conformance.__version__, "timestamp": generated_at},
        "browsers": browsers_block(model),
        **({"api": _with_source_file(api)} if api else {}),
        "jax": features,
        "jax_conformance": {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "documented": DOCUMENTED_JAX,
            "cells": cells,
            "known_issues": known,
        },
    }
