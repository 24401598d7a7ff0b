"""Reading a reStructuredText page into raw blocks. Pure.

- Code: the body of a `.. code-block::` (`code`, `sourcecode`) whose language is Python (`python`, `py`,
  `python3`, `pycon`, `ipython`, `ipython3`; none: Sphinx's default highlights Python), of a `.. testcode::` and a
  `.. doctest::` (`sphinx.ext.doctest`), and each literal block (a paragraph ending `::`, then an indented block)
  that holds a `>>>` transcript or parses as Python (a shell command, a table or output, `Result: 2` lines
  included, does not), and each doctest block (a paragraph of its own that starts with `>>>`, to the next blank
  line). A directive's
  options (`:linenos:`, `:caption: ...`) are not code; a directive of another language is not a block.
- What runs: a `>>>` transcript runs as a doctest, as JAX's documentation workflow runs its `.rst` pages
  (`pytest --doctest-glob='*.rst'`); other code runs as written, as a plain Markdown page's fences do.
- Output: a transcript's own, and a `.. testoutput::` right after a `testcode`; a block that states none is not
  compared.
- Headings: a line of text under a line of one repeated punctuation character at least as long (`=====`), with
  or without the same line over it (`conformance.chapter.headings`).
"""

from __future__ import annotations

import re

from conformance.chapter.blocks import stated_raise
from conformance.chapter.headings import next_heading, rst_headings
from conformance.chapter.model import Heading

_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*?)\s*$")
_CODE = {"code-block", "code", "sourcecode"}
_PYTHON = {"", "python", "py", "python3", "pycon", "ipython", "ipython3", "default"}
_OPAQUE = {"ipython", "jupyter-execute", "math", "raw", "literalinclude"}  # bodies that are not text to read on
_OPTION = re.compile(r"^\s*:[\w-]+:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _body(lines: list[str], start: int, indent: int, options: bool) -> tuple[int, int]:
    """The first and past-the-last line of the indented body that starts after line `start` (options skipped);
    an empty range when none."""
    k = start + 1
    while options and k < len(lines) and lines[k].strip() and _OPTION.match(lines[k]) and _indent(lines[k]) > indent:
        k += 1
    end = k
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    first = next((j for j in range(k, end) if lines[j].strip()), end)
    while end > first and not lines[end - 1].strip():
        end -= 1
    return first, end


def _dedented(lines: list[str]) -> str:
    cut = min((_indent(line) for line in lines if line.strip()), default=0)
    return "\n".join(line[cut:] for line in lines)


def _is_python(code: str) -> bool:
    """Whether a literal block with no language is Python: a transcript, or code that compiles and is more than a
    bare name or literal."""
    if code.lstrip().startswith(">>>"):
        return True
    try:
        tree = compile(code, "<literal>", "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return False
    body = getattr(tree, "body", [])
    if any(type(node).__name__ == "AnnAssign" and node.value is None for node in body):
        return False  # `Inside: 0`, `Result: 2`: printed lines, as the plain-text splitter reads them
    return bool(body) and not (
        len(body) == 1
        and type(body[0]).__name__ == "Expr"
        and type(body[0].value).__name__ in ("Name", "Constant", "Attribute")
    )


def _pieces(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, past-the-last line, kind) of every code body: `code`, `testcode`, `testoutput`."""
    found: list[tuple[int, int, str]] = []
    k = 0
    while k < len(lines):
        directive = _DIRECTIVE.match(lines[k])
        if directive:
            name, argument = directive.group(2).lower(), directive.group(3).lower()
            language = (argument.split() or [""])[0]
            kind = (
                ("code" if language in _PYTHON else "")
                if name in _CODE
                else name
                if name in ("testcode", "testoutput", "doctest")
                else ""
            )
            first, end = _body(lines, k, _indent(lines[k]), options=True)
            if kind and end > first:
                found.append((first, end, kind))
            if kind or name in _CODE or name in _OPAQUE:
                k = max(end, k + 1)
                continue
            k += 1  # an admonition, a note: its body is read as text
            continue
        if lines[k].lstrip().startswith(">>>"):  # a doctest block: a paragraph of its own, to a blank line
            end = next((j for j in range(k, len(lines)) if not lines[j].strip()), len(lines))
            found.append((k, end, "code"))
            k = end
            continue
        if lines[k].rstrip().endswith("::") and lines[k].strip():
            first, end = _body(lines, k, _indent(lines[k]), options=False)
            if end > first and _is_python(_dedented(lines[first:end])):
                found.append((first, end, "code"))
            k = max(end, k + 1)
            continue
        k += 1
    return found


def read_rst(text: str) -> list[dict]:
    """The raw blocks of a reStructuredText page, in order (see the module's docstring)."""
    lines = text.splitlines()
    pieces = _pieces(lines)
    headings = rst_headings(lines)
    raw: list[dict] = []
    heading = Heading()
    position = 0
    for number, (first, end, kind) in enumerate(pieces):
        for k in sorted(h for h in headings if position <= h < first):
            heading = next_heading(heading, headings[k])
        position = end
        if kind == "testoutput":
            continue
        code = _dedented(lines[first:end])
        following = pieces[number + 1] if number + 1 < len(pieces) else None
        output = (
            _dedented(lines[following[0] : following[1]])
            if kind == "testcode" and following and following[2] == "testoutput"
            else None
        )
        raw.append(
            {
                "code": code,
                "line": first + 1,
                "end_line": end,
                "heading": heading,
                "output": output or "",
                "joined": False,
                "output_known": output is not None,
                "output_line": 0,
                "raises": stated_raise(code),
                "skip": "",
                "shows_value": False,
                "markdown": True,
                "listing": "",
            }
        )
    return raw
