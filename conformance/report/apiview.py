"""The report's API section: every public JAX name, release by release, from the censuses stored beside the results
(`jax-conformance api census`, `conformance.api`). Pure logic: what the page shows and searches, as plain data.

Per release and platform, the names it added, removed and newly deprecated since the release before it; per name and
platform, its first release usable (`≤0.4.38` when usable on the oldest census), the first deprecated, the release
that removed it and its last usable one. Computed from the censuses (`conformance.api.table`), never written by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.api.model import Census
from conformance.api.table import name_histories, per_release


@dataclass(frozen=True)
class ApiView:
    """What the API section shows: `releases` (one entry per release and platform with its changes), `platforms`,
    and `names` (name → per platform, in `platforms` order, `[added, deprecated, removed, last]`, '' for none, or
    None where the platform never listed the name)."""

    releases: tuple[dict[str, Any], ...]
    platforms: tuple[str, ...]
    names: dict[str, list[list[str] | None]]
    censuses: int

    def data(self) -> dict[str, Any]:
        """The page's data block for the section (read by its script only when the section is used)."""
        return {"platforms": list(self.platforms), "releases": list(self.releases), "names": self.names}

    @property
    def changes(self) -> int:
        """How many (name, release) changes the releases list."""
        return sum(len(r["added"]) + len(r["removed"]) + len(r["deprecated"]) for r in self.releases)


def api_view(censuses: Sequence[Census]) -> ApiView | None:
    """The API section of `censuses` (None without any)."""
    if not censuses:
        return None
    histories = name_histories(censuses)
    platforms = tuple(sorted({c.platform for c in censuses}))
    names = {}
    for name, by_platform in histories.items():
        names[name] = [[h.added, h.deprecated, h.removed, h.last] if (h := by_platform.get(p)) else None
                       for p in platforms]
    releases = tuple(change.to_json() for change in per_release(censuses))
    return ApiView(releases, platforms, names, len(censuses))
