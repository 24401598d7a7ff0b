"""Naming one cell on the command line or in an expectations file: `case[param]`, `case:param` or `case`. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance.core.case import Case
from conformance.engine.selection import Cell, all_cells
from conformance.errors import ConformanceError

_REF = re.compile(r"^(?P<case>[A-Za-z0-9_./-]+?)(?:\[(?P<bracket>[A-Za-z0-9_.=-]*)\]|:(?P<colon>[A-Za-z0-9_.=-]*))?$")


@dataclass(frozen=True)
class CellRef:
    """A case id and a parameter (`""` for a case without parameters, or for every parameter of a pattern)."""

    case: str
    param: str = ""

    @property
    def cell_id(self) -> str:
        """`case[param]`, or the case id alone."""
        return f"{self.case}[{self.param}]" if self.param else self.case


def parse_cell_ref(text: str) -> CellRef | None:
    """The cell named by `text` (`numerics.debug_nans_vmap_miss[vmap]` or `...:vmap`), or None if it is not one."""
    found = _REF.match(text.strip()) if isinstance(text, str) else None
    if not found or "." not in found["case"]:
        return None
    return CellRef(found["case"], found["bracket"] or found["colon"] or "")


def resolve_cell(text: str, cases: list[Case]) -> Cell:
    """The cell named by a case id with :PARAM or [PARAM], or by a row ID; one line when it names none."""
    cells = all_cells(cases)
    ref = parse_cell_ref(text)
    if ref is not None:
        matching = [c for c in cells if c.case.id == ref.case]
        if matching:
            chosen = [c for c in matching if c.param == ref.param]
            if len(chosen) == 1:
                return chosen[0]
            params = ", ".join(c.param for c in matching if c.param)
            raise ConformanceError(f"{ref.case} has parameters {params}; name one as {ref.case}:PARAM")
    by_row = [c for c in cells if text in c.case.rows(c.param)]
    if len(by_row) == 1:
        return by_row[0]
    raise ConformanceError(
        f"{text!r} names no cell (a case id such as numerics.debug_nans_vmap_miss:vmap, or a row "
        f"ID); `jax-conformance list` shows them"
    )
