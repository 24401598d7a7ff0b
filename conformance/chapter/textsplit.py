"""Splitting a chapter exported from a notebook to plain text, where code, prose and printed output follow each other
without markers, into code pieces, the output the document shows after each, and headings. Pure.

How code is told from the rest (`split_text`):

- A code run starts at a line at column 0 that begins a Python statement which compiles (`compile`, grown line by
  line: a `def`, a triple-quoted string or an open bracket runs on until it closes, and indented lines, `else:`,
  `except:` and closing brackets continue it). The statement must be *strong*: a comment, a keyword statement, an
  assignment with a value, or an expression with a call; a bare name or literal (`A0`, `True`, `Contents`), or an
  annotation without a value (`Type: Exception`), is read as output or prose, which often parse as Python too.
- The run goes on over blank lines while the next line starts another strong statement.
- What follows a run directly (no blank line) is the output the document shows for it, up to a blank line. After a
  blank line the output goes on when the next paragraph is indented (a table or diagram the code drew) or starts
  with the text of a string literal of the run (`print("\\nSample messages:")`); a heading or other prose ends it.
- Headings are short lines between blank lines: numbered (`6.2 Checking the current values`), `Exercise N: ...`,
  or a short title; the last numbered one gives the blocks below it their section.
- A run is cut into several blocks where a column-0 comment directly follows a finished top-level statement (no
  blank line between: a notebook exported without cell markers puts the next cell right under the last line of
  the one before, and such a comment opens a cell: `# ❌ Wrong: ...`). The output goes with the run's last block.

An author checks the split with `jax-conformance chapter FILE --blocks` and corrects it with a map file
(`conformance.chapter.mapfile`).
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from conformance.chapter.headings import EXERCISE, NUMBERED, next_heading
from conformance.chapter.model import Heading

# A statement longer than this many lines is not looked for (a chapter's cell is far shorter).
MAX_STATEMENT_LINES = 400
_KEYWORD_START = re.compile(
    r"(?:async\s+def|def|class|import|from\s+[\w.]+\s+import|for|while|if|with|try|assert|"
    r"raise|del|global|nonlocal|return|pass|break|continue|match)\b|@"
)
_CONTINUATION = re.compile(r"(?:else|elif|except|finally|case)\b|[)\]}]")
_INCOMPLETE = (
    "never closed",
    "unterminated triple-quoted",
    "unexpected eof",
    "expected an indented block",
    "unexpected end of file",
)
_BADGE = ("🟢", "⚪", "⚠️", "⚠")


@dataclass(frozen=True)
class Piece:
    """One block found in the text: its code lines `[start, end)` (0-based), the output lines `[out_start, out_end)`
    shown after it (empty when none), whether the document shows anything after it at all (`output_known`: False
    when the next block follows directly, so its output, if any, is shown after that one), and its heading."""

    start: int
    end: int
    out_start: int
    out_end: int
    output_known: bool
    heading: Heading


def _compiles(text: str) -> str:
    """'' when `text` compiles; 'incomplete' when more lines could finish it; 'invalid' otherwise."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in a chapter's strings are not our business
            compile(text + "\n", "<chapter>", "exec", dont_inherit=True)
        return ""
    except SyntaxError as exc:
        message = str(exc.msg).lower()
        if text.endswith("\\") or any(word in message for word in _INCOMPLETE):  # a backslash joins the next line
            return "incomplete"
        last = text.count("\n") + 1
        return "incomplete" if exc.lineno is not None and exc.lineno >= last else "invalid"
    except (ValueError, OverflowError, MemoryError, RecursionError):
        return "invalid"


def _is_blank(line: str) -> bool:
    return not line.strip()


def _strong(first_statement: ast.stmt) -> bool:
    if isinstance(first_statement, ast.AnnAssign):
        return first_statement.value is not None
    if isinstance(first_statement, ast.Expr):
        return any(
            isinstance(node, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda))
            for node in ast.walk(first_statement.value)
        )
    return True


def _first_compile(lines: list[str], start: int, first: int, stop: int) -> int | None:
    """The smallest end in `[first, stop]` at which `lines[start:end]` compiles, or None (an error that more lines
    cannot mend stops the search early)."""
    for end in range(first, stop + 1):
        state = _compiles("\n".join(lines[start:end]))
        if not state:
            return end
        if state == "invalid":
            return None
    return None


def statement_end(lines: list[str], start: int) -> int | None:
    """Where the strong statement that starts at `lines[start]` (column 0) ends (exclusive), or None when no such
    statement starts there."""
    line = lines[start]
    if not line or line[0].isspace():
        return None
    if line.startswith("#"):
        return start + 1
    stop = min(len(lines), start + MAX_STATEMENT_LINES)
    end = _first_compile(lines, start, start + 1, stop)
    if end is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = ast.parse("\n".join(lines[start:end]))
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not parsed.body or not (_KEYWORD_START.match(line) or _strong(parsed.body[0])):
        return None
    while True:  # an indented body, `else:`, `except:` or a closing bracket continues the statement
        following = next((k for k in range(end, stop) if not _is_blank(lines[k])), None)
        if following is None or not (lines[following][0].isspace() or _CONTINUATION.match(lines[following])):
            return end
        limit = next(
            (
                k
                for k in range(following + 1, stop)
                if lines[k] and not lines[k][0].isspace() and not _CONTINUATION.match(lines[k])
            ),
            stop,
        )
        longer = _first_compile(lines, start, following + 1, limit)
        if longer is None:
            return end
        end = longer


