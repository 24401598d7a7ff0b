"""Untrusted text made safe to print: the one function for a terminal line and one for a GitHub workflow command.

Text the suite did not write (a chapter's headings, code and skip reasons, a scanned repository's names and file
names, a census, a result file's messages) may hold an escape sequence (ESC, OSC, CSI), NUL, a carriage return, a
line break or a Unicode control (a bidirectional override). On a terminal those rewrite the screen; in a CI log a
line that starts with `::` (or `##[`) is a workflow command the runner obeys (`::error`, `::add-mask`,
`::stop-commands`). So:

- `terminal_text(text)`: one line, every character that is not printable written as an escape (`\\x1b`, `\\n`,
  `\\x00`, `\\u202e`), and a line that would start with `::` or `##[` (after blanks) starting with `\\x3a` or
  `\\x23` instead: no line it gives is a workflow command, and no control character reaches the terminal.
- `terminal_lines(text)`: text the suite wrote in several lines, each made safe as above (its line breaks kept).
- `workflow_data(text)` and `workflow_property(text)`: a workflow command's message and property values escaped as
  GitHub's toolkit does (`%25`, `%0D`, `%0A`; a property also `%3A`, `%2C`), other control characters written as
  escapes as above.
"""

from __future__ import annotations

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_COMMAND_STARTS = (("::", "\\x3a"), ("##[", "\\x23"))


def _visible(ch: str) -> str:
    """A character as it may be printed: itself when printable, else its escape."""
    if ch.isprintable() or ch == " ":
        return ch
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _not_a_command(line: str) -> str:
    """`line` with a leading `::` or `##[` (after blanks) written so that no CI runner reads it as a command."""
    stripped = line.lstrip()
    for start, escaped in _COMMAND_STARTS:
        if stripped.startswith(start):
            blanks = line[: len(line) - len(stripped)]
            return blanks + escaped + stripped[1:]
    return line


def terminal_text(text: object) -> str:
    """`text` as one safe line for a terminal or a CI log (see the module's docstring)."""
    return _not_a_command("".join(_visible(ch) for ch in str(text)))


def terminal_lines(text: object) -> str:
    """`text` (several lines the suite wrote) with each of its lines made safe by `terminal_text`."""
    return "\n".join(terminal_text(line) for line in str(text).replace("\r\n", "\n").split("\n"))


def workflow_data(text: object) -> str:
    """The message of a GitHub workflow command (`::error ...::MESSAGE`), escaped (see the module's docstring)."""
    escaped = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return "".join(_visible(ch) for ch in escaped)


def workflow_property(text: object) -> str:
    """A property value of a GitHub workflow command (`file=`, `title=`), escaped (see the module's docstring)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")
