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
- Fences, their info strings, headings and the front matter are found by markdown-it-py (the CommonMark parser MyST
  is built on, with mdit-py-plugins' front matter and MyST block syntax), so the page splits as its build reads it:
  a fence inside an HTML comment (`<!-- ... -->`) is no block, a fence indented under a paragraph is the
  paragraph's text, a fence inside a `>` quote or a list item is found (its content as CommonMark reads it: without
  the quote markers, dedented by the fence's own indentation), and a setext heading (a line underlined with `===`
  or `---`) is a heading.
- A `{code-cell}`'s first code line is the one after its options and the one blank line after them (MyST drops a
  directive body's first line when blank), as myst-nb numbers it.
- What the page says of each statement (stated errors, `# Prints:` per statement, output lines in the fence, a
  `>>>` transcript) is read by `blocks.block_plan` (`markdown`: True).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin

from conformance.chapter.blocks import printed_comments, stated_raise
from conformance.chapter.headings import next_heading
from conformance.chapter.model import Heading

_PYTHON = {"python", "py", "python3", "ipython", "ipython3"}
_OUTPUT = {"output", "text"}
_FRONT_KEYS = re.compile(r"^(?:jupytext|kernelspec)\s*:", re.MULTILINE)
LISTING = "a listing: the page is a MyST notebook, whose build runs only its {code-cell}s"


class Fence(NamedTuple):
    """A fenced block: its opening line, its closing line (0-based; an unclosed fence's is the line after its
    last), its info string and its content lines as CommonMark reads them."""

    start: int
    close: int
    info: str
    body: list[str]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # MyST's own base: CommonMark with tables, its front matter and its block syntax (`+++`, `% comment`, targets)
    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(myst_block_plugin)


def _tokens(text: str) -> list[Token]:
    return _parser().parse(text)


def _front_matter(tokens: list[Token]) -> str | None:
    return next((t.content for t in tokens if t.type == "front_matter"), None)


def is_notebook_page(lines: list[str]) -> bool:
    """Whether the page is a MyST notebook: a front matter (`---` on the first line, closed by `---` or YAML's
    `...`) naming `jupytext` or `kernelspec`."""
    front = _front_matter(_tokens("\n".join(lines) + "\n"))
    return front is not None and bool(_FRONT_KEYS.search(front))


def _fences(tokens: list[Token]) -> list[Fence]:
    """Every fenced block of the page, in order."""
    found = []
    for token in tokens:
        if token.type != "fence" or token.map is None:
            continue
        body = token.content.split("\n")[:-1] if token.content else []
        found.append(Fence(token.map[0], token.map[0] + len(body) + 1, token.info.strip(), body))
    return found


def _headings(tokens: list[Token]) -> dict[int, str]:
    """The page's headings (ATX and setext) by the index of their first line: their text as written."""
    return {
        opened.map[0]: text.content
        for opened, text in zip(tokens, tokens[1:])
        if opened.type == "heading_open" and opened.map is not None and text.type == "inline"
    }


def _cell_options(body: list[str]) -> tuple[list[str], int]:
    """A `{code-cell}`'s tags and how many lines of options precede its code (with the blank line after them)."""
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
    if skip < len(body) and not body[skip].strip():
        skip += 1  # MyST drops the directive body's first line when it is blank
    text = " ".join(options)
    found = re.search(r"tags\s*:\s*\[([^\]]*)\]", text)
    if found:
        tags = [t.strip().strip("'\"") for t in found.group(1).split(",") if t.strip()]
    else:  # a YAML list: `tags:` then `- name` lines
        listed = re.search(r"tags\s*:\s*((?:-\s*\S+\s*)+)", text)
        if listed:
            tags = [t.strip("'\"") for t in re.findall(r"-\s*(\S+)", listed.group(1))]
    return tags, skip


def _blank(line: str) -> bool:
    """A line with nothing but quote markers and spaces (blank inside a `>` quote)."""
    return not line.replace(">", "").strip()


def read_markdown(text: str) -> list[dict]:
    """The raw blocks of a Markdown/MyST chapter, in order (see the module's docstring)."""
    # lines as markdown-it counts them (`splitlines` would also break at a vertical tab or a form feed in the page)
    lines = re.split(r"\r\n?|\n", text)
    tokens = _tokens(text)
    fences = _fences(tokens)
    front = _front_matter(tokens)
    notebook_page = front is not None and bool(_FRONT_KEYS.search(front))
    headings = _headings(tokens)
    raw: list[dict] = []
    heading = Heading()
    position = 0
    for number, (start, close, info, body) in enumerate(fences):
        for k in sorted(h for h in headings if position <= h < start):
            heading = next_heading(heading, headings[k])
        position = close + 1
        language = info.split()[0].lower() if info.split() else ""
        cell = language.startswith("{code-cell}")
        if language not in _PYTHON and not cell:
            continue
        tags, skip = _cell_options(body) if cell else ([], 0)
        code_lines = body[skip:]
        code = "\n".join(code_lines)
        output = printed_comments(code)
        following = fences[number + 1] if number + 1 < len(fences) else None
        if (
            following
            and following.info.split()[:1]
            and following.info.split()[0].lower() in _OUTPUT
            and all(_blank(lines[k]) for k in range(close + 1, following.start))
        ):
            output = "\n".join(following.body)
        raises = stated_raise(code) or ("*" if "raises-exception" in tags else "")
        first = start + 1 + skip
        raw.append(
            {
                "code": code,
                "line": first + 1,
                "end_line": max(first + 1, close),
                "heading": heading,
                "output": output or "",
                "joined": False,
                "output_known": output is not None,
                "output_line": 0,
                "raises": raises,
                "skip": "tagged skip-execution in the chapter" if "skip-execution" in tags else "",
                "shows_value": cell and output is not None,
                "markdown": True,
                "listing": LISTING if notebook_page and not cell else "",
            }
        )
    return raw
