"""What the package index knows about jax and jaxlib releases: versions, Requires-Python, wheel tags.

Parsing (pure) is kept apart from fetching; answers are cached on disk for a day (one cache per index URL)
and a stale cache is used when the index cannot be reached. `IndexOptions` are the user's `--index-url`,
`--extra-index-url`, `--find-links` and `--pre`: read here for the release lists, and passed to uv as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import urllib.error
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from packaging.version import InvalidVersion, Version

from conformance.atomic import write_text_atomically
from conformance.envs.find_links import find_links_files
from conformance.envs.pages import fetch_page
from conformance.errors import ConformanceError
from conformance.scrub import scrub_credentials, without_credentials

DEFAULT_INDEX = "https://pypi.org/simple"
CACHE_TTL_S = 24 * 3600
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")
_SDIST = re.compile(r"^(?P<name>.+?)-(?P<version>[0-9][^-]*)\.(tar\.gz|zip)$")


@dataclass(frozen=True)
class Release:
    """One release of a project on the index."""

    version: str
    requires_python: str | None
    wheel_pythons: frozenset[str] = field(default_factory=frozenset)  # e.g. {"cp312", "py3"}


def parse_simple_json(payload: dict[str, Any]) -> dict[str, Release]:
    """Releases by version from a PEP 691 JSON project page; yanked files are ignored."""
    requires: dict[str, str | None] = {}
    pythons: dict[str, set[str]] = {}
    for entry in payload.get("files", []):
        if entry.get("yanked"):
            continue
        name = entry.get("filename", "")
        match = _WHEEL.match(name) or _SDIST.match(name)
        if not match:
            continue
        version = match.group("version")
        requires.setdefault(version, entry.get("requires-python"))
        if requires[version] is None and entry.get("requires-python"):
            requires[version] = entry["requires-python"]
        tags = pythons.setdefault(version, set())
        if "python" in match.groupdict() and match.group("python"):
            tags.update(match.group("python").split("."))
    return {v: Release(v, requires[v], frozenset(pythons[v])) for v in requires}


def sort_versions(versions) -> list[str]:
    """Versions in release order; unparsable ones last."""

    def key(text: str):
        try:
            return (0, Version(text))
        except InvalidVersion:
            return (1, Version("0"))

    return sorted(versions, key=key)


def index_url() -> str:
    """The simple index to ask: UV_DEFAULT_INDEX or UV_INDEX_URL when set, else PyPI. (PIP_INDEX_URL is not read:
    uv, which installs the environments, does not read it either, so it would name an index nothing used.)"""
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        if os.environ.get(var, "").startswith(("http://", "https://", "file://")):
            return os.environ[var].rstrip("/")
    return DEFAULT_INDEX


@dataclass(frozen=True)
class IndexOptions:
    """Where packages come from: the user's `--index-url`, `--extra-index-url` (repeatable), `--find-links`
    (repeatable) and `--pre`. Empty options mean uv's own defaults, which honour UV_INDEX_URL and the rest."""

    index_url: str = ""
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    pre: bool = False

    @property
    def given(self) -> bool:
        """Whether any option was given (an environment built with them is cached apart)."""
        return bool(self.index_url or self.extra_index_urls or self.find_links or self.pre)

    def uv_args(self) -> list[str]:
        """The options as uv's command line takes them (`uv pip install`, `uv pip compile`)."""
        args = ["--index-url", self.index_url] if self.index_url else []
        for url in self.extra_index_urls:
            args += ["--extra-index-url", url]
        for place in self.find_links:
            args += ["--find-links", place]
        if self.pre:
            args += ["--prerelease", "allow"]
        return args

    def indexes(self) -> list[str]:
        """The simple indexes whose release lists are read: the main one (given, or from the environment), then
        the extra ones (given, or UV_EXTRA_INDEX_URL's, space-separated, as uv reads it)."""
        extra = self.extra_index_urls or tuple(os.environ.get("UV_EXTRA_INDEX_URL", "").split())
        return [(self.index_url or index_url()).rstrip("/"), *(u.rstrip("/") for u in extra)]

    def urls(self) -> list[str]:
        """Every URL the options name (indexes and `--find-links` pages), as given: what a message about them must
        never show the credentials of (`scrub.scrub_credentials(text, *options.urls())`)."""
        return [*self.indexes(), *(p for p in self.find_links if "://" in p)]

    def describe(self) -> dict[str, Any]:
        """What a result header records of them: the indexes read, credentials removed (and `--pre`)."""
        main, *extra = self.indexes()
        found: dict[str, Any] = {"index_url": without_credentials(main)}
        if extra:
            found["extra_index_urls"] = [without_credentials(u) for u in extra]
        if self.find_links:
            found["find_links"] = [
                without_credentials(p) if "://" in p else os.path.basename(p.rstrip("/\\")) for p in self.find_links
            ]
        if self.pre:
            found["pre"] = True
        return found

    def digest(self) -> str:
        """A short hash of the options, for cache folder names."""
        text = json.dumps([self.index_url, list(self.extra_index_urls), list(self.find_links), self.pre])
        return hashlib.sha256(text.encode()).hexdigest()[:10]


def merge_pages(pages: list[dict[str, Any]]) -> dict[str, Any]:
    """One PEP 691 page holding the files of several indexes' pages (the first index's files first)."""
    return {"files": [entry for page in pages for entry in page.get("files", []) if isinstance(entry, dict)]}


