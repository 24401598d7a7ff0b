"""Releases grouped into spans: a row's state per release of one platform, told as runs of consecutive releases.

Shared by the Markdown page ("since which release" tables) and the compat JSON (`version_added` /
`version_removed` ranges). Pure logic on the report model: a release without a result for the row is left
out, so a span runs over the releases that were measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from conformance.report.model import Column, TableCell

T = TypeVar("T")


@dataclass(frozen=True)
class Span(Generic[T]):
    """Consecutive measured releases that share a state: `first` to `last`; `next` is the release measured right
    after `last` (empty when `last` is the newest measured one)."""

    state: T
    first: str
    last: str
    next: str = ""

    @property
    def text(self) -> str:
        """`0.4.38–0.7.2`, or `0.8.0` for a span of one release."""
        return self.first if self.first == self.last else f"{self.first}–{self.last}"


def spans(states: Sequence[tuple[str, T]]) -> list[Span[T]]:
    """Runs of equal states over `(release, state)` pairs in release order, oldest first."""
    out: list[Span[T]] = []
    for release, state in states:
        if out and out[-1].state == state:
            out[-1] = Span(state, out[-1].first, release)
        else:
            if out:
                out[-1] = Span(out[-1].state, out[-1].first, out[-1].last, release)
            out.append(Span(state, release, release))
    return out


def platform_states(
    columns: Sequence[Column],
    cells_per_column: Sequence[Sequence[TableCell]],
    platform: str,
    state: Callable[[list[TableCell]], T | None],
) -> list[tuple[str, T]]:
    """`(release, state)` for each release column of `platform`, in column order; `state` sees the column's measured
    cells (those with a result) and may return None to leave the column out (nothing measured). A build of its own
    (`--python`, `--wheels`, `--pair`, a source build) is left out: it carries a release's number without being that
    release, so it must not stand in for it in a span of releases."""
    out = []
    for column, cells in zip(columns, cells_per_column):
        if column.platform != platform or column.build:
            continue
        measured = [c for c in cells if c.result is not None]
        value = state(measured) if measured else None
        if value is not None:
            out.append((column.jax, value))
    return out


def joined(parts: Sequence[Span[T]]) -> str:
    """Several spans as one text: `0.4.38–0.5.3, 0.9.0`."""
    return ", ".join(p.text for p in parts)
