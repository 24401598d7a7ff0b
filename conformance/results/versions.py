"""The order of JAX versions as result files name them: PEP 440, so pre-releases, dev builds and local labels sort
where they belong (`0.13.0.dev20261201` < `0.13.0rc1` < `0.13.0` and `0.12.0.1` < `0.12.0.1+corp.3` < `0.12.0.2`).

`core.versions` stays standard-library only and compares release numbers (which is all the direction from the
documented release needs: a `+local` build of 0.12.0.1 *is* the documented release); ordering is done here.
"""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version


def version_order(version: str) -> tuple[Any, ...]:
    """Sort key of a version string: PEP 440 order; unparsable versions last, by text."""
    try:
        return (0, Version(version), version)
    except (InvalidVersion, TypeError):
        return (1, Version("0"), str(version))


def release_of(version: str) -> str:
    """The public release a build belongs to: `0.12.0.1+corp.3` → `0.12.0.1` (the text itself when unparsable)."""
    try:
        return Version(version).public
    except (InvalidVersion, TypeError):
        return str(version)


def is_exactly(version: str, release: str) -> bool:
    """Whether `version` is `release` itself, not a pre-release, dev build or local build of it (`0.12.0.1+corp.3`
    is not exactly 0.12.0.1, though the direction from the documented release calls it the same)."""
    try:
        return Version(version) == Version(release)
    except (InvalidVersion, TypeError):
        return version == release


def normalized_or_same(text: str) -> str:
    """A version as PEP 440 normalizes it, as result files are named (`0.12.0.1+corp_3` is `0.12.0.1+corp.3`);
    `text` itself when it is no version."""
    try:
        return str(Version(text))
    except InvalidVersion:
        return text
