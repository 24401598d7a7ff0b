"""The error the command line turns into one clear line: what was wrong and how to fix it."""

from conformance.safetext import terminal_text


class ConformanceError(Exception):
    """A user-facing problem (bad input, missing interpreter, unreachable index), said in one line."""


def one_line(text: str) -> str:
    """`text` as one line that a terminal shows as it is: line breaks become spaces, and other control characters
    (escape sequences, carriage returns) are written as escapes (`\\x1b`), so an echoed command-line value cannot
    rewrite the screen or forge a second line, and a leading `::` is escaped (`conformance.safetext`)."""
    return terminal_text(text.replace("\r\n", "\n").replace("\n", " "))
