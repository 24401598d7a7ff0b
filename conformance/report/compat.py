"""Compatibility data for other tools, shaped like MDN's browser-compat-data (BCD). Pure logic on the report model.

One entry per chapter row (`numerics.debug_nans.vmap_miss.with`), nested by its dotted parts as BCD nests
features, each with a `__compat` statement. Its `support` holds, per platform, BCD support statements over
the releases that were measured: `version_added` (the first release of a span where the row behaves as the
chapter says; `≤0.4.38` when it already does on the oldest measured release), `version_removed` (the first
measured release after the span where it does not), `version_last` (the span's last release; an addition to
BCD), `partial_implementation` where only some of the row's cells conform, and `notes` with the why. Spans
where support comes and goes are an array, newest first, as in BCD; a row that never conforms has
`version_added: false`. A known-issue row ("conforms" means the documented bug reproduces) also has
`known_issue`: its state per platform and release. The JSON Schema is `schemas/compat.schema.json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import conformance
from conformance.core.status import Status
from conformance.core.versions import DOCUMENTED_JAX
from conformance.report.common import visible
from conformance.report.model import CaseBlock, ParamRow, ReportModel, TableCell
from conformance.report.notes import row_notes
from conformance.report.spans import Span, platform_states, spans

FORMAT_VERSION = 1
FULL, PARTIAL, NONE = "full", "partial", "none"


def _state(cells: list[TableCell]) -> str:
    conforming = sum(c.status == Status.CONFORMS.value for c in cells)
    return FULL if conforming == len(cells) else PARTIAL if conforming else NONE


def _notes(notes: list[str]) -> dict[str, Any]:
    """BCD's `notes`: one string, or an array of two or more."""
    return {} if not notes else {"notes": notes[0]} if len(notes) == 1 else {"notes": notes}


def _statement(span: Span[str], oldest: str, members: Sequence[ParamRow], conforming_at_last: list[str],
               notes: list[str]) -> dict[str, Any]:
    statement: dict[str, Any] = {"version_added": f"≤{span.first}" if span.first == oldest else span.first}
    if span.next:
        statement["version_removed"] = span.next
    statement["version_last"] = span.last
    if span.state == PARTIAL:
        statement["partial_implementation"] = True
        notes = [f"In {span.text}, only some of this row's {len(members)} cells behave as the chapter says "
                 f"(in {span.last}: {', '.join(conforming_at_last)})."] + notes
    return {**statement, **_notes(notes)}


def support_statement(model: ReportModel, members: Sequence[ParamRow], platform: str,
                      notes: list[str]) -> dict[str, Any] | list[dict[str, Any]]:
    """BCD support for a row made of the cells `members` on `platform`: one statement, or an array of them
    (newest first) where support comes and goes; `version_added: null` when nothing was measured."""
    per_column = [[row.cells[i] for row in members] for i in range(len(model.columns))]
    states = platform_states(model.columns, per_column, platform, _state)
    if not states:
        return {"version_added": None}
    runs = [s for s in spans(states) if s.state != NONE]
    if not runs:
        return {"version_added": False, **_notes(notes)}
    index = {c.jax: i for i, c in enumerate(model.columns) if c.platform == platform}
    statements = []
    for k, run in enumerate(reversed(runs)):
        at_last = [row.cell_id for row in members if row.cells[index[run.last]].status == Status.CONFORMS.value]
        statements.append(_statement(run, states[0][0], members, at_last, notes if k == 0 else []))
    return statements[0] if len(statements) == 1 else statements


def known_issue_states(model: ReportModel, members: Sequence[ParamRow], platform: str) -> dict[str, str]:
    """Per measured release of `platform`, the known issue's state in the report's words (`bug still present`,
    `bug absent`, `changed: maybe fixed`, or the status where the probe did not get that far)."""
    out = {}
    for i, column in enumerate(model.columns):
        if column.platform != platform or not any(row.known_at[i] for row in members):
            continue
        words = list(dict.fromkeys(row.cells[i].word for row in members if row.cells[i].result is not None))
        if words:
            out[column.jax] = "; ".join(words)
    return out


def _key(part: str) -> str:
    """A row ID's part as an identifier key: never one of BCD's reserved `__` names."""
    return "_" + part.lstrip("_") if part.startswith("__") else part or "_"


def compat_data(model: ReportModel, generated_at: str = "") -> dict[str, Any]:
    """The compat JSON: `__meta` (generator, timestamp, documented release, measured releases per platform) and one
    `__compat` entry per chapter row, nested by the row ID's dotted parts."""
    grouped: dict[str, list[tuple[CaseBlock, ParamRow]]] = {}
    for section in model.sections:
        for block in section.cases:
            for row in block.params:
                for row_id in row.rows or [row.cell_id.replace("[", ".").rstrip("]")]:
                    grouped.setdefault(row_id, []).append((block, row))
    releases = {p: [c.jax for c in model.columns if c.platform == p] for p in model.platforms}
    data: dict[str, Any] = {"__meta": {
        "format": "jax-conformance compat", "format_version": FORMAT_VERSION,
        "generator": f"jax-conformance {conformance.__version__}", "timestamp": generated_at,
        "documented": DOCUMENTED_JAX, "releases": releases}}
    for row_id, entries in grouped.items():
        members = [row for _, row in entries]
        notes = list(dict.fromkeys(n for block, row in entries for n in row_notes(block, row)))
        compat: dict[str, Any] = {
            "description": " ".join(visible(entries[0][0].claim).split()),
            "cells": [row.cell_id for row in members],
            "support": {p: support_statement(model, members, p, notes) for p in model.platforms},
        }
        known = {p: states for p in model.platforms if (states := known_issue_states(model, members, p))}
        if known:
            compat["known_issue"] = known
        node = data
        for part in row_id.split("."):
            node = node.setdefault(_key(part), {})
        node["__compat"] = compat
    return data