def fetch_project_page(project: str, base: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """One project's page as PEP 691 JSON: asked for as JSON, read as PEP 503 HTML when that is all the index
    serves, and read from the folder of a `file://` index. A user name and password in the index URL (a mirror's
    token) are sent as HTTP basic authentication, as pip and uv do; urllib would refuse them in the URL."""
    return fetch_page(f"{base or index_url()}/{project}/", timeout)


def check_cache_folder(folder: Path) -> None:
    """Refuse, in one line, a cache location that exists and is not a folder (JAX_CONFORMANCE_CACHE set to a file)."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                raise ConformanceError(
                    f"the cache folder {folder} cannot be made: {place} is a file; set "
                    f"JAX_CONFORMANCE_CACHE to a folder (or unset it)"
                )
            return


class PackageIndex:
    """Cached view of the index for the projects the suite needs."""

    def __init__(
        self,
        cache_dir: Path,
        fetch: Callable[[str], dict[str, Any]] | None = None,
        options: IndexOptions = IndexOptions(),
    ) -> None:
        self.cache_dir = cache_dir
        self.options = options
        self.fetch = fetch or self._fetch_every_index
        self._pages: dict[str, dict[str, Release]] = {}
        self.notices: list[str] = []

    def _fetch_every_index(self, project: str) -> dict[str, Any]:
        """The project's page of the main index and of each extra index, as one page."""
        return merge_pages([fetch_project_page(project, base) for base in self.options.indexes()])

    def cache_file(self, project: str) -> Path:
        """Where the project's page is cached: one file per set of indexes (PyPI's keeps its plain name)."""
        indexes = self.options.indexes()
        if indexes == [DEFAULT_INDEX]:
            return self.cache_dir / f"index-{project}.json"
        return self.cache_dir / f"index-{project}-{hashlib.sha256(' '.join(indexes).encode()).hexdigest()[:10]}.json"

    def _read_cache(self, cached: Path) -> dict[str, Any] | None:
        """The cached page, or None (with a notice) when the file is unreadable or truncated."""
        try:
            payload = json.loads(cached.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.notices.append(f"the package-index cache {cached.name} was unreadable; fetched it again")
            return None
        return payload if isinstance(payload, dict) else None

    def releases(self, project: str) -> dict[str, Release]:
        """Releases of `project`, from memory, a fresh disk cache, the index, or a stale disk cache."""
        if project in self._pages:
            return self._pages[project]
        check_cache_folder(self.cache_dir)
        cached = self.cache_file(project)
        payload = None
        if cached.exists() and time.time() - cached.stat().st_mtime < CACHE_TTL_S:
            payload = self._read_cache(cached)
        if payload is None:
            try:
                payload = self.fetch(project)
                write_text_atomically(cached, json.dumps(payload))
            except (OSError, urllib.error.URLError, ValueError) as exc:
                stale = self._read_cache(cached) if cached.exists() else None
                if stale is None:
                    why = scrub_credentials(str(exc), *self.options.urls())
                    if isinstance(exc, ValueError):  # it answered, but not with a project page
                        raise ConformanceError(
                            f"the package index did not give a readable project page for {project} ({why[:300]})"
                        ) from None
                    raise ConformanceError(
                        f"cannot read the package index for {project} ({why[:300]}); check the network, or name a "
                        f"reachable simple index with --index-url (or UV_INDEX_URL)"
                    ) from None
                payload = stale
        if self.options.find_links:  # read afresh, never cached: a folder of builds grows
            left_out: list[str] = []
            payload = merge_pages([payload, {"files": find_links_files(self.options.find_links, project, left_out)}])
            self.notices.extend(left_out)
        self._pages[project] = parse_simple_json(payload)
        return self._pages[project]

    def cached_releases(self, project: str) -> list[str] | None:
        """The release versions of `project` from memory or the disk cache, however old, without asking the index;
        None when neither has them (a report must render offline)."""
        if project in self._pages:
            return list(self._pages[project])
        cached = self.cache_file(project)
        try:
            payload = json.loads(cached.read_text(encoding="utf-8"))
            return list(parse_simple_json(payload)) if isinstance(payload, dict) else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def jax_release(self, version: str) -> Release:
        """The jax release `version`, or a clear error naming the nearest known releases."""
        releases = self.releases("jax")
        if version in releases:
            return releases[version]
        known = sort_versions(releases)
        hint = ", ".join(known[-5:])
        raise ConformanceError(
            f"unknown JAX version '{version}': it is not on the package index; recent releases are {hint}"
        )

    def jaxlib_for(self, version: str) -> str:
        """The jaxlib version that goes with jax `version`: the same version, or for a dev build the jaxlib of the
        same night (`envs.nightlies.matching_jaxlib`); '' when the index has none (jax's declared range chooses)."""
        from conformance.envs.nightlies import matching_jaxlib

        return matching_jaxlib(version, self.releases("jaxlib"))

    def jaxlib_pythons(self, version: str) -> frozenset[str]:
        """Python tags (cp312, ...) with a jaxlib wheel for this version; empty when unknown."""
        release = self.releases("jaxlib").get(version)
        return release.wheel_pythons if release else frozenset()
