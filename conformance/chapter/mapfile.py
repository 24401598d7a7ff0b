"""The map file: an author's corrections to how a plain-text chapter was split. Pure (parses text).

```toml
# 000_074f18c932eb1ee6.map.toml, beside the chapter (or in the project's chapters/ folder)
[[block]]            # these lines are one block (1-based, first and last line, inclusive)
lines = [505, 532]
output = [533, 534]  # optional: the lines of output the document shows after it ([] for none)
section = "1.4"      # optional: its section and title, where the headings misled the splitter
title = "jax.disable_jit(): a debugging aid and a bisection tool"

[[not_code]]         # these lines are prose or output, in no block
lines = [404, 410]
```

Every block the splitter found that overlaps a `[[block]]` or `[[not_code]]` range is dropped, then the
`[[block]]` entries are added in their place. Two `[[block]]` entries that claim one line (code or output) are
refused, in one line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from conformance.chapter.blocks import stated_raise
from conformance.chapter.model import Heading
from conformance.errors import ConformanceError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


@dataclass(frozen=True)
class MapBlock:
    """A `[[block]]` entry: its code lines and output lines (1-based, inclusive; `output` None: none), and the section
    and title it sets ('' keeps the splitter's)."""

    first: int
    last: int
    output: tuple[int, int] | None = None
    section: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class ChapterMap:
    """A map file: the blocks it sets and the line ranges it says are not code."""

    blocks: tuple[MapBlock, ...] = ()
    not_code: tuple[tuple[int, int], ...] = ()

    def overlaps(self, first: int, last: int) -> bool:
        """Whether the lines `first..last` (1-based, inclusive) meet a range this map sets."""
        ranges = [(b.first, b.last) for b in self.blocks] + list(self.not_code)
        return any(first <= high and low <= last for low, high in ranges)


def _range(value: object, where: str, empty: bool = False) -> tuple[int, int] | None:
    if empty and value == []:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
        or value[0] > value[1]
    ):
        raise ConformanceError(
            f"{where} should be [first, last]: two line numbers from 1, the first not after the "
            f"last{' (or [] for none)' if empty else ''}, not {value!r}"
        )
    return value[0], value[1]


def _refuse_overlaps(blocks: list[MapBlock], source: str) -> None:
    """A one-line `ConformanceError` when two `[[block]]` entries claim a line (their code or output lines): which
    block would the line be in?"""
    spans = sorted(
        (span[0], span[1], number)
        for number, block in enumerate(blocks, 1)
        for span in ((block.first, block.last), block.output)
        if span
    )
    reach: tuple[int, int, int] | None = None  # the span reaching furthest so far
    for first, last, number in spans:
        if reach is not None and first <= reach[1] and number != reach[2]:
            raise ConformanceError(
                f"{source}: [[block]] {reach[2]} (lines {reach[0]}-{reach[1]}) and [[block]] "
                f"{number} (lines {first}-{last}) overlap; each line belongs to one block at most"
            )
        if reach is None or last > reach[1]:
            reach = (first, last, number)


def parse_map(text: str, source: str = "the map file") -> ChapterMap:
    """The map in `text`; one-line `ConformanceError` naming the bad entry."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{source} is not valid TOML: {exc}") from None
    unknown = set(data) - {"block", "not_code"}
    if unknown:
        raise ConformanceError(
            f"{source}: unknown table(s) {', '.join(sorted(unknown))}; it takes [[block]] and [[not_code]]"
        )
    for key, value in data.items():
        if not isinstance(value, list):
            raise ConformanceError(
                f"{source}: {key} should be [[{key}]] entries (an array of tables), not {key} = {value!r}"
            )
    blocks = []
    for number, entry in enumerate(data.get("block", []), 1):
        where = f"{source}: [[block]] {number}"
        if not isinstance(entry, dict):
            raise ConformanceError(f"{where} is not a table")
        extra = set(entry) - {"lines", "output", "section", "title"}
        if extra:
            raise ConformanceError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        first, last = _range(entry.get("lines"), f"{where}: lines")  # type: ignore[misc]
        output = _range(entry["output"], f"{where}: output", empty=True) if "output" in entry else None
        for key in ("section", "title"):
            if key in entry and not isinstance(entry[key], str):
                raise ConformanceError(f"{where}: {key} should be a string")
        blocks.append(MapBlock(first, last, output, entry.get("section"), entry.get("title")))
    _refuse_overlaps(blocks, source)
    not_code = []
    for number, entry in enumerate(data.get("not_code", []), 1):
        where = f"{source}: [[not_code]] {number}"
        if not isinstance(entry, dict) or set(entry) != {"lines"}:
            raise ConformanceError(f"{where} should be a table with lines = [first, last] only")
        not_code.append(_range(entry["lines"], f"{where}: lines"))
    return ChapterMap(tuple(blocks), tuple(not_code))  # type: ignore[arg-type]


def apply_map(raw: list[dict], chapter_map: ChapterMap, lines: list[str]) -> list[dict]:
    """The raw blocks of a plain-text chapter with the map's corrections made (`lines`: the chapter's lines)."""
    for block in chapter_map.blocks:
        if block.last > len(lines) or (block.output and block.output[1] > len(lines)):
            raise ConformanceError(
                f"the map names line {max(block.last, (block.output or (0, 0))[1])}, but the "
                f"chapter has {len(lines)} lines"
            )
    kept = [piece for piece in raw if not chapter_map.overlaps(piece["line"], piece["end_line"])]
    for block in chapter_map.blocks:
        near = [p for p in raw if p["line"] <= block.first]
        heading = near[-1]["heading"] if near else Heading()
        if block.section is not None or block.title is not None:
            heading = Heading(
                block.section if block.section is not None else heading.section,
                block.title if block.title is not None else heading.title,
                "",
            )
        output = "\n".join(lines[block.output[0] - 1 : block.output[1]]) if block.output else ""
        code = "\n".join(lines[block.first - 1 : block.last])
        kept.append(
            {
                "code": code,
                "line": block.first,
                "end_line": block.last,
                "heading": heading,
                "output": output,
                "joined": False,
                "output_known": True,
                "output_line": block.output[0] if block.output else 0,
                "raises": stated_raise(code),
                "skip": "",
                "shows_value": bool(output),
            }
        )
    return sorted(kept, key=lambda piece: piece["line"])
