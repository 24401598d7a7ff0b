"""One entry of the published run history: what the new results hold and which cells changed since the last ones.

`history_entry` compares the previous published result files with the new ones, cell by cell (a cell is one case
parameter on one JAX version, platform and build), and says why each changed cell changed: its release was not in
the previous results (`new release`), its reuse key differs (`changed case`: the case, the shared probe code, the
suite or the environment changed), or its key is the same and its status or printed-output mark is not (`changed
result on an unchanged key`: the probe is nondeterministic, flagged). Pure logic; `results.history_file` reads and
writes `history.json`, whose format is documented in docs/result-format.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from conformance.core.status import Status
from conformance.errors import ConformanceError
from conformance.results.merge import MergedRun, merge_files
from conformance.results.schema import CellResult, ResultFile
from conformance.results.versions import version_order

NEW_RELEASE = "new release"
NEW_CASE = "new case"  # a cell the previous results of its (kept) column did not hold
CHANGED_CASE = "changed case"
UNCHANGED_KEY = "changed result on an unchanged key"
KEY_NOT_RECORDED = "key not recorded"  # a file written before cells carried keys: the reason cannot be told
REMOVED = "removed"
REASONS = (UNCHANGED_KEY, CHANGED_CASE, KEY_NOT_RECORDED, NEW_CASE, NEW_RELEASE, REMOVED)
# Cells listed per entry (the counts are always complete); flagged ones come first, so the cap drops them last.
MAX_LISTED = 200
_COMMIT = re.compile(r"[0-9a-fA-F]{7,40}")


@dataclass(frozen=True)
class ColumnRef:
    """One column of results: a JAX version on a platform ("" build for a release; else its build identity)."""

    jax: str
    platform: str
    build: str = ""
    cells: int = 0


@dataclass(frozen=True)
class ChangedCell:
    """A cell whose status or printed-output mark changed since the previous results, and why. `before` or
    `after` is None where the cell had no result on that side."""

    cell: str
    jax: str
    platform: str
    build: str
    reason: str
    before: str | None
    after: str | None
    printed_before: bool = False
    printed_after: bool = False

    @property
    def flagged(self) -> bool:
        """Whether the change happened on an unchanged key: the same inputs gave another result."""
        return self.reason == UNCHANGED_KEY


@dataclass
class HistoryEntry:
    """One published run: when, which suite, what the results hold, and what changed since the previous results."""

    date: str
    commit: str
    suite_version: str
    first_run: bool
    releases: list[str]
    platforms: list[str]
    cells: int
    counts: dict[str, int]
    printed_differs: int
    changes: dict[str, int]
    keys_changed: int = 0  # cells of kept columns whose key changed (so were run again), whatever their result
    new_columns: list[ColumnRef] = field(default_factory=list)
    removed_columns: list[ColumnRef] = field(default_factory=list)
    changed: list[ChangedCell] = field(default_factory=list)
    changed_left_out: int = 0

    @property
    def total_changes(self) -> int:
        """Every changed cell, listed or not, new releases' cells included."""
        return sum(self.changes.values())

    @property
    def flagged(self) -> int:
        """How many cells changed on an unchanged key (nondeterminism)."""
        return self.changes.get(UNCHANGED_KEY, 0)

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form, as history.json stores it."""
        return asdict(self)


def check_commit(commit: str) -> str:
    """`commit` if it is empty or 7 to 40 hex digits; one-line `ConformanceError` otherwise."""
    if commit and not _COMMIT.fullmatch(commit):
        raise ConformanceError(f"--commit {commit[:60]!r} is not a git commit (7 to 40 hex digits)")
    return commit.lower()


def _columns(files: Iterable[ResultFile]) -> dict[tuple[str, str, str], MergedRun]:
    return {(run.jax, run.platform, run.build): run for run in merge_files(files)}


def _suite_version(files: Sequence[ResultFile]) -> str:
    """The suite version of the file that finished last (the one that ran most recently)."""
    latest = max(files, key=lambda f: f.header.finished_at, default=None)
    return latest.header.suite_version if latest else ""


def _reason(before: CellResult, after: CellResult) -> str:
    if not before.key or not after.key:
        return KEY_NOT_RECORDED
    return UNCHANGED_KEY if before.key == after.key else CHANGED_CASE


def _changed(old: MergedRun, new: MergedRun) -> tuple[list[ChangedCell], int]:
    """The changed cells of a column both sides hold, and how many of its cells' keys changed."""
    found, keys_changed = [], 0
    for cell_id in sorted(set(old.cells) | set(new.cells)):
        before, after = old.cells.get(cell_id), new.cells.get(cell_id)
        if before is not None and after is not None:
            keys_changed += bool(before.key and after.key and before.key != after.key)
            if before.status == after.status and before.printed_differs == after.printed_differs:
                continue
            reason = _reason(before, after)
        else:
            reason = NEW_CASE if before is None else REMOVED
        found.append(
            ChangedCell(
                cell_id,
                new.jax,
                new.platform,
                new.build,
                reason,
                before.status.value if before else None,
                after.status.value if after else None,
                bool(before and before.printed_differs),
                bool(after and after.printed_differs),
            )
        )
    return found, keys_changed


def _listed(changed: list[ChangedCell]) -> list[ChangedCell]:
    return sorted(changed, key=lambda c: (REASONS.index(c.reason), c.cell, version_order(c.jax), c.platform, c.build))


