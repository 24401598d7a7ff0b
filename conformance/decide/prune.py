"""`expectations prune`: which entries of an expectations file the stored results no longer need, as a diff. Pure.

An entry is removable when
- it matches no stored cell any more (a renamed or deleted case, a platform or JAX version that is not stored), or
- on each platform, the cell it applies to behaves as the chapter documents on the newest stored JAX version the
  entry applies to: an intended row conforms, or a known issue no longer shows (its cell differs). The
  acknowledgement is no longer needed and the workaround behind it is removable.

The removal is the entry's lines (the comments right above its `[[expect]]` header, its keys and the blank lines
after them), shown as a unified diff (difflib) and applied as new text.
"""

from __future__ import annotations

import difflib

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from dataclasses import dataclass, field
from typing import Iterable

from conformance.core.status import Status
from conformance.decide.expectations import Expectation, parse_expectations_file
from conformance.decide.tomllines import header_lines, line_starts_in_string, toml_lines
from conformance.errors import ConformanceError
from conformance.results.merge import MergedRun
from conformance.results.schema import CellResult
from conformance.results.versions import version_order

NO_CELL = "matches no cell of the stored results any more"
NOT_NEEDED = "acknowledgement no longer needed: workaround removable"


@dataclass(frozen=True)
class Removal:
    """One entry to remove and why."""

    entry: Expectation
    why: str


@dataclass
class PruneOutcome:
    """The entries to remove, the file's new text and the unified diff between the two."""

    removals: list[Removal] = field(default_factory=list)
    kept: int = 0
    new_text: str = ""
    diff: str = ""


def behaves(cell: CellResult) -> bool:
    """Whether a cell behaves as the chapter documents, so no acknowledgement is needed: an intended row conforms;
    on a known-issue row (where `conforms` means the bug is there) the bug no longer shows (`differs`)."""
    return cell.status is (Status.DIFFERS if cell.known_issue else Status.CONFORMS)


def why_removable(entry: Expectation, runs: Iterable[MergedRun]) -> str | None:
    """Why `entry` can go (`NO_CELL`, or `NOT_NEEDED` with the versions read), or None when it is still needed."""
    newest: dict[str, tuple[MergedRun, list[CellResult]]] = {}
    for run in runs:
        cells = [c for c in run.cells.values() if entry.applies_to(run.platform, c.case, c.param, run.jax)]
        if cells and (
            run.platform not in newest or version_order(run.jax) > version_order(newest[run.platform][0].jax)
        ):
            newest[run.platform] = (run, cells)
    if not newest:
        return NO_CELL
    if all(behaves(cell) for _, cells in newest.values() for cell in cells):
        read = ", ".join(f"{platform} jax {run.jax}" for platform, (run, _) in sorted(newest.items()))
        return f"{NOT_NEEDED} (the cell behaves as the chapter documents on {read})"
    return None


def entry_spans(text: str) -> list[tuple[int, int]]:
    """The 0-based [start, end) line span of each `[[expect]]` entry, in order: the comment lines right above its
    header (unless they open the file), the header, its keys (and the comments among them or right after the last),
    and the blank lines after them. A comment block set apart by a blank line before the next entry (a section's
    heading) is the file's own and stays. The last entry takes the blank lines before it instead, so removing it
    leaves no blank end; comment lines after it close the file and stay. Lines inside a multi-line string are never
    a header or a comment."""
    lines = toml_lines(text)
    in_string = line_starts_in_string(text) + [False] * len(lines)

    def comment(i: int) -> bool:
        return not in_string[i] and lines[i].lstrip().startswith("#")

    def blank(i: int) -> bool:
        return not in_string[i] and not lines[i].strip()

    headers = header_lines(text)
    starts = []
    for header in headers:
        start = header
        while start > 0 and comment(start - 1):
            start -= 1
        starts.append(header if start == 0 else start)  # comments that open the file are the file's own
    spans = []
    for n, (start, header) in enumerate(zip(starts, headers)):
        last_entry = n + 1 == len(starts)
        limit = len(lines) if last_entry else starts[n + 1]
        content = [i for i in range(header, limit) if not (comment(i) or blank(i))]
        end = content[-1] + 1
        while end < limit and comment(end):  # comments right after its last key are its own
            end += 1
        if last_entry:
            while start > 0 and blank(start - 1):
                start -= 1
            if all(blank(i) for i in range(end, len(lines))):
                end = len(lines)  # only blank lines follow: they go with it
        else:
            while end < limit and blank(end):
                end += 1
        spans.append((start, end))
    return spans


def _same_entries(text: str, kept: list[dict], others: dict, source: str) -> None:
    """Refuse, in one line, a pruned text whose TOML is not the original's minus the removed entries: every other
    setting and every kept entry exactly as it was (so no entry is cut, merged into another or lost)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        data = None
    if data is None or data.get("expect", []) != kept or {k: v for k, v in data.items() if k != "expect"} != others:
        raise ConformanceError(
            f"{source}: cannot find each entry's lines (the pruned file would not read as the "
            f"same entries); write every entry as a line `[[expect]]` followed by its keys"
        )


def prune(text: str, runs: list[MergedRun], source: str = "expectations") -> PruneOutcome:
    """The entries of the expectations file `text` that `runs` no longer need, the text without them and the diff."""
    entries = parse_expectations_file(text, source).entries
    data = tomllib.loads(text)
    spans = entry_spans(text)
    if len(spans) != len(entries):
        raise ConformanceError(
            f"{source}: cannot find each entry's lines; write every entry as a line `[[expect]]` followed by its keys"
        )
    lines = toml_lines(text)
    outcome = PruneOutcome()
    drop: set[int] = set()
    for entry, (start, end) in zip(entries, spans):
        why = why_removable(entry, runs)
        if why is None:
            outcome.kept += 1
            continue
        outcome.removals.append(Removal(entry, why))
        drop.update(range(start, end))
    kept_lines = [line for i, line in enumerate(lines) if i not in drop]
    while drop and kept_lines and not kept_lines[-1].strip():  # a removal leaves no blank lines at the end
        kept_lines.pop()
    outcome.new_text = "".join(kept_lines)
    removed = {id(removal.entry) for removal in outcome.removals}
    _same_entries(
        outcome.new_text,
        [raw for raw, entry in zip(data.get("expect", []), entries) if id(entry) not in removed],
        {k: v for k, v in data.items() if k != "expect"},
        source,
    )
    outcome.diff = "".join(difflib.unified_diff(lines, kept_lines, fromfile=f"a/{source}", tofile=f"b/{source}"))
    return outcome
