"""Dev builds (nightlies) between two releases, and the jaxlib that goes with each. Pure: version strings in and out.

JAX's nightly wheels are versioned `X.Y.Z.devYYYYMMDD` (a build from a git tree adds `+g<hash>`), jax and jaxlib
of one night sharing the version; a dev build sorts, in PEP 440 order, before its release `X.Y.Z` and after the
release before it. `dev_builds_between` lists the pre-releases and dev builds strictly between two releases, in the
direction from the first to the second, one build per night (builds of one night, told apart only by their `+g<hash>`
labels, have no order to search: the plain one is kept, else the first label; `left_out_of_nights` names the rest);
`nights_out_of_order` names dates that PEP 440 order runs backwards; `matching_jaxlib` pairs a jax build with the
jaxlib of the same night.
"""

from __future__ import annotations

from typing import Iterable

from packaging.version import InvalidVersion, Version


def _parsed(versions: Iterable[str]) -> dict[str, Version]:
    found = {}
    for text in versions:
        try:
            found[text] = Version(text)
        except InvalidVersion:
            continue
    return found


def dev_builds_between(versions: Iterable[str], first: str, last: str) -> list[str]:
    """The pre-releases and dev builds of `versions` strictly between releases `first` and `last`, ordered from
    `first` towards `last` (either may be the newer); empty when an end does not parse."""
    parsed = _parsed(versions)
    try:
        ends = Version(first), Version(last)
    except InvalidVersion:
        return []
    low, high = sorted(ends)
    found = sorted((v, t) for t, v in parsed.items() if low < v < high and v.is_prerelease)
    nights: dict[Version, str] = {}  # one build per night: `+g<hash>` labels of one night say nothing of order
    for version, text in found:
        if version.local is None or Version(version.public) not in nights:
            nights[Version(version.public)] = text
    ordered = [nights[v] for v in sorted(nights)]
    return ordered if ends[0] <= ends[1] else ordered[::-1]


def left_out_of_nights(versions: Iterable[str], first: str, last: str) -> list[str]:
    """The builds between `first` and `last` that `dev_builds_between` leaves out as a second build of a night it
    already searches (a `+g<hash>` build beside the plain one, or beside another label)."""
    chosen = set(dev_builds_between(versions, first, last))
    try:
        low, high = sorted((Version(first), Version(last)))
    except InvalidVersion:
        return []
    return sorted(
        (t for t, v in _parsed(versions).items() if low < v < high and v.is_prerelease and t not in chosen), key=Version
    )


def nights_out_of_order(builds: Iterable[str]) -> list[tuple[str, str]]:
    """Neighbours of `builds`, in PEP 440 order, whose dates run backwards (`0.12.1.dev20260105` before
    `0.13.0.dev20260102`: two release series built at once); the search assumes PEP 440 order is history."""
    dated = [(v, v.dev) for v in sorted(_parsed(builds).values()) if v.dev is not None and v.dev >= 19700101]
    texts = {v: t for t, v in _parsed(builds).items()}
    return [(texts[a], texts[b]) for (a, x), (b, y) in zip(dated, dated[1:]) if x > y]


def matching_jaxlib(jax: str, jaxlibs: Iterable[str]) -> str:
    """The jaxlib of `jaxlibs` that goes with jax `jax`: the same version; for a dev build, the jaxlib dev build of
    the same release and night (`0.12.1.dev20260102`, whatever its `+g<hash>`), else the newest one of an earlier
    night of that release; '' when none (then jax's own declared range chooses)."""
    parsed = _parsed(jaxlibs)
    if jax in parsed:
        return jax
    try:
        wanted = Version(jax)
    except InvalidVersion:
        return ""
    if wanted.dev is None:
        return next((t for t, v in parsed.items() if v == wanted), "")
    same_release = [
        (v.dev, v, t)
        for t, v in parsed.items()
        if v.release == wanted.release
        and v.pre == wanted.pre
        and v.post == wanted.post
        and v.dev is not None
        and v.dev <= wanted.dev
    ]
    return max(same_release)[2] if same_release else ""
