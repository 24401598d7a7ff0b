"""The Markdown summary of the report, for a CI step summary or a pull request. Pure logic on the report model.

Every string from a result file is flattened to one line and escaped (HTML, code spans, links,
images and table-cell breaks).
"""

from __future__ import annotations

from html import escape as html_escape

from conformance.report.common import STATUS_ORDER, visible
from conformance.report.model import CHANGE_GROUPS, ReportModel


def _md(text: str) -> str:
    """`text` made safe inside Markdown: one line, no live HTML, code spans, links, images or cell breaks."""
    flat = html_escape(" ".join(visible(text).split()), quote=False)
    for char, entity in (("|", "\\|"), ("`", "&#96;"), ("[", "&#91;"), ("]", "&#93;"), ("!", "&#33;")):
        flat = flat.replace(char, entity)
    return flat


def markdown_summary(model: ReportModel, *, cells: bool = True) -> str:
    """Markdown for a CI step summary: the overview per column, what changed, and (optionally) every cell."""
    lines = ["## JAX conformance", "", "| jax | platform | " + " | ".join(STATUS_ORDER) + " | conforming |",
             "|---|---|" + "---|" * (len(STATUS_ORDER) + 1)]
    for column in model.columns:
        counts = " | ".join(str(column.counts.get(s, 0)) for s in STATUS_ORDER)
        lines.append(f"| {_md(column.jax)} | {_md(column.platform)} | {counts} | {column.conforming_text} |")
    for step in model.steps:
        if step.total:
            lines += ["", f"### {_md(step.before)} → {_md(step.after)} ({_md(step.platform)})"]
            for group in CHANGE_GROUPS:
                for change in step.groups[group]:
                    lines.append(f"- {group}: {_md(change.cell_id)} ({_md(change.before)} → {_md(change.after)})")
    if cells:
        heads = [f"{c.jax} ({c.platform})" for c in model.columns]
        lines += ["", "| Section | Cell | " + " | ".join(map(_md, heads)) + " |",
                  "|---|---|" + "---|" * len(heads)]
        for section in model.sections:
            for block in section.cases:
                for row in block.params:
                    name = _md(row.cell_id) + (" (known issue)" if row.known_issue else "")
                    words = " | ".join(_md(c.word) for c in row.cells)
                    lines.append(f"| {_md(section.heading)} | {name} | {words} |")
    return "\n".join(lines) + "\n"