def history_entry(
    previous: Sequence[ResultFile] | None,
    new: Sequence[ResultFile],
    date: str,
    commit: str = "",
    max_listed: int = MAX_LISTED,
) -> HistoryEntry:
    """The history entry of the run whose results are `new`, against the previous published results (`previous`
    None or empty: the first run, every column a new release). Columns are compared cell by cell."""
    old_runs, new_runs = _columns(previous or []), _columns(new)
    changes = Counter({reason: 0 for reason in REASONS})
    changed: list[ChangedCell] = []
    keys_changed = 0
    new_columns, removed_columns = [], []
    for ref, run in sorted(new_runs.items(), key=lambda item: (version_order(item[0][0]), item[0][1:])):
        if ref not in old_runs:
            new_columns.append(ColumnRef(*ref, cells=len(run.cells)))
            changes[NEW_RELEASE] += len(run.cells)
            continue
        found, rerun = _changed(old_runs[ref], run)
        changed += found
        keys_changed += rerun
        changes.update(c.reason for c in found)
    for ref, run in sorted(old_runs.items(), key=lambda item: (version_order(item[0][0]), item[0][1:])):
        if ref not in new_runs:
            removed_columns.append(ColumnRef(*ref, cells=len(run.cells)))
            changes[REMOVED] += len(run.cells)
    cells = [cell for run in new_runs.values() for cell in run.cells.values()]
    statuses = Counter(cell.status.value for cell in cells)
    listed = _listed(changed)
    return HistoryEntry(
        date=date,
        commit=check_commit(commit),
        suite_version=_suite_version(new),
        first_run=not old_runs,
        releases=sorted({ref[0] for ref in new_runs}, key=version_order),
        platforms=sorted({ref[1] for ref in new_runs}),
        cells=len(cells),
        counts={status.value: statuses.get(status.value, 0) for status in Status},
        printed_differs=sum(cell.printed_differs for cell in cells),
        changes=dict(changes),
        keys_changed=keys_changed,
        new_columns=new_columns,
        removed_columns=removed_columns,
        changed=listed[:max_listed],
        changed_left_out=max(0, len(listed) - max_listed),
    )


def _column_from_json(data: Mapping[str, Any]) -> ColumnRef:
    return ColumnRef(
        str(data.get("jax", "")), str(data.get("platform", "")), str(data.get("build", "")), int(data.get("cells", 0))
    )


def entry_from_json(data: Mapping[str, Any]) -> HistoryEntry:
    """A `HistoryEntry` from its stored form (already checked by `results.history_file`)."""
    fields = dict(data)
    fields["new_columns"] = [_column_from_json(c) for c in data.get("new_columns", [])]
    fields["removed_columns"] = [_column_from_json(c) for c in data.get("removed_columns", [])]
    fields["changed"] = [ChangedCell(**{"before": None, "after": None, **c}) for c in data.get("changed", [])]
    known = HistoryEntry.__dataclass_fields__
    return HistoryEntry(**{k: v for k, v in fields.items() if k in known})


def summary_line(entry: HistoryEntry) -> str:
    """`N cells changed: X new release, Y changed case, Z changed on an unchanged key — flagged` (and the other
    reasons where any cell has them)."""
    total = entry.total_changes
    parts = [
        f"{entry.changes.get(NEW_RELEASE, 0)} new release",
        f"{entry.changes.get(CHANGED_CASE, 0)} changed case",
        f"{entry.flagged} changed on an unchanged key" + (" — flagged" if entry.flagged else ""),
    ]
    parts += [f"{entry.changes[r]} {r}" for r in (NEW_CASE, KEY_NOT_RECORDED, REMOVED) if entry.changes.get(r)]
    return f"{total} cell{'s' if total != 1 else ''} changed: " + ", ".join(parts)


def describe_change(change: ChangedCell) -> str:
    """One line for a person: `cell on jax V (platform): before → after (reason)`."""

    def word(status: str | None, printed: bool) -> str:
        return "no result" if status is None else status + (" (printed output differs)" if printed else "")

    build = f" ({change.build})" if change.build else ""
    return (
        f"{change.cell} on jax {change.jax}{build} {change.platform}: "
        f"{word(change.before, change.printed_before)} → {word(change.after, change.printed_after)} "
        f"({change.reason})"
    )


MAX_PRINTED = 10


def entry_lines(entry: HistoryEntry, path: str, entries: int) -> list[str]:
    """What `jax-conformance history` prints: the entry appended, its summary, new and removed columns, and the
    flagged cells (at most `MAX_PRINTED`)."""
    commit = f" at {entry.commit[:12]}" if entry.commit else ""
    lines = [
        f"history: {path} entry {entries} ({entry.date}{commit}, suite {entry.suite_version or '?'}): "
        f"{entry.cells} cells, {len(entry.releases)} release(s) on {', '.join(entry.platforms) or 'no platform'}"
        + (" — the first run" if entry.first_run else ""),
        summary_line(entry),
    ]
    if entry.keys_changed:
        lines.append(
            f"{entry.keys_changed} cell(s) ran again for a changed key (counted as changed only where "
            f"their status or printed-output mark changed)"
        )
    if entry.new_columns and not entry.first_run:
        lines.append("new: " + ", ".join(f"jax {c.jax} {c.platform}" for c in entry.new_columns[:MAX_PRINTED]))
    if entry.removed_columns:
        lines.append("removed: " + ", ".join(f"jax {c.jax} {c.platform}" for c in entry.removed_columns[:MAX_PRINTED]))
    flagged = [c for c in entry.changed if c.flagged]
    lines += [f"flagged (same key, another result): {describe_change(c)}" for c in flagged[:MAX_PRINTED]]
    if entry.flagged > min(len(flagged), MAX_PRINTED):
        lines.append(f"… and {entry.flagged - min(len(flagged), MAX_PRINTED)} more flagged (see {path})")
    return lines
