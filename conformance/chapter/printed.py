"""Comparing what a block printed with the output the document shows after it. Pure.

Both texts are normalised before they are compared, line by line:

- trailing spaces and the blank lines around the text are dropped, runs of spaces become one;
- memory addresses (`0x7f3a...`), object ids (`id=4658219312`, any number of 8 or more digits), temporary paths
  (`/tmp/...`) and timings (`28.3 ms`, `2.13 s`, `in 0.0123 sec`, `0.082 ms/call`) become placeholders;
- numbers are compared to a tolerance (relative 1e-3, absolute 1e-6): `0.92423433` equals `0.9242344`.

A difference is a printed mark on the block, as the printed tier of the probes: it never changes the block's status.
"""

from __future__ import annotations

import math
import re

RELATIVE, ABSOLUTE = 1e-3, 1e-6
_RULES = (
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(?<![\w.])/tmp/[^\s'\",)\]]*"), "/tmp/…"),
    (re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\s*(?:ms|µs|us|ns|s|sec|secs|seconds)(?:/\w+)?\b"), "<time>"),
    (re.compile(r"\bid=\d+"), "id=…"),
    (re.compile(r"(?<![\w.])\d{8,}(?![\w.])"), "<id>"),
)
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def normalised_lines(text: str) -> list[str]:
    """The text's lines as compared (see the module's docstring), numbers still in them."""
    lines = []
    for line in _ANSI.sub("", text.replace("\r\n", "\n")).split("\n"):
        line = " ".join(line.split())
        for pattern, replacement in _RULES:
            line = pattern.sub(replacement, line)
        lines.append(line)
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _numbers_equal(left: str, right: str) -> bool:
    try:
        a, b = float(left), float(right)
    except ValueError:
        return left == right
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=RELATIVE, abs_tol=ABSOLUTE)


def lines_equal(left: str, right: str) -> bool:
    """Whether two normalised lines are the same, numbers to the tolerance."""
    if left == right:
        return True
    left_numbers, right_numbers = _NUMBER.findall(left), _NUMBER.findall(right)
    if len(left_numbers) != len(right_numbers) or _NUMBER.sub("#", left) != _NUMBER.sub("#", right):
        return False
    return all(_numbers_equal(a, b) for a, b in zip(left_numbers, right_numbers))


def printed_difference(shown: str, printed: str, limit: int = 12) -> tuple[str, ...]:
    """The lines that differ between the document's output (`shown`) and what the block printed, as `-` (shown) and
    `+` (printed) lines, at most `limit` of them; () when they are the same."""
    want, got = normalised_lines(shown), normalised_lines(printed)
    if len(want) == len(got):
        diff = [line for a, b in zip(want, got) if not lines_equal(a, b) for line in (f"-{a}", f"+{b}")]
    else:
        import difflib

        diff = [line for line in difflib.unified_diff(want, got, n=0, lineterm="")
                if not line.startswith(("---", "+++", "@@"))]
    return tuple(diff[:limit]) + ((f"… {len(diff) - limit} more line(s)",) if len(diff) > limit else ())
