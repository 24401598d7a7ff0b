"""Which commits a build was made from, and the link that lists the commits between two builds. Pure.

Every jax and jaxlib wheel since 0.8 records its commit in `version.py` (`_git_hash`); the run header keeps both
(`jax_git_hash`, `jaxlib_git_hash`, schema 4). An older wheel records none: its release is then named by the tag
jax-ml/jax gives it (`jax-v0.7.2`, `jaxlib-v0.7.2`), which a compare link accepts as well; a dev build that
records none is named by the commit its local label carries (`0.13.0.dev20260102+gabc1234` → `abc1234`), since dev
builds have no tag. A compare link always runs from the older build to the newer one (GitHub lists nothing the
other way), whichever end the search started from (`--find-fix`, or a good end newer than the bad one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

REPOSITORY = "https://github.com/jax-ml/jax"
_HASH = re.compile(r"^_git_hash\s*(?::[^=]*)?=\s*['\"]([0-9a-f]{7,40})['\"]", re.M)
_LOCAL_HASH = re.compile(r"\+g([0-9a-f]{7,40})$")
_MINIMUM = re.compile(r"^_minimum_jaxlib_version\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", re.M)


@dataclass(frozen=True)
class BuildCommits:
    """A build's jax and jaxlib versions and the commits their wheels record ('' when none is recorded)."""

    jax: str
    jaxlib: str
    jax_hash: str = ""
    jaxlib_hash: str = ""

    @property
    def jax_ref(self) -> str:
        """What names the jax side in a link: its commit, else its release tag."""
        return self.jax_hash or _ref("jax", self.jax)

    @property
    def jaxlib_ref(self) -> str:
        """What names the jaxlib side in a link: its commit, else its release tag."""
        return self.jaxlib_hash or _ref("jaxlib", self.jaxlib)

    def line(self) -> str:
        """`jax 0.8.0 (commit 1a2b3c4d5e6f) with jaxlib 0.8.0 (same commit)`, tags where no commit is recorded."""
        jaxlib = (
            "same commit"
            if self.jaxlib_hash and self.jaxlib_hash == self.jax_hash
            else _said("jaxlib", self.jaxlib, self.jaxlib_hash)
        )
        return f"jax {self.jax} ({_said('jax', self.jax, self.jax_hash)}) with jaxlib {self.jaxlib} ({jaxlib})"


def _ref(name: str, version: str) -> str:
    local = _LOCAL_HASH.search(version)
    return local.group(1) if local else f"{name}-v{version}"


def _said(name: str, version: str, commit: str) -> str:
    if commit:
        return f"commit {commit[:12]}"
    local = _LOCAL_HASH.search(version)
    return (
        f"no commit recorded; its label names {local.group(1)}"
        if local
        else f"no commit recorded; tag {name}-v{version}"
    )


def _older_first(first: str, second: str) -> bool:
    """Whether version `first` is not newer than `second` (unreadable versions keep the order given)."""
    try:
        return Version(first) <= Version(second)
    except InvalidVersion:
        return True


def commits_of_header(header: Any) -> BuildCommits:
    """The commits a result file's `RunHeader` records (schema 4; older headers give none)."""
    return BuildCommits(
        header.jax,
        header.jaxlib or header.jax,
        getattr(header, "jax_git_hash", "") or "",
        getattr(header, "jaxlib_git_hash", "") or "",
    )


def compare_url(good: BuildCommits, bad: BuildCommits) -> str:
    """The page listing the jax-ml/jax commits between the good build's jax and the bad one's, older first."""
    old, new = (good, bad) if _older_first(good.jax, bad.jax) else (bad, good)
    return f"{REPOSITORY}/compare/{old.jax_ref}...{new.jax_ref}"


def jaxlib_compare_url(good: BuildCommits, bad: BuildCommits) -> str:
    """The same for the jaxlib side, '' when it is the jax link (both sides built at one commit or one tag pair)
    or when both builds hold the same jaxlib (nothing lies between)."""
    if good.jaxlib_hash == good.jax_hash and bad.jaxlib_hash == bad.jax_hash or good.jaxlib_ref == bad.jaxlib_ref:
        return ""
    old, new = (good, bad) if _older_first(good.jaxlib, bad.jaxlib) else (bad, good)
    return f"{REPOSITORY}/compare/{old.jaxlib_ref}...{new.jaxlib_ref}"


def commit_url(commit: str) -> str:
    """The page of one jax-ml/jax commit."""
    return f"{REPOSITORY}/commit/{commit}"


def hash_in_version_file(text: str) -> str:
    """The `_git_hash` a `version.py` sets ('' when it is None, as in wheels before 0.8)."""
    found = _HASH.search(text)
    return found.group(1) if found else ""


def minimum_jaxlib_in_version_file(text: str) -> str:
    """The `_minimum_jaxlib_version` a jax `version.py` sets ('' when none)."""
    found = _MINIMUM.search(text)
    return found.group(1) if found else ""
