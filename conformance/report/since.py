"""The report's "Since the last run" section, from the run history (`history.json`). Pure logic.

`since_view` picks what the section shows from the history's entries: the last entry (this run) and what changed in
it, grouped by reason, the cells changed on an unchanged key first and flagged, and the previous runs, newest first.
`since_markdown` writes the section for the Markdown page; the HTML page renders the same view in its template.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.report.markdown import text
from conformance.results.history import (
    CHANGED_CASE,
    KEY_NOT_RECORDED,
    NEW_CASE,
    REMOVED,
    UNCHANGED_KEY,
    MAX_LISTED,
    ChangedCell,
    HistoryEntry,
    summary_line,
)

# The order the groups of changed cells are shown in, with what each reason means to a reader.
GROUPS = {
    UNCHANGED_KEY: "the same case, probe code, suite and environment gave another result: the probe is "
    "nondeterministic (or the machine differs); the previous result is kept in the history beside "
    "the new one",
    CHANGED_CASE: "the cell's key changed (its case, the shared probe code, the suite or the environment), so it ran "
    "again and its result changed",
    KEY_NOT_RECORDED: "a result file without reuse keys: why it changed cannot be told",
    NEW_CASE: "a cell the previous results did not hold on this release",
    REMOVED: "a cell the new results no longer hold",
}
MAX_RUNS_SHOWN = 60  # previous runs listed in the page (every one is in history.json)
MAX_MARKDOWN_CELLS = 30
MAX_MARKDOWN_RUNS = 10


@dataclass
class CellChanges:
    """One cell's change on one platform, alike on one or more releases (a case edit changes a cell on many)."""

    cell: str
    platform: str
    build: str
    before: str | None
    after: str | None
    printed_before: bool
    printed_after: bool
    versions: list[str] = field(default_factory=list)

    @property
    def versions_text(self) -> str:
        """`0.4.38, 0.5.0`, or `0.4.38 … 0.12.0 (26 releases)` for more than four."""
        if len(self.versions) <= 4:
            return ", ".join(self.versions)
        return f"{self.versions[0]} … {self.versions[-1]} ({len(self.versions)} releases)"

    def text(self, reason: str = "") -> str:
        """One line: `cell on jax VERSIONS (platform): before → after`, and the reason where given."""

        def word(status: str | None, printed: bool) -> str:
            return "no result" if status is None else status + (" (printed output differs)" if printed else "")

        build = f" ({self.build})" if self.build else ""
        return (
            f"{self.cell} on jax {self.versions_text}{build} · {self.platform}: "
            f"{word(self.before, self.printed_before)} → {word(self.after, self.printed_after)}"
            + (f" ({reason})" if reason else "")
        )


def grouped(changes: list[ChangedCell]) -> list[CellChanges]:
    """`changes` with the same cell, platform, build and change on several releases folded into one, in order."""
    found: dict[tuple, CellChanges] = {}
    for c in changes:
        key = (c.cell, c.platform, c.build, c.before, c.after, c.printed_before, c.printed_after)
        if key not in found:
            found[key] = CellChanges(*key)
        found[key].versions.append(c.jax)
    return list(found.values())


@dataclass
class ChangeGroup:
    """The changed cells of one reason (as many as the entry lists, folded over releases) and how many cells
    changed for it in all."""

    reason: str
    meaning: str
    cells: list[CellChanges]
    total: int

    @property
    def listed(self) -> int:
        """How many changed cells (one per release) the group's lines cover."""
        return sum(len(c.versions) for c in self.cells)

    @property
    def flagged(self) -> bool:
        """Whether these changed on an unchanged key."""
        return self.reason == UNCHANGED_KEY


@dataclass
class SinceView:
    """What the "Since the last run" section shows."""

    entry: HistoryEntry
    previous: HistoryEntry | None
    groups: list[ChangeGroup]
    runs: list[HistoryEntry]  # the earlier runs, newest first (at most MAX_RUNS_SHOWN)
    runs_total: int
    history_href: str = ""  # the history file, relative to the page, where the page can link to it
    listed_cap: int = MAX_LISTED  # the changed cells an entry lists at most
    summary: str = field(init=False)

    def __post_init__(self) -> None:
        self.summary = summary_line(self.entry)


def since_view(entries: list[HistoryEntry], history_href: str = "") -> SinceView | None:
    """The section's view from the history's entries (oldest first); None for an empty history."""
    if not entries:
        return None
    entry = entries[-1]
    gone = sum(c.cells for c in entry.removed_columns)  # counted as removed, listed as columns
    totals = {reason: entry.changes.get(reason, 0) - (gone if reason == REMOVED else 0) for reason in GROUPS}
    groups = [
        ChangeGroup(reason, meaning, grouped([c for c in entry.changed if c.reason == reason]), totals[reason])
        for reason, meaning in GROUPS.items()
        if totals[reason] > 0
    ]
    earlier = entries[:-1][::-1]
    return SinceView(
        entry, earlier[0] if earlier else None, groups, earlier[:MAX_RUNS_SHOWN], len(earlier), history_href
    )


def run_label(entry: HistoryEntry) -> str:
    """`2026-12-01 (abc1234def56)`: a run's date and short commit."""
    return entry.date + (f" ({entry.commit[:12]})" if entry.commit else "")


def since_markdown(view: SinceView | None) -> list[str]:
    """The Markdown lines of the section (none without a history)."""
    if view is None:
        return []
    entry = view.entry
    lines = ["", "## Since the last run", ""]
    against = f", compared with the run of {text(run_label(view.previous))}" if view.previous else ""
    lines.append(
        f"This run: {text(run_label(entry))}, suite {text(entry.suite_version or '?')}{against}. "
        + ("The first run in the history: every cell is new." if entry.first_run else text(view.summary) + ".")
    )
    for group in (g for g in view.groups if g.flagged):
        lines += [
            "",
            f"**⚠ {group.total} cell{'s' if group.total != 1 else ''} changed on an unchanged key "
            f"(flagged):** {text(group.meaning)}.",
        ]
    new = [c for c in entry.new_columns if not entry.first_run]
    if new:
        lines += [
            "",
            f"New release{'s' if len(new) != 1 else ''}: "
            + ", ".join(text(f"jax {c.jax} on {c.platform} ({c.cells} cell{'s' if c.cells != 1 else ''})") for c in new)
            + ".",
        ]
    if entry.removed_columns:
        lines += [
            "",
            "No longer in the results: "
            + ", ".join(text(f"jax {c.jax} on {c.platform}") for c in entry.removed_columns)
            + ".",
        ]
    shown = [(g, c) for g in view.groups for c in g.cells][:MAX_MARKDOWN_CELLS]
    if shown:
        lines += [""] + [f"- {text(c.text(g.reason))}" for g, c in shown]
        more = sum(g.total for g in view.groups) - sum(len(c.versions) for _, c in shown)
        if more > 0:
            lines.append(
                f"- … and {more} more changed cell{'s' if more != 1 else ''} (the HTML page lists "
                f"{MAX_LISTED} per run at most, history.json counts every one)"
            )
    if view.runs:
        lines += [
            "",
            "Previous runs:",
            "",
            "| run | suite | releases | cells | conforms | changed | flagged |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {text(run_label(r))} | {text(r.suite_version)} | {len(r.releases)} | {r.cells} | "
            f"{r.counts.get('conforms', 0)} | {r.total_changes} | {r.flagged} |"
            for r in view.runs[:MAX_MARKDOWN_RUNS]
        ]
    return lines
