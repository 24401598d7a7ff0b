"""Censuses over many releases as tables for the report and the compat JSON (pure: computed from censuses, never
written by hand).

- `per_release(censuses)`: for one platform, each release's names added, removed and deprecated since the release
  before it (the oldest release is the baseline: nothing listed);
- `name_histories(censuses)`: per name and platform, the first release it is usable on (present or deprecated), the
  first it is deprecated on, and the release it is removed on (the first after its last usable one, when it is not
  usable on the newest);
- `compat_entries(censuses)`: BCD-shaped entries, nested by the dotted parts of each name:
  `{"jax": {"numpy": {"fix": {"__compat": {"description", "support": {PLATFORM: statement}, "status":
  {"experimental", "standard_track", "deprecated"}}}}}}`, a statement being `{"version_added", "version_removed",
  "version_last"}` as the compat JSON's rows have them (`≤V` where it is already usable on the oldest census of the
  platform; `version_added: false` where it never is; an array, newest span first, where it comes and goes).

On every platform each name's states are read over that platform's censuses, oldest first; a census that cannot
tell (the name is under a module that failed to import there) is left out of that name's spans.
`status.deprecated` is whether the newest census with an entry for the name reports it deprecated or removed, on any
platform; `status.experimental` whether it is `jax.experimental` or below it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.api.model import USABLE, Census
from conformance.results.versions import version_order

MAX_DESCRIPTION_SIGNATURE = 200


def by_platform(censuses: Sequence[Census]) -> dict[str, list[Census]]:
    """The censuses of each platform, oldest first, one per release (the last given wins)."""
    grouped: dict[str, dict[str, Census]] = {}
    for census in censuses:
        grouped.setdefault(census.platform, {})[census.jax] = census
    return {
        platform: sorted(found.values(), key=lambda c: version_order(c.jax))
        for platform, found in sorted(grouped.items())
    }


@dataclass(frozen=True)
class ReleaseChanges:
    """What a release changed since the release before it, on one platform."""

    jax: str
    platform: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    deprecated: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "jax": self.jax,
            "platform": self.platform,
            "added": list(self.added),
            "removed": list(self.removed),
            "deprecated": list(self.deprecated),
        }


def release_changes(before: Census, now: Census) -> ReleaseChanges:
    """The names `now` added, removed and newly deprecated since `before` (names neither can tell left out)."""
    added, removed, deprecated = [], [], []
    for name in sorted(set(before.names) | set(now.names)):
        was, is_ = before.state(name), now.state(name)
        if "unknown" in (was, is_):
            continue
        if was not in USABLE and is_ in USABLE:
            added.append(name)
        elif was in USABLE and is_ not in USABLE:
            removed.append(name)
        elif was == "present" and is_ == "deprecated":
            deprecated.append(name)
    return ReleaseChanges(now.jax, now.platform, tuple(added), tuple(removed), tuple(deprecated))


def per_release(censuses: Sequence[Census]) -> list[ReleaseChanges]:
    """Each release's changes since the one before it, per platform, oldest first."""
    out = []
    for found in by_platform(censuses).values():
        out += [release_changes(before, now) for before, now in zip(found, found[1:])]
    return out


def _states(found: Sequence[Census], name: str) -> list[tuple[str, str]]:
    """(release, state) over the censuses that can tell, oldest first."""
    return [(c.jax, c.state(name)) for c in found if c.state(name) != "unknown"]


@dataclass(frozen=True)
class NameHistory:
    """One name on one platform: `added` (first usable; `≤V` when usable on the oldest census, '' never),
    `deprecated` (first deprecated, same form; '' never), `removed` (the first release after its last usable one,
    when it is not usable on the newest; '' otherwise), `last` (its last usable release; '' never)."""

    name: str
    platform: str
    added: str
    deprecated: str
    removed: str
    last: str

    def to_json(self) -> dict[str, str | None]:
        """Plain JSON (null for '')."""
        return {
            "added": self.added or None,
            "deprecated": self.deprecated or None,
            "removed": self.removed or None,
            "last": self.last or None,
        }


def _first(states: list[tuple[str, str]], test: Callable[[str], bool]) -> str:
    for i, (release, state) in enumerate(states):
        if test(state):
            return f"≤{release}" if i == 0 else release
    return ""


