"""Comparing what a block printed with the output the document shows after it. Pure.

Both texts are normalised before they are compared, line by line:

- trailing spaces and the blank lines around the text are dropped, runs of spaces become one;
- memory addresses (`0x7f3a...`), object ids (`id=4658219312`, any number of 8 or more digits), temporary paths
  (`/tmp/...`) and timings (`28.3 ms`, `2.13 s`, `in 0.0123 sec`, `0.082 ms/call`) become placeholders;
- numbers are compared to a tolerance (relative 1e-3, absolute 1e-6): `0.92423433` equals `0.9242344`; the
  spaces after an opening bracket and before a closing one or a comma are not compared (numpy's padding: `[0.
  0.841471 0.9092974]` equals `[0.         0.84147096 0.9092974 ]`);
- a `%timeit` line is compared without its times and counts, and IPython's line before 5.0 (`10 loops, best of
  3: 12.3 ms per loop`, as an old notebook stored it) is the line it prints now.

A difference is a printed mark on the block, as the printed tier of the probes: it never changes the block's status.

The page may show alternatives (`# OR` between two `# Prints:`, joined by `stated.ALTERNATIVE`): any one matching
is no difference. Where the page's output is a statement's own (a `>>>` example's, `>> ...` lines, a `# Prints:`
under one statement) and in the message of an error the page states, `...`, `…`, `<...>`, `<..>` and `<…>` match
any text (`wildcards`), as doctest's ELLIPSIS does.
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
_WILDCARD = re.compile(r"<[.…]+>|\.{3,}|…|^\.\.(?=\s)")
ALTERNATIVE = "\n# OR\n"  # as `stated.ALTERNATIVE` joins them
# the spaces numpy pads an array's elements with, after an opening or before a closing bracket (`[ 1.  2.]`,
# `[0.   0.5  0.25 ]`): another numpy, or other digits, pad elsewhere
_PADDING = re.compile(r"(?<=[\[(])\s+|\s+(?=[\]),])")
_TIMEIT = re.compile(r"\(mean ± std\. dev\. of \d+ runs?, [\d,]+ loops? each\)")
# IPython's %timeit line before 5.0, as old notebooks stored it: the line IPython prints now, times and counts apart
_OLD_TIMEIT = re.compile(r"^[\d,]+ loops?, best of \d+: (\S+ \S+) per loop$")


def normalised_lines(text: str, rules: bool = True) -> list[str]:
    """The text's lines as compared (see the module's docstring), numbers still in them; `rules` False keeps
    addresses, paths and times (what a wildcard of the page's may stand for)."""
    lines = []
    for line in _ANSI.sub("", text.replace("\r\n", "\n")).split("\n"):
        line = _OLD_TIMEIT.sub(r"\1 ± \1 per loop (mean ± std. dev. of <runs>)", " ".join(line.split()))
        line = _TIMEIT.sub("(mean ± std. dev. of <runs>)", line)
        for pattern, replacement in _RULES if rules else ():
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
    left, right = _PADDING.sub("", left), _PADDING.sub("", right)
    left_numbers, right_numbers = _NUMBER.findall(left), _NUMBER.findall(right)
    if len(left_numbers) != len(right_numbers) or _NUMBER.sub("#", left) != _NUMBER.sub("#", right):
        return False
    return all(_numbers_equal(a, b) for a, b in zip(left_numbers, right_numbers))


def _wildcard_pattern(line: str) -> re.Pattern[str]:
    parts = _WILDCARD.split(line)
    return re.compile(".*?".join(re.escape(part) for part in parts), re.DOTALL)


def _line_matches(want: str, got: str, wildcards: bool) -> bool:
    if lines_equal(want, got):
        return True
    return wildcards and bool(_WILDCARD.search(want)) and bool(_wildcard_pattern(want).fullmatch(got))


def _difference(want: list[str], got: list[str], wildcards: bool, raw: list[str] | None = None) -> list[str]:
    if len(want) == len(got):
        raw = raw if raw is not None and len(raw) == len(got) else got
        return [
            line
            for a, b, c in zip(want, got, raw)
            if not (_line_matches(a, b, wildcards) or (wildcards and _line_matches(a, c, wildcards)))
            for line in (f"-{a}", f"+{b}")
        ]
    if wildcards and any(_WILDCARD.fullmatch(line) for line in want):  # a line of `...` alone: any lines
        pattern = "\n".join(".*?" if _WILDCARD.fullmatch(w) else _wildcard_pattern(w).pattern for w in want)
        if re.fullmatch(pattern, "\n".join(got), re.DOTALL):
            return []
    import difflib

    # its two header lines and its hunks' `@@` lines dropped, not the lines that differ (`-----`, a table's rule)
    return [line for line in list(difflib.unified_diff(want, got, n=0, lineterm=""))[2:] if not line.startswith("@@")]


def alternatives(shown: str) -> list[str]:
    """The alternatives a shown output offers (`# OR` between them): one for most."""
    return shown.split(ALTERNATIVE)


def printed_difference(shown: str, printed: str, limit: int = 12, wildcards: bool = False) -> tuple[str, ...]:
    """The lines that differ between the document's output (`shown`) and what the block printed, as `-` (shown) and
    `+` (printed) lines, at most `limit` of them; () when they are the same, or when any alternative of `shown` is
    (else the difference from the closest one)."""
    got = normalised_lines(printed)
    raw = normalised_lines(printed, rules=False) if wildcards else None
    diff: list[str] | None = None
    for alternative in alternatives(shown):
        found = _difference(normalised_lines(alternative), got, wildcards, raw)
        if not found:
            return ()
        diff = found if diff is None or len(found) < len(diff) else diff
    diff = diff or []
    return tuple(diff[:limit]) + ((f"… {len(diff) - limit} more line(s)",) if len(diff) > limit else ())


def message_difference(stated_as: str, stated: str, raised_as: str, raised: str) -> tuple[str, ...]:
    """('-' the page's message, '+' the raised one's first line) when the message the page states for an error is
    not found in what was raised (whitespace made single spaces, wildcards matching any text); () when it is, or the
    page states none."""
    want = " ".join(stated.split())
    got = " ".join(raised.split())
    if not want or _wildcard_pattern(want).search(got):
        return ()
    first = next((line.strip() for line in raised.splitlines() if line.strip()), "")
    return (f"-{stated_as}: {want}", f"+{raised_as}: {first[:300]}")
