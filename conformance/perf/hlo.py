"""Counting the optimized HLO text of a compiled function: its instructions and its fusions. Pure, standard library
only (the child imports it in target environments)."""

from __future__ import annotations

import re

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_OPCODE = re.compile(r"(?:^|\s)([a-z][a-z0-9\-]*)\(")


def opcodes(hlo_text: str) -> list[str]:
    """The opcode of every instruction of every computation in `hlo_text` (fused computations included)."""
    found = []
    for line in hlo_text.splitlines():
        matched = _INSTRUCTION.match(line)
        if not matched or line.lstrip().startswith(("HloModule", "//")):
            continue
        opcode = _OPCODE.search(matched.group(1))
        if opcode:
            found.append(opcode.group(1))
    return found


def hlo_counts(hlo_text: str) -> dict[str, int]:
    """`instructions` (every instruction of the module) and `fusions` (the `fusion` instructions)."""
    ops = opcodes(hlo_text)
    return {"instructions": len(ops), "fusions": sum(1 for op in ops if op == "fusion")}
