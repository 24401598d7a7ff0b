"""Reading a Markdown or MyST chapter into raw blocks. Pure.

- Code: fenced blocks (```` ``` ```` or `~~~`) whose info string is `python`, `py`, `python3`, `ipython` or
  `ipython3`, and MyST's `{code-cell}` blocks (any kernel name after it). A `{code-cell}`'s options (`:tags: [...]`
  lines, or a `---` YAML header) may tag it `raises-exception` or `skip-execution`, as a notebook cell.
- Output: the `# Prints:` comments of the code (the rest of the line, then the comment lines under it), or a fence
  of `output` or `text` right after the code (only blank lines between). A block that states none is not compared.
- Outcome: a `# ==> raises FloatingPointError` comment says the block raises that exception.
- A `{code-cell}` is a notebook cell: where its output is stated, a last line that is an expression displays its
  value (`repr`), as the notebook shows it; a plain fence does not.
- Headings: `#` lines outside fences (numbered ones open a section; `conformance.chapter.headings`).
- A MyST notebook page (a front matter with `jupytext:` or `kernelspec:`, as jupytext writes it): its build
  (myst-nb) executes only its `{code-cell}`s, so its plain fences are **listings**, shown and not run (a skip
  list's `[[run]]` entry runs one).
- A fence indented in a list item is dedented as CommonMark reads it: each line loses up to the fence's own
  indentation.
- What the page says of each statement (stated errors, `# Prints:` per statement, output lines in the fence, a
  `>>>` transcript) is read by `blocks.block_plan` (`markdown`: True).
"""

from __future__ import annotations

import re

from conformance.chapter.blocks import printed_comments, stated_raise
from conformance.chapter.headings import next_heading
from conformance.chapter.model import Heading

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(.*?)\s*$")
_PYTHON = {"python", "py", "python3", "ipython", "ipython3"}
_OUTPUT = {"output", "text"}
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_FRONT_KEYS = re.compile(r"^(?:jupytext|kernelspec)\s*:", re.MULTILINE)
LISTING = "a listing: the page is a MyST notebook, whose build runs only its {code-cell}s"


def is_notebook_page(lines: list[str]) -> bool:
    """Whether the page is a MyST notebook: a front matter (`---` ... `---` on its first lines) naming `jupytext` or
    `kernelspec`."""
    if not lines or lines[0].strip() != "---":
        return False
    end = next((k for k in range(1, len(lines)) if lines[k].strip() in ("---", "...")), None)
    return end is not None and bool(_FRONT_KEYS.search("\n".join(lines[1:end])))


def dedented(body: list[str], indent: int) -> list[str]:
    """A fence's lines without the fence's own indentation (at most `indent` leading spaces of each)."""
    out = []
    for line in body:
        spaces = len(line) - len(line.lstrip(" "))
        out.append(line[min(spaces, indent):])
    return out


def _fences(lines: list[str]) -> list[tuple[int, int, str, int]]:
    """(the opening line, the closing line, the info string, the fence's indentation) of every fenced block; an
    unclosed one runs to the end."""
    found, k = [], 0
    while k < len(lines):
        opened = _FENCE.match(lines[k])
        if not opened:
            k += 1
            continue
        marker = opened.group(2)
        closing = marker[0] * len(marker)
        close = next((j for j in range(k + 1, len(lines))
                      if lines[j].strip().startswith(closing) and not lines[j].strip().strip(marker[0])), len(lines))
        found.append((k, close, opened.group(3), len(opened.group(1).expandtabs(4))))
        k = close + 1
    return found


def _cell_options(body: list[str]) -> tuple[list[str], int]:
    """A `{code-cell}`'s tags and how many lines of options precede its code."""
    tags: list[str] = []
    skip = 0
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
        if end is not None:
            options, skip = body[1:end], end + 1
        else:
            options = []
    else:
        options = []
        while skip < len(body) and re.match(r"^\s*:[\w-]+:", body[skip]):
            options.append(body[skip])
            skip += 1
    text = " ".join(options)
    found = re.search(r"tags\s*:\s*\[([^\]]*)\]", text)
    if found:
        tags = [t.strip().strip("'\"") for t in found.group(1).split(",") if t.strip()]
    else:  # a YAML list: `tags:` then `- name` lines
        listed = re.search(r"tags\s*:\s*((?:-\s*\S+\s*)+)", text)
        if listed:
            tags = [t.strip("'\"") for t in re.findall(r"-\s*(\S+)", listed.group(1))]
    return tags, skip


def read_markdown(text: str) -> list[dict]:
    """The raw blocks of a Markdown/MyST chapter, in order (see the module's docstring)."""
    lines = text.splitlines()
    fences = _fences(lines)
    inside = {k for start, close, _, _ in fences for k in range(start, close + 1)}
    notebook_page = is_notebook_page(lines)
    headings = {k: _HEADING.match(line).group(1) for k, line in enumerate(lines)  # type: ignore[union-attr]
                if k not in inside and _HEADING.match(line)}
    raw: list[dict] = []
    heading = Heading()
    position = 0
    for number, (start, close, info, indent) in enumerate(fences):
        for k in sorted(h for h in headings if position <= h < start):
            heading = next_heading(heading, headings[k])
        position = close + 1
        language = info.split()[0].lower() if info.split() else ""
        cell = language.startswith("{code-cell}")
        if language not in _PYTHON and not cell:
            continue
        body = dedented(lines[start + 1:close], indent)
        tags, skip = _cell_options(body) if cell else ([], 0)
        code_lines = body[skip:]
        code = "\n".join(code_lines)
        output = printed_comments(code)
        following = fences[number + 1] if number + 1 < len(fences) else None
        if (following and following[2].split()[:1] and following[2].split()[0].lower() in _OUTPUT
                and all(not lines[k].strip() for k in range(close + 1, following[0]))):
            output = "\n".join(dedented(lines[following[0] + 1:following[1]], following[3]))
        raises = stated_raise(code) or ("*" if "raises-exception" in tags else "")
        first = start + 1 + skip
        raw.append({"code": code, "line": first + 1, "end_line": max(first + 1, close), "heading": heading,
                    "output": output or "", "joined": False, "output_known": output is not None, "output_line": 0,
                    "raises": raises,
                    "skip": "tagged skip-execution in the chapter" if "skip-execution" in tags else "",
                    "shows_value": cell and output is not None, "markdown": True,
                    "listing": LISTING if notebook_page and not cell else ""})
    return raw
