"""In which release each name change from A to B happened, over the censuses stored between them (pure).

`api.diff` dates a change over a chain of censuses (`bounds_of`): `since`, the first census from which it holds on
every later one, and `after`, the census before it that shows the change not yet made. This module only words those
two dates, and never dates anything again:

- exact, `removed in 0.6.0`, when the package index lists no release strictly between `after` and `since` (every
  release in between has a census, and it answered);
- a range, `removed between 0.8.3 and 0.10.0 (no census answers for 0.9.0)`, when a release in between has no
  census (or one that cannot tell, a module that failed to import), or when the releases the index lists are not
  known here (offline: `releases` None) -- never a wrong exact release;
- `deprecated in 0.4.26 or before`, when A itself already shows it (nothing stored before A tells when).

A removed name is dated twice: when it was deprecated (`diff.deprecation_of`, by the same rule over the censuses
before its removal; no date when the last census before the removal did not show it deprecated) and when it was
removed. With only A and B at hand (`chain` of two) there is nothing between to date by: no dating, the change's
`since` (B) says it as before.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.api.diff import Change, deprecation_of
from conformance.api.model import Census
from conformance.results.versions import version_order

# the event each kind of change is dated as, in words
EVENTS = {"signature": "signature changed"}
SHOWN_UNTESTED = 3  # releases without an answer named in a range's words, the rest counted


@dataclass(frozen=True)
class Dated:
    """One dated event of a name: `event` (removed, deprecated, moved, signature changed, ...), `since` the first
    census showing it, `after` the last census without it ("" when the first census of the chain already shows
    it), and `untested` the releases the index lists strictly between the two (None: the index's releases unknown)."""

    event: str
    since: str
    after: str
    untested: tuple[str, ...] | None

    @property
    def exact(self) -> bool:
        """Whether the release that first has it is known: a census without it right before, none missing between."""
        return bool(self.after) and self.untested == ()

    def words(self) -> str:
        """`removed in 0.6.0`, `removed between 0.8.3 and 0.10.0 (...)`, or `deprecated in 0.4.26 or before`."""
        if not self.after:
            return f"{self.event} in {self.since} or before"
        if self.exact:
            return f"{self.event} in {self.since}"
        if not self.untested:  # the index's releases unknown here
            return f"{self.event} between {self.after} and {self.since}"
        shown = ", ".join(self.untested[:SHOWN_UNTESTED])
        more = f" and {len(self.untested) - SHOWN_UNTESTED} more" if len(self.untested) > SHOWN_UNTESTED else ""
        return f"{self.event} between {self.after} and {self.since} (no census answers for {shown}{more})"

    def to_json(self) -> dict[str, Any]:
        """`{event, in, after, by}`: `in` the release when exact (else null); the event came after `after` (null: on
        or before the first release compared) and in or before `by`."""
        return {
            "event": self.event,
            "in": self.since if self.exact else None,
            "after": self.after or None,
            "by": self.since,
        }


@functools.lru_cache(maxsize=4096)  # a review dates thousands of changes between the same few pairs of censuses
def _between(low: str, high: str, releases: tuple[str, ...] | None) -> tuple[str, ...] | None:
    if releases is None:
        return None
    bounds = sorted([version_order(low), version_order(high)])
    return tuple(sorted((r for r in releases if bounds[0] < version_order(r) < bounds[1]), key=version_order))


def _dated(event: str, since: str, after: str, releases: Sequence[str] | None) -> Dated:
    return Dated(
        event, since, after, _between(after, since, None if releases is None else tuple(releases)) if after else ()
    )


def date_change(change: Change, chain: Sequence[Census], releases: Sequence[str] | None) -> tuple[Dated, ...]:
    """The dated events of one change over `chain` (A first, B last), `releases` the final releases the package
    index lists (None when not known): see the module docstring; () with only A and B."""
    if len(chain) < 3:
        return ()
    events = []
    if change.change == "removed":
        deprecated = deprecation_of(chain, change)
        if deprecated is not None:
            events.append(_dated("deprecated", *deprecated, releases))
    events.append(_dated(EVENTS.get(change.change, change.change), change.since, change.after, releases))
    return tuple(events)
