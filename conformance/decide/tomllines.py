"""An expectations file's lines as TOML reads them: where a line starts inside a multi-line string (so a line `#12345`
or `[[expect]]` there is text, not a comment or a header), and where each `[[expect]]` header is. Pure.

Lines are split at `\\n` only, as TOML splits them (`str.splitlines` would also split at U+2028 and other
separators a string or a comment may hold). `decide.prune` finds each entry's lines from here and checks its result
against the TOML parser; `decide.expectations` names each entry's line.
"""

from __future__ import annotations

import re


# A header of an array of tables (`expect`, `perf`, `name`), its name bare or quoted, an optional comment after it.
def _header(table: str) -> re.Pattern[str]:
    return re.compile(rf"""^\s*\[\[\s*(?:{table}|"{table}"|'{table}')\s*\]\]\s*(#.*)?$""")


HEADER = _header("expect")


def toml_lines(text: str) -> list[str]:
    """The lines of `text`, each with its `\\n` (TOML's only line break, CRLF's `\\r` staying with its line)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def line_starts_in_string(text: str) -> list[bool]:
    """For each line of `text`, whether it starts inside a TOML multi-line string (`\"\"\"...\"\"\"` or `'''...'''`),
    where a line such as `#12345` or `[[expect]]` is text, not a comment or a header. A small scan of TOML's string
    and comment syntax; `prune` checks its result against the TOML parser."""
    inside: list[bool] = []
    state, i, n = None, 0, len(text)  # state: None, '"""' or "'''"
    at_line_start = True
    while i < n:
        if at_line_start:
            inside.append(state is not None)
            at_line_start = False
        ch = text[i]
        if ch == "\n":
            at_line_start = True
            i += 1
            continue
        if state is not None:
            if state == '"""' and ch == "\\":
                i += 2  # an escape: the next character (a quote, or the newline of a line-ending backslash)
                if i - 1 < n and text[i - 1] == "\n":
                    at_line_start = True
                continue
            if text.startswith(state, i):
                i += 3
                while i < n and text[i] == state[0]:  # up to two quotes of the string's own end it
                    i += 1
                state = None
                continue
            i += 1
            continue
        if ch == "#":  # a comment runs to the end of the line
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith('"""', i) or text.startswith("'''", i):
            state, i = text[i : i + 3], i + 3
            continue
        if ch in "\"'":  # a one-line string: to its closing quote on the same line
            j = i + 1
            while j < n and text[j] not in (ch, "\n"):
                j += 2 if ch == '"' and text[j] == "\\" else 1
            i = j + 1 if j < n and text[j] == ch else j
            continue
        i += 1
    return inside


def header_lines(text: str, table: str = "expect") -> list[int]:
    """The 0-based numbers of the lines that are a `[[table]]` header (none inside a multi-line string)."""
    in_string, header = line_starts_in_string(text), HEADER if table == "expect" else _header(re.escape(table))
    return [
        i
        for i, line in enumerate(toml_lines(text))
        if not (i < len(in_string) and in_string[i]) and header.match(line.rstrip("\r\n"))
    ]
