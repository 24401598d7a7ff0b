"""The distribution files a `--find-links` folder or page offers, as entries of a PEP 691 project page.

uv installs from `--find-links` places as well as from the indexes; the suite lists the releases (and, with
`--pre`, the dev builds) it may install from both, so `PackageIndex.releases` merges these entries into the
index's page. They are read afresh each time (a folder of builds changes as a team adds to it; nothing is cached
on disk). A local wheel's `Requires-Python` is read from its METADATA, as an index's page would say it.
"""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError

MAX_METADATA_BYTES = 1024 * 1024  # its headers come first; a hostile wheel's METADATA may inflate to gigabytes
_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-[0-9]")


def _project_of(filename: str) -> str:
    found = _NAME.match(filename)
    return re.sub(r"[-_.]+", "-", found.group("name")).lower() if found else ""


def wheel_requires_python(path: Path) -> str | None:
    """The `Requires-Python` of a wheel file's METADATA (None when it has none or the file is no wheel)."""
    try:
        with zipfile.ZipFile(path) as wheel:
            name = next((n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), "")
            if not name:
                return None
            with wheel.open(name) as member:
                head = member.read(MAX_METADATA_BYTES)
            headers = HeaderParser().parsestr(head.decode("utf-8", "replace"), headersonly=True)
    except (OSError, zipfile.BadZipFile, KeyError, EOFError, RuntimeError, NotImplementedError, ValueError):
        return None
    return headers.get("Requires-Python")


def _folder_entries(folder: Path) -> list[dict[str, Any]]:
    entries = []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        requires = wheel_requires_python(path) if path.suffix == ".whl" else None
        entries.append({"filename": path.name, "requires-python": requires})
    return entries


def place_entries(place: str) -> list[dict[str, Any]]:
    """Every file entry of one `--find-links` place: a folder (or `file://` URL of one), or an HTML page."""
    from conformance.envs.index import fetch_page, scrub_credentials

    parts = urllib.parse.urlsplit(place)
    folder = Path(urllib.request.url2pathname(parts.path)) if parts.scheme == "file" else \
        None if parts.scheme in ("http", "https") else Path(place)
    if folder is not None:
        if not folder.is_dir():
            raise ConformanceError(f"--find-links {place}: no such folder; name a folder of wheel files or a page "
                                   f"that links to them")
        return _folder_entries(folder)
    try:
        return list(fetch_page(place).get("files", []))
    except (OSError, ValueError) as exc:
        raise ConformanceError(f"--find-links {scrub_credentials(place)} cannot be read "
                               f"({scrub_credentials(str(exc))[:300]})") from None


def find_links_files(places: tuple[str, ...], project: str) -> list[dict[str, Any]]:
    """The entries of `project`'s files (`jax-…whl`, not `jaxlib-…`) across the `--find-links` places."""
    wanted = re.sub(r"[-_.]+", "-", project).lower()
    return [entry for place in places for entry in place_entries(place)
            if isinstance(entry, dict) and _project_of(str(entry.get("filename", ""))) == wanted]
