"""Which section a heading opens. Pure.

A numbered heading (`6.2 Checking the current values`) opens section `6.2`; `Exercise 3: a leak detector` opens
`Ex3` (the cases' subsections of the exercises); an unnumbered heading is a subheading of the section it is in
(`🔍 Extra: ...`, `Common setup`), except the chapter's end matter (a summary, a cheat sheet, a quiz, an appendix,
the list of exercises), after which blocks belong to no numbered section until the next numbered heading.
"""

from __future__ import annotations

import json
import re

from conformance.chapter.model import Heading

NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S.{0,150})$")
EXERCISE = re.compile(r"^Exercise\s+(\d+)\b(?::\s*(.*))?$", re.IGNORECASE)
_END_MATTER = re.compile(r"summary|cheat sheet|quiz|appendix|^\W*exercises\b", re.IGNORECASE)


# a Markdown link (`[schedule.py](https://...)`) and a MyST role's name (`{func}` before `jax.jit`), read as the text
# the rendered page shows
_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_ROLE = re.compile(r"\{[\w:.-]+\}(?=`)")


def heading_text(text: str) -> str:
    """A heading's text as its page shows it: a Markdown link's text without its target, a MyST role's name
    dropped (`Schedules ([schedule.py](https://...))` reads `Schedules (schedule.py)`)."""
    return _ROLE.sub("", _LINK.sub(r"\1", text)).strip()


def next_heading(current: Heading, text: str) -> Heading:
    """The heading blocks get after a heading line reading `text` (`current` is the one before it)."""
    text = heading_text(text)
    numbered = NUMBERED.match(text)
    if numbered:
        return Heading(numbered.group(1), numbered.group(2).strip())
    exercise = EXERCISE.match(text)
    if exercise:
        return Heading(f"Ex{exercise.group(1)}", (exercise.group(2) or "").strip())
    if _END_MATTER.search(text):
        return Heading("", "", text)
    return Heading(current.section, current.title, text)


_ADORNMENT = re.compile(r"^([=\-~^\"'`*+#_:.<>])\1{2,}\s*$")


def rst_headings(lines: list[str]) -> dict[int, str]:
    """A reStructuredText page's headings, by the index of their text line: a line of text at column 0 under which
    (and maybe over which) is a line of one repeated punctuation character at least as long."""
    found = {}
    for k in range(len(lines) - 1):
        text, under = lines[k].rstrip(), lines[k + 1].rstrip()
        if (
            text
            and not text[0].isspace()
            and not _ADORNMENT.match(text)
            and _ADORNMENT.match(under)
            and len(under) >= len(text.strip())
        ):
            found[k] = text.strip()
    return found


_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
TITLE_CHARS = 150


def _first_atx(lines: list[str]) -> str:
    fence = ""
    for line in lines:
        opened = _FENCE.match(line)
        # A fence closes only on a line of the same character, at least as long, with nothing after it (CommonMark:
        # a closing fence takes no info string; ```python inside an open fence is a line of its code).
        closes = (
            opened
            and fence
            and opened.group(1)[0] == fence[0]
            and len(opened.group(1)) >= len(fence)
            and not line[opened.end() :].strip()
        )
        if opened and (not fence or closes):
            fence = "" if fence else opened.group(1)
            continue
        found = None if fence else _ATX.match(line)
        if found:
            return found.group(1)
    return ""


def chapter_title(form: str, text: str) -> str:
    """The chapter's own name, its first heading: a Markdown page's or notebook's first `#` heading (outside code
    fences), a reStructuredText page's first heading, a plain-text chapter's first line (`Chapter 8: The Debugging
    Toolkit`); '' when it has none (or the line is longer than a title)."""
    if form == "notebook":
        try:
            cells = json.loads(text).get("cells") or []
        except (ValueError, AttributeError):
            return ""
        sources = [
            "".join(c.get("source") or "") if isinstance(c.get("source"), list) else str(c.get("source") or "")
            for c in cells
            if isinstance(c, dict) and c.get("cell_type") == "markdown"
        ]
        found = _first_atx("\n".join(sources).splitlines())
    elif form == "markdown":
        lines = text.splitlines()
        if lines and lines[0].strip() == "---":  # front matter
            end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), 0)  # YAML's ends
            lines = lines[end + 1 :]
        found = _first_atx(lines)
    elif form == "rst":
        found = next(iter(rst_headings(text.splitlines()).values()), "")
    else:
        found = next((line.strip() for line in text.splitlines() if line.strip()), "")
    found = " ".join(heading_text(found).replace("`", "").split())
    return found if len(found) <= TITLE_CHARS else ""
