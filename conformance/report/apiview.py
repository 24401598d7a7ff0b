"""The report's API section: every public JAX name, release by release, from the censuses stored beside the results
(`jax-conformance api census`, `conformance.api`). Pure logic: what the page shows and searches, as plain data.

Per release and platform, the names it added, removed and newly deprecated since the release before it; per name and
platform, its first release usable (`≤0.4.38` when usable on the oldest census), the first deprecated, the release
that removed it and its last usable one; the replacement JAX's own message names; the keywords JAX removed behind its
`DeprecatedArg` sentinel (`name(keyword=)`, with JAX's message). `removed_between(view, a, b)` is what the page's
"removed between A and B" lists (its script computes the same). Computed from the censuses (`conformance.api.table`,
`conformance.api.diff.keyword_state`), never written by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.api.diff import keyword_state
from conformance.api.model import Census
from conformance.api.table import by_platform, name_histories, per_release
from conformance.results.versions import version_order


@dataclass(frozen=True)
class ApiView:
    """What the API section shows: `releases` (one entry per release and platform with its changes), `platforms`,
    and `names` (name → per platform, in `platforms` order, `[added, deprecated, removed, last]`, '' for none, or
    None where the platform never listed the name)."""

    releases: tuple[dict[str, Any], ...]
    platforms: tuple[str, ...]
    names: dict[str, list[list[str] | None]]
    censuses: int
    versions: tuple[tuple[str, ...], ...] = ()
    replacements: dict[str, str] | None = None
    keywords: tuple[tuple[str, int, str, str, str], ...] = ()

    def data(self) -> dict[str, Any]:
        """The page's data block for the section (read by its script only when the section is used): `versions`
        per platform oldest first, `replacements` name → the name JAX's message points to, `keywords` each
        `[name(keyword=), platform index, removed in, first usable, JAX's message]`."""
        return {
            "platforms": list(self.platforms),
            "releases": list(self.releases),
            "names": self.names,
            "versions": [list(v) for v in self.versions],
            "replacements": self.replacements or {},
            "keywords": [list(k) for k in self.keywords],
        }

    @property
    def all_versions(self) -> list[str]:
        """Every release with a census, oldest first (over the platforms)."""
        return sorted({v for found in self.versions for v in found}, key=version_order)

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
    for name, per_platform in histories.items():
        names[name] = [
            [h.added, h.deprecated, h.removed, h.last] if (h := per_platform.get(p)) else None for p in platforms
        ]
    releases = tuple(change.to_json() for change in per_release(censuses))
    grouped = by_platform(censuses)
    versions = tuple(tuple(c.jax for c in grouped.get(p, [])) for p in platforms)
    replacements = {}
    for census in sorted(censuses, key=lambda c: version_order(c.jax)):  # the newest census that names one wins
        replacements.update({n: str(e["replacement"]) for n, e in census.names.items() if e.get("replacement")})
    keywords = tuple(k for i, p in enumerate(platforms) for k in keyword_removals(grouped.get(p, []), i))
    return ApiView(releases, platforms, names, len(censuses), versions, replacements, keywords)


def _plain(version: str) -> str:
    return version.lstrip("≤")


def keyword_removals(found: Sequence[Census], platform: int) -> list[tuple[str, int, str, str, str]]:
    """The keywords JAX removed behind its sentinel over one platform's censuses (oldest first): each
    `(name(keyword=), platform, removed in, first usable, JAX's message)`."""
    out = []
    marked = sorted({(n, k) for c in found for n, e in c.names.items() for k in (e.get("keywords") or {})})
    for name, keyword in marked:
        states = [(c, keyword_state(c, name, keyword)) for c in found]
        states = [(c, s) for c, s in states if s is not None]
        usable = [i for i, (_, s) in enumerate(states) if s in ("present", "deprecated")]
        if not usable or usable[-1] + 1 >= len(states):
            continue
        gone, first = states[usable[-1] + 1][0], states[usable[0]][0]
        said = (
            next(
                (
                    c.keyword(name, keyword)
                    for c, _ in states
                    if (c.keyword(name, keyword) or {}).get("state") == "removed"
                ),
                None,
            )
            or {}
        )
        message = ": ".join(x for x in (str(said.get("effect") or ""), str(said.get("message") or "")) if x)
        out.append((f"{name}({keyword}=)", platform, gone.jax, first.jax, message or "removed from the signature"))
    return out


def removed_between(view: ApiView, a: str, b: str) -> list[dict[str, str]]:
    """The names (and keywords) usable on release `a` and removed by release `b` (`a` older), on each platform:
    `{name, platform, removed, replacement}`, by name. What the page's "removed between" lists."""
    out = []
    for k, versions in enumerate(view.versions):
        if a not in versions or b not in versions:
            continue
        ia, ib = versions.index(a), versions.index(b)
        at = {v: i for i, v in enumerate(versions)}
        for name, histories in view.names.items():
            h = histories[k]
            if not h or not h[0] or not h[2] or at.get(_plain(h[0]), 99) > ia:
                continue
            if ia < at.get(h[2], -1) <= ib:
                out.append(
                    {
                        "name": name,
                        "platform": view.platforms[k],
                        "removed": h[2],
                        "replacement": (view.replacements or {}).get(name, ""),
                    }
                )
        for label, platform, gone, first, message in view.keywords:
            if platform == k and at.get(first, 99) <= ia < at.get(gone, -1) <= ib:
                out.append({"name": label, "platform": view.platforms[k], "removed": gone, "replacement": message})
    return sorted(out, key=lambda r: (r["name"], r["platform"]))
