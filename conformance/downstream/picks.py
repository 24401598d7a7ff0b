"""Each release's own resolver pick of a library (`downstream NAME==V --resolve each`): which version of the library
works with which JAX.

The library is resolved afresh with each release (its requirement unpinned: the version named is only the suite's
label), the pick read from that release's lock (`picked_version`, pure), and a release it does not resolve with is
`Uninstallable` with the resolver's reason, never a crash. The judging then compares different library versions:
`across_line` (pure) says so for each pair whose picks differ, and `pick_lines` (pure) gives the compatibility
answer, one line per library version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from packaging.utils import canonicalize_name

from conformance.downstream.lock import Lock, Uninstallable, lock_for
from conformance.downstream.manifest import Suite
from conformance.errors import ConformanceError


def picked_version(lock_text: str, name: str) -> str:
    """The version a lock pins `name` to ('' when it pins none): `chex==0.1.92` -> `0.1.92`."""
    wanted = canonicalize_name(name) if name else ""
    for line in lock_text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" not in line or not wanted:
            continue
        found, version = line.split("==", 1)
        if canonicalize_name(found.split("[", 1)[0].strip()) == wanted:
            return version.split(";", 1)[0].strip()
    return ""


def each_release(suite: Suite, versions: Sequence[str], builder: Any) -> dict[str, Lock | Uninstallable]:
    """The suite's lock resolved afresh against each release; a release it does not resolve with is `Uninstallable`
    with the resolver's last words."""
    found: dict[str, Lock | Uninstallable] = {}
    for version in versions:
        try:
            found[version] = lock_for(suite, version, builder)
        except ConformanceError as exc:
            found[version] = Uninstallable(version, str(exc), "")
    return found


def pick_lines(name: str, picks: dict[str, str]) -> list[str]:
    """The compatibility answer: one line per library version with the releases it was picked for (in the order
    given), and the releases it resolved with none."""
    by_version: dict[str, list[str]] = {}
    for release, version in picks.items():
        by_version.setdefault(version, []).append(release)
    lines = []
    for version, releases in by_version.items():
        which = f"{name} {version}" if version else f"no {name} version resolves"
        lines.append(f"  {which} with jax {', '.join(releases)}")
    return lines


def across_line(name: str, picks: dict[str, str], base: str, cand: str) -> str:
    """A note when the pair's picks differ (their judgement compares two library versions), else ''."""
    before, after = picks.get(base, ""), picks.get(cand, "")
    if before == after:
        return ""
    return (
        f"    note: this compares {name} {before or '(none)'} on jax {base} with {name} {after or '(none)'} on jax "
        f"{cand}: a change may be the library's, not JAX's"
    )