def _code_run(lines: list[str], start: int) -> tuple[int, list[int]]:
    """The end of the code run starting at `start` and the starts of its statements."""
    starts, end = [], start
    at = start
    while at < len(lines):
        finish = statement_end(lines, at)
        if finish is None:
            break
        starts.append(at)
        end = finish
        at = next((k for k in range(finish, len(lines)) if not _is_blank(lines[k])), len(lines))
    if all(lines[s].startswith("#") for s in starts):
        return start, []  # only comments: prose that starts with `#` (a flattened table's header)
    return end, starts


def _string_prefixes(lines: list[str], start: int, end: int) -> list[str]:
    """The text of the run's string literals (and the constant first parts of its f-strings), stripped: what the
    lines of its output may start with."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse("\n".join(lines[start:end]))
    except (SyntaxError, ValueError, RecursionError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            value = node.values[0].value
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
        else:
            continue
        for part in str(value).split("\n"):
            if len(part.strip()) >= 4:
                found.append(part.strip())
    return found


def _heading_of(line: str, before: str, after: str) -> str | None:
    """The heading's text when `line` (between the lines `before` and `after`) is a heading, else None."""
    if line[:1].isspace() or not _is_blank(before) or not _is_blank(after):
        return None
    text = line.strip()
    if (NUMBERED.match(text) and not text.endswith(".")) or EXERCISE.match(text):
        return text
    if (
        len(text) <= 80
        and len(text.split()) <= 10
        and not text.endswith((".", ":", ",", ";"))
        and not text.startswith(_BADGE)
        and (text[0].isupper() or not text[0].isascii())
    ):
        return text
    return None


def _output_end(lines: list[str], at: int, prefixes: list[str]) -> int:
    """Where the output that starts at `lines[at]` ends (exclusive; trailing blank lines left out)."""
    last = at
    k = at
    while k < len(lines):
        if _is_blank(lines[k]):
            following = next((j for j in range(k, len(lines)) if not _is_blank(lines[j])), None)
            if following is None:
                break
            text = lines[following]
            goes_on = (
                text[0].isspace()
                and _heading_of(text, lines[following - 1], lines[following + 1] if following + 1 < len(lines) else "")
                is None
                and not _looks_like_bullet(text)
            ) or any(text.strip().startswith(p) for p in prefixes)
            if not goes_on or statement_end(lines, following) is not None:
                break
            k = following
            continue
        if k > at and statement_end(lines, k) is not None:
            break
        last = k + 1
        k += 1
    return last


def _looks_like_bullet(line: str) -> bool:
    return bool(re.match(r"^\s+(?:[•\-*]|\d+\.)\s+\S", line))


def _cut_points(lines: list[str], starts: list[int]) -> list[int]:
    """Statement starts of a run where a new block begins: a column-0 comment right under a finished top-level
    statement (no blank line between) that opens code (another statement follows it)."""
    cuts = []
    for position, at in enumerate(starts[1:], 1):
        previous = starts[position - 1]
        if (
            lines[at].startswith("#")
            and not lines[previous].startswith("#")
            and at > 0
            and not _is_blank(lines[at - 1])
            and position + 1 < len(starts)
        ):
            cuts.append(at)
    return cuts


def split_text(text: str) -> list[Piece]:
    """The blocks of a plain-text chapter, in order (see the module's docstring)."""
    lines = text.splitlines()
    pieces: list[Piece] = []
    heading = Heading()
    k = 0
    while k < len(lines):
        line = lines[k]
        if _is_blank(line):
            k += 1
            continue
        end, starts = _code_run(lines, k)
        if not starts:
            found = _heading_of(line, lines[k - 1] if k else "", lines[k + 1] if k + 1 < len(lines) else "")
            if found is not None:
                heading = next_heading(heading, found)
            k += 1
            continue
        out_start = end
        out_end = (
            _output_end(lines, end, _string_prefixes(lines, k, end))
            if end < len(lines) and not _is_blank(lines[end])
            else end
        )
        cuts = _cut_points(lines, starts)
        bounds = [k, *cuts, end]
        for index, (first, last) in enumerate(zip(bounds, bounds[1:])):
            final = index == len(bounds) - 2
            pieces.append(
                Piece(
                    first,
                    last,
                    out_start if final else last,
                    out_end if final else last,
                    output_known=final,
                    heading=heading,
                )
            )
        k = out_end if out_end > end else end
    return pieces
