"""The distribution files a `--find-links` folder or page offers, as entries of a PEP 691 project page.

uv installs from `--find-links` places as well as from the indexes; the suite lists the releases (and, with
`--pre`, the dev builds) it may install from both, so `PackageIndex.releases` merges these entries into the
index's page. They are read afresh each time (a folder of builds changes as a team adds to it; nothing is cached
on disk). A local wheel's `Requires-Python` is read from its METADATA, as an index's page would say it; a local
file named like a wheel that uv could not install (not a zip, no METADATA, another version inside than its name
says), or whose tags no interpreter of this machine can install (`cp27-cp27m-win32` on Linux: `packaging.tags`), is
left out and named, so that `latest` or a dev-build search never chooses it.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
import urllib.request
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from conformance.envs.pages import fetch_page
from conformance.errors import ConformanceError
from conformance.scrub import scrub_credentials, scrub_url

MAX_METADATA_BYTES = 1024 * 1024  # its headers come first; a hostile wheel's METADATA may inflate to gigabytes
_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-[0-9]")
_WHEEL_VERSION = re.compile(r"^[^-]+-(?P<version>[^-]+)-")


def _project_of(filename: str) -> str:
    found = _NAME.match(filename)
    return re.sub(r"[-_.]+", "-", found.group("name")).lower() if found else ""


# What zipfile raises on a file it cannot read: not a zip (BadZipFile), a truncated member (EOFError), an
# encrypted member (RuntimeError), a compression method it lacks (NotImplementedError), a bad header (ValueError).
ZIP_READ_ERRORS = (OSError, zipfile.BadZipFile, KeyError, EOFError, RuntimeError, NotImplementedError, ValueError)


def wheel_metadata(path: Path) -> tuple[dict[str, str], str]:
    """The headers of a wheel file's METADATA (its first MAX_METADATA_BYTES), and '' or why it is no installable
    wheel: not a zip, no METADATA, one zipfile cannot read, or a version other than its file name's (uv refuses
    such a wheel)."""
    try:
        with zipfile.ZipFile(path) as wheel:
            name = next((n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), "")
            if not name:
                return {}, "it holds no .dist-info/METADATA"
            with wheel.open(name) as member:
                head = member.read(MAX_METADATA_BYTES)
    except ZIP_READ_ERRORS as exc:
        return {}, f"not a readable wheel: {' '.join(str(exc).split())[:120] or type(exc).__name__}"
    headers = dict(HeaderParser().parsestr(head.decode("utf-8", "replace"), headersonly=True).items())
    named = _WHEEL_VERSION.match(path.name)
    if named and not _same_version(named.group("version"), headers.get("Version", "")):
        said = headers.get("Version", "none")[:40]
        return headers, f"its METADATA says version {said!r}, its name {named.group('version')}"
    return headers, ""


def _same_version(first: str, second: str) -> bool:
    try:
        return Version(first) == Version(second)
    except InvalidVersion:
        return first == second


def wheel_requires_python(path: Path) -> str | None:
    """The `Requires-Python` of a wheel file's METADATA (None when it has none or the file is no wheel)."""
    return wheel_metadata(path)[0].get("Requires-Python")


@functools.lru_cache(maxsize=1)
def installable_tags() -> frozenset[Tag]:
    """Every wheel tag some CPython interpreter of this machine (`envs.interpreters`) can install, on this machine's
    platforms."""
    from conformance.envs.interpreters import discover_interpreters

    platforms = list(platform_tags())
    tags: set[Tag] = set()
    for interpreter in discover_interpreters():
        version = Version(interpreter.version).release[:2]
        tags.update(cpython_tags(version, platforms=platforms))
        tags.update(compatible_tags(version, f"cp{version[0]}{version[1]}", platforms=platforms))
    return frozenset(tags)


def tags_problem(filename: str, installable: frozenset[Tag] | None = None) -> str:
    """Why no interpreter here could install the wheel `filename` (its tags match none of `installable`, by default
    `installable_tags()`), or ''."""
    try:
        tags = parse_wheel_filename(filename)[3]
    except (InvalidWheelFilename, InvalidVersion):
        return ""  # its name is checked against its METADATA instead
    if tags & (installable_tags() if installable is None else installable):
        return ""
    return f"no interpreter here can install its tags ({', '.join(sorted(str(t) for t in tags))[:120]})"


def _folder_entries(folder: Path, left_out: list[str]) -> list[dict[str, Any]]:
    entries = []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        requires = None
        if path.suffix == ".whl" and _project_of(path.name):
            problem = tags_problem(path.name)
            if problem:
                left_out.append(f"{path.name} ({problem})")
                continue
            headers, problem = wheel_metadata(path)
            if problem:  # listed, it would be chosen (`latest`, a dev step) and then fail to install
                left_out.append(f"{path.name} ({problem})")
                continue
            requires = headers.get("Requires-Python")
        entries.append({"filename": path.name, "requires-python": requires})
    return entries


def place_entries(place: str, left_out: list[str] | None = None) -> list[dict[str, Any]]:
    """Every file entry of one `--find-links` place: a folder (or `file://` URL of one), or an HTML page; a folder's
    wheels that cannot install, and a page's wheels whose tags no interpreter here can install, are left out, each
    named with why in `left_out`."""
    parts = urllib.parse.urlsplit(place)
    folder = (
        Path(urllib.request.url2pathname(parts.path))
        if parts.scheme == "file"
        else None
        if parts.scheme in ("http", "https")
        else Path(place)
    )
    if folder is not None:
        if not folder.is_dir():
            raise ConformanceError(
                f"--find-links {scrub_url(place)}: no such folder; name a folder of wheel "
                f"files or a page that links to them"
            )
        return _folder_entries(folder, left_out if left_out is not None else [])
    try:
        entries = [e for e in fetch_page(place).get("files", []) if isinstance(e, dict)]
    except (OSError, ValueError) as exc:
        raise ConformanceError(
            f"--find-links {scrub_url(place)} cannot be read ({scrub_credentials(str(exc), place)[:300]})"
        ) from None
    kept = []
    for entry in entries:  # a page's wheels whose tags no interpreter here can install, as for a folder's
        name = str(entry.get("filename", ""))
        problem = tags_problem(name) if name.endswith(".whl") and _project_of(name) else ""
        if problem:
            (left_out if left_out is not None else []).append(f"{name} ({problem})")
        else:
            kept.append(entry)
    return kept


def find_links_files(places: tuple[str, ...], project: str, left_out: list[str] | None = None) -> list[dict[str, Any]]:
    """The entries of `project`'s files (`jax-…whl`, not `jaxlib-…`) across the `--find-links` places; the
    project's wheels left out as uninstallable are named in `left_out`."""
    wanted = re.sub(r"[-_.]+", "-", project).lower()
    found, skipped = [], []
    for place in places:
        dropped: list[str] = []
        found += [
            entry
            for entry in place_entries(place, dropped)
            if isinstance(entry, dict) and _project_of(str(entry.get("filename", ""))) == wanted
        ]
        skipped += [f"--find-links {scrub_url(place)}: left out {why}" for why in dropped if _project_of(why) == wanted]
    if left_out is not None:
        left_out.extend(skipped)
    return found
