"""Which section a heading opens. Pure.

A numbered heading (`6.2 Checking the current values`) opens section `6.2`; `Exercise 3: a leak detector` opens
`Ex3` (the cases' subsections of the exercises); an unnumbered heading is a subheading of the section it is in
(`🔍 Extra: ...`, `Common setup`), except the chapter's end matter (a summary, a cheat sheet, a quiz, an appendix,
the list of exercises), after which blocks belong to no numbered section until the next numbered heading.
"""

from __future__ import annotations

import re

from conformance.chapter.model import Heading

NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S.{0,150})$")
EXERCISE = re.compile(r"^Exercise\s+(\d+)\b(?::\s*(.*))?$", re.IGNORECASE)
_END_MATTER = re.compile(r"summary|cheat sheet|quiz|appendix|^\W*exercises\b", re.IGNORECASE)


def next_heading(current: Heading, text: str) -> Heading:
    """The heading blocks get after a heading line reading `text` (`current` is the one before it)."""
    text = text.strip()
    numbered = NUMBERED.match(text)
    if numbered:
        return Heading(numbered.group(1), numbered.group(2).strip())
    exercise = EXERCISE.match(text)
    if exercise:
        return Heading(f"Ex{exercise.group(1)}", (exercise.group(2) or "").strip())
    if _END_MATTER.search(text):
        return Heading("", "", text)
    return Heading(current.section, current.title, text)
