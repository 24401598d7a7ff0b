"""The project's own list of documented rows (ID, chapter section, one-line summary): `rows.tsv` beside this module.

`rows.tsv` is the source of truth, committed and edited by hand (one `id<TAB>section<TAB>summary` line per row), so
a contributor can change it from a clone. It was first imported from the chapter's row list, `shared/behaviours.md`,
which lives outside the repository; the same import refreshes it when the chapter gains rows:

    python tools/import_rows.py ../shared/behaviours.md     # rewrite rows.tsv from the chapter's table
    python tools/import_rows.py ../shared/behaviours.md --check

(the maintainer's script outside the package, calling `refresh_rows`).

`render_tsv(parse_tsv(text))` gives the committed file back byte for byte (tests/test_core_rowlist.py), so a hand
edit that drifts from the canonical form (a missing field, a stray tab) fails there.

Standard library only: case declarations are checked against it at import, in the child too.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

ROWS_FILE = Path(__file__).resolve().parent / "rows.tsv"
_ROW_LINE = re.compile(r"^\|\s*`(?P<id>[a-z0-9_.]+)`\s*\|\s*(?P<section>[^|]*)\|\s*(?P<behaviour>[^|]*)\|")
SUMMARY_CHARS = 160
HEADER = "# id\tsection\tsummary  (the source of truth, edited by hand: see conformance/core/rowlist.py)"


@dataclass(frozen=True)
class Row:
    """One documented behaviour of the chapter."""

    id: str
    section: str
    summary: str


def _one_line(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"


def parse_behaviours(markdown: str) -> list[Row]:
    """Every row of the behaviours table, in document order."""
    rows = []
    for line in markdown.splitlines():
        found = _ROW_LINE.match(line)
        if found:
            rows.append(Row(found["id"], found["section"].strip(), _one_line(found["behaviour"])))
    return rows


def render_tsv(rows: list[Row]) -> str:
    """The text of `rows.tsv`: a comment line, then `id<TAB>section<TAB>summary` per row."""
    lines = [HEADER]
    lines += [f"{r.id}\t{r.section}\t{r.summary.replace(chr(9), ' ')}" for r in rows]
    return "\n".join(lines) + "\n"


def parse_tsv(text: str) -> list[Row]:
    """The rows of a `rows.tsv` text."""
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            row_id, section, summary = (line.split("\t") + ["", ""])[:3]
            rows.append(Row(row_id, section, summary))
    return rows


@functools.lru_cache(maxsize=None)
def load_rows() -> tuple[Row, ...]:
    """The project's rows, read once."""
    return tuple(parse_tsv(ROWS_FILE.read_text(encoding="utf-8")))


def row_ids() -> frozenset[str]:
    """Every row ID of the project's list."""
    return frozenset(r.id for r in load_rows())


def refresh_rows(behaviours: str, source: str, check: bool = False) -> tuple[str, int]:
    """Import `rows.tsv` from the text of a chapter's `behaviours.md` (read from `source`), or with `check` only say
    whether `rows.tsv` agrees with it; the line to print and the exit status (1: `rows.tsv` differs)."""
    text = render_tsv(parse_behaviours(behaviours))
    if check:
        same = ROWS_FILE.exists() and ROWS_FILE.read_text(encoding="utf-8") == text
        return ("rows.tsv is up to date", 0) if same else (f"rows.tsv differs from {source}; regenerate it", 1)
    ROWS_FILE.write_text(text, encoding="utf-8")
    return f"wrote {ROWS_FILE} ({text.count(chr(10)) - 1} rows)", 0
