"""The Markdown summary of the report, for a CI step summary or a pull request. Pure logic on the report model.

Every string from a result file is flattened to one line and escaped (HTML, code spans, links,
images and table-cell breaks).
"""

from __future__ import annotations

import json
from html import escape as html_escape

from conformance.core.versions import DOCUMENTED_JAX
from conformance.report.common import STATUS_ORDER, visible
from conformance.report.model import CHANGE_GROUPS, ReportModel


def _md(text: str) -> str:
    """`text` made safe inside Markdown: one line, no live HTML, code spans, links, images or cell breaks."""
    flat = html_escape(" ".join(visible(text).split()), quote=False)
    for char, entity in (("|", "\\|"), ("`", "&#96;"), ("[", "&#91;"), ("]", "&#93;"), ("!", "&#33;")):
        flat = flat.replace(char, entity)
    return flat


def markdown_summary(model: ReportModel, *, cells: bool = True) -> str:
    """Markdown for a CI step summary: the overview per column, where the documented release differs from the
    chapter, since which release each known issue and each changing row behaves as it does (exact releases
    where every release between has a result), what changed, and (optionally) every cell."""
    lines = ["## JAX conformance", "",
             "| jax | platform | " + " | ".join(STATUS_ORDER) + " | conforming | printed output differs |",
             "|---|---|" + "---|" * (len(STATUS_ORDER) + 2)]
    for column in model.columns:
        counts = " | ".join(str(column.counts.get(s, 0)) for s in STATUS_ORDER)
        lines.append(f"| {_md(column.label)} | {_md(column.platform)} | {counts} | {column.conforming_text} | "
                     f"{column.printed_differs} |")
    lines += ["", f"### Where JAX {DOCUMENTED_JAX} differs from the chapter", ""]
    if not model.discrepancies:
        lines.append("None: on the documented release every asserted fact holds.")
    for found in model.discrepancies:
        observed = "; ".join(f"{d.get('path')}: expected {json.dumps(d.get('expected'), default=repr)}, observed "
                             f"{json.dumps(d.get('observed'), default=repr)}" for d in found.result.diff)
        lines.append(f"- {_md(found.cell_id)} ({_md(found.platform)}): the chapter: {_md(found.claim)} "
                     f"Observed: {_md(observed or found.result.reason)}. "
                     + (f"Why: {_md(found.note)}" if found.note else "No note yet: unexplained."))
    changing = {row.cell_id for row in model.param_rows if row.changes}
    knowns = [t for t in model.timelines if t.known_issue]
    others = [t for t in model.timelines if not t.known_issue and t.cell_id in changing]
    if knowns or others:
        lines += ["", "### Since which release", ""]
        lines += [f"- known issue {_md(t.cell_id)} ({_md(t.platform)}): {_md(t.text)}" for t in knowns]
        lines += [f"- {_md(t.cell_id)} ({_md(t.platform)}): {_md(t.text)}" for t in others]
    for step in model.steps:
        if step.total:
            lines += ["", f"### {_md(step.before)} → {_md(step.after)} ({_md(step.platform)})"]
            for group in CHANGE_GROUPS:
                for change in step.groups[group]:
                    lines.append(f"- {group}: {_md(change.cell_id)} ({_md(change.before)} → {_md(change.after)})")
    if cells:
        heads = [f"{c.label} ({c.platform})" for c in model.columns]
        lines += ["", "| Section | Cell | " + " | ".join(map(_md, heads)) + " |",
                  "|---|---|" + "---|" * len(heads)]
        for section in model.sections:
            for block in section.cases:
                for row in block.params:
                    name = _md(row.cell_id) + (" (known issue)" if row.known_issue else "")
                    words = " | ".join(_md(c.word) + (" (printed output differs)" if c.printed_differs else "")
                                       for c in row.cells)
                    lines.append(f"| {_md(section.heading)} | {name} | {words} |")
    return "\n".join(lines) + "\n"
