"""Naming one cell on the command line or in an expectations file: `case[param]`, `case:param` or `case`. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
