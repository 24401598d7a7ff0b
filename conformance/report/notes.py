"""Why a row behaves as it does, in words, for the outputs other tools read (the compat JSON's notes). Pure logic.

The one place those outputs take their "why" from: the row's declared status changes (each `Change`: its
release, its sentence and its evidence), the case's discrepancy note (why the chapter is wrong on the
documented release) and the case's notes.
"""

from __future__ import annotations

from conformance.report.common import visible
from conformance.report.model import CaseBlock, ParamRow


def row_notes(block: CaseBlock, row: ParamRow) -> list[str]:
    """The notes that explain `row` (a cell of `block`), each one line, without repeats; empty when none."""
    changes = [f"{change.range_text.capitalize()}: {change.why} (evidence: {change.evidence})" for change in row.declared_changes]
    found = [*changes, row.discrepancy, block.notes]
    flat = [" ".join(visible(note).split()) for note in found if note and note.strip()]
    return list(dict.fromkeys(flat))
