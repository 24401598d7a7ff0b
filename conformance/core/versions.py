"""JAX version strings compared without third-party packages, and the version the chapter documents. Pure."""

from __future__ import annotations

import re

DOCUMENTED_JAX = "0.12.0.1"
# The chapter whose behaviours the suite's rows and probes encode (`seeds/000_074f18c932eb1ee6.txt`, as
# behaviours.md names it): only its blocks are linked to, and judged against, the suite's probes.
DOCUMENTED_CHAPTER = "000_074f18c932eb1ee6"

OLDER, SAME, NEWER, UNKNOWN = "older", "same", "newer", "unknown"


def release_tuple(version: str) -> tuple[int, ...]:
    """The numeric release part of `version` (`0.12.0.1` → (0, 12, 0, 1)); pre/post/local parts are ignored."""
    found = re.match(r"^\s*v?(\d+(?:\.\d+)*)", version or "")
    if not found:
        raise ValueError(f"not a version: {version!r}")
    parts = [int(p) for p in found.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def direction(jax_version: str | None, documented: str = DOCUMENTED_JAX) -> str:
    """Whether `jax_version` is older than, the same as or newer than the documented release (or unknown)."""
    if not jax_version:
        return UNKNOWN
    try:
        mine, theirs = release_tuple(jax_version), release_tuple(documented)
    except ValueError:
        return UNKNOWN
    return OLDER if mine < theirs else NEWER if mine > theirs else SAME