def name_history(found: Sequence[Census], name: str) -> NameHistory:
    """One name's history over one platform's censuses (oldest first)."""
    states = _states(found, name)
    platform = found[0].platform if found else ""
    usable = [i for i, (_, state) in enumerate(states) if state in USABLE]
    last = states[usable[-1]][0] if usable else ""
    removed = states[usable[-1] + 1][0] if usable and usable[-1] + 1 < len(states) else ""
    return NameHistory(
        name,
        platform,
        _first(states, lambda s: s in USABLE),
        _first(states, lambda s: s == "deprecated"),
        removed,
        last,
    )


def name_histories(censuses: Sequence[Census]) -> dict[str, dict[str, NameHistory]]:
    """name → platform → its history (see `NameHistory`)."""
    out: dict[str, dict[str, NameHistory]] = {}
    for platform, found in by_platform(censuses).items():
        for name in sorted({n for c in found for n in c.names}):
            out.setdefault(name, {})[platform] = name_history(found, name)
    return dict(sorted(out.items()))


def support_statement(found: Sequence[Census], name: str) -> dict[str, Any] | list[dict[str, Any]]:
    """BCD support statement(s) of one name on one platform (see the module docstring)."""
    states = _states(found, name)
    spans: list[list[int]] = []
    for i, (_, state) in enumerate(states):
        if state in USABLE:
            if spans and spans[-1][1] == i - 1:
                spans[-1][1] = i
            else:
                spans.append([i, i])
    if not spans:
        return {"version_added": False}
    statements = []
    for start, end in reversed(spans):
        statement: dict[str, Any] = {"version_added": f"≤{states[0][0]}" if start == 0 else states[start][0]}
        if end + 1 < len(states):
            statement["version_removed"] = states[end + 1][0]
            statement["version_last"] = states[end][0]
        statements.append(statement)
    return statements[0] if len(statements) == 1 else statements


def description(censuses: Sequence[Census], name: str) -> str:
    """The name as the newest census where it is usable (else the newest with an entry) describes it: kind,
    signature; a config option's environment variable."""
    newest = sorted((c for c in censuses if c.entry(name)), key=lambda c: (c.usable(name), version_order(c.jax)))
    entry = (newest[-1].entry(name) if newest else None) or {}
    if entry.get("kind") == "config":
        return f"config option {name.rsplit('.', 1)[-1]} (environment variable {entry.get('env')})"
    signature = str(entry.get("signature") or "")
    if len(signature) > MAX_DESCRIPTION_SIGNATURE:
        signature = signature[: MAX_DESCRIPTION_SIGNATURE - 1] + "…"
    return f"{entry.get('kind') or 'name'} {name}{signature}"


def _deprecated(grouped: dict[str, list[Census]], name: str) -> bool:
    for found in grouped.values():
        known = [c for c in found if c.entry(name)]
        if known and (known[-1].entry(name) or {}).get("state") in ("deprecated", "removed"):
            return True
    return False


def compat_entry(
    censuses: Sequence[Census], name: str, grouped: dict[str, list[Census]] | None = None
) -> dict[str, Any]:
    """One name's `__compat` statement (`grouped`: `by_platform(censuses)`, when already at hand)."""
    grouped = grouped if grouped is not None else by_platform(censuses)
    support = {platform: support_statement(found, name) for platform, found in grouped.items()}
    return {
        "description": description(censuses, name),
        "support": support,
        "status": {
            "experimental": name == "jax.experimental" or name.startswith("jax.experimental."),
            "standard_track": False,
            "deprecated": _deprecated(grouped, name),
        },
    }


def compat_entries(censuses: Sequence[Census], keep: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """Every name of the censuses (those `keep` accepts) as nested BCD identifiers: `{"jax": {...}}`, to go under
    the compat JSON's `api` key."""
    tree: dict[str, Any] = {}
    grouped = by_platform(censuses)
    for name in sorted({n for c in censuses for n in c.names}):
        if keep is not None and not keep(name):
            continue
        node = tree
        for part in name.split("."):
            node = node.setdefault(part, {})
        node["__compat"] = compat_entry(censuses, name, grouped)
    return tree
