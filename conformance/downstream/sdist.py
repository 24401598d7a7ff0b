"""A library's tests from its source distribution (`tests = "sdist"` in the manifest): flax ships its tests only there.

- `pick_sdist` (pure): the `.tar.gz` of `NAME==VERSION` on an index's project page (PEP 691 JSON, or PEP 503 HTML
  read as it), with its URL and the sha256 the page gives.
- `test_members` (pure): which members of the archive to extract, refusing a hostile archive in one line (a member
  with an absolute path or a `..` part anywhere, a link or anything but a plain file or folder among those taken)
  and bounding what is taken (count and bytes) and the archive's whole listing (count and bytes unpacked).
  Taken: the test folder (`sdist_tests`, else `tests` or `test` at the
  sdist's top) and the top-level files pytest reads its configuration and fixtures from (`conftest.py`,
  `pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`); never the library's own source, so the tests import the
  installed library, not the sdist's copy of it. A test folder that is one of the library's packages is refused
  for the same reason.
- `sdist_tests`: the sdist downloaded once from the configured indexes (kept as `downstream/sdists/<sha256>.tar.gz`
  in the cache, checked against the index's sha256), its tests extracted once next to it
  (`downstream/sdists/<sha256>-tests/`), written file by file (never `tarfile.extract`): the folder the suite's
  pytest runs in. No sdist on the index, or no test folder in it, is one line.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import shutil
import tarfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock
from packaging.utils import InvalidSdistFilename, canonicalize_name, parse_sdist_filename
from packaging.version import InvalidVersion, Version

from conformance.atomic import write_text_atomically
from conformance.envs.pages import fetch_file, fetch_page
from conformance.errors import ConformanceError
from conformance.scrub import scrub_credentials

MAX_SDIST_BYTES = 512 * 1024 * 1024
MAX_TEST_BYTES = 128 * 1024 * 1024
MAX_TEST_FILES = 20000
# The whole archive's listing is read before any member is taken: bounded too, since a small gzip can declare
# millions of empty members or terabytes of zeros (the listing is held in memory, the zeros decompressed to skip).
MAX_SDIST_MEMBERS = 200000
MAX_UNPACKED_BYTES = 4 * 1024 * 1024 * 1024
CONFIG_FILES = ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
TEST_FOLDERS = ("tests", "test")


@dataclass(frozen=True)
class SdistFile:
    """One source distribution on an index: its file name, URL and sha256 ('' when the page gives none)."""

    filename: str
    url: str
    sha256: str


def pick_sdist(page: dict[str, Any], page_url: str, name: str, version: str) -> SdistFile | None:
    """The `.tar.gz` sdist of `name==version` on a project page (its URL made absolute against `page_url`), or None."""
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    for entry in page.get("files", []):
        filename = entry.get("filename") if isinstance(entry, dict) else None
        if not isinstance(filename, str) or not filename.endswith(".tar.gz"):
            continue
        try:
            found, at = parse_sdist_filename(filename)
        except (InvalidSdistFilename, InvalidVersion):
            continue
        if found != canonicalize_name(name) or at != wanted:
            continue
        url = urllib.parse.urljoin(page_url, entry.get("url") or filename)
        hashes = entry.get("hashes") if isinstance(entry.get("hashes"), dict) else {}
        sha = hashes.get("sha256") or urllib.parse.parse_qs(urllib.parse.urlsplit(url).fragment).get("sha256", [""])[0]
        return SdistFile(filename, url.split("#", 1)[0], str(sha).lower())
    return None


def _unsafe(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts


def test_members(
    members: list[tarfile.TarInfo], folder: str, packages: tuple[str, ...], where: str
) -> tuple[str, list[tarfile.TarInfo]]:
    """The test folder's name and the members to extract (see the module's docstring); `ConformanceError` (one line
    naming `where`) for a hostile archive, no test folder, a test folder that is a package, or past the bounds."""
    for member in members:
        if _unsafe(member.name):
            raise ConformanceError(f"{where}: refused: member {member.name!r} points outside the archive")
    tops = {m.name.split("/", 1)[0] for m in members if m.name.strip("/")}
    if len(tops) != 1:
        raise ConformanceError(f"{where}: not an sdist (its members lie under {len(tops)} top folders, not one)")
    top = tops.pop()
    inside = {posixpath.normpath(m.name)[len(top) + 1 :]: m for m in members if m.name.startswith(top + "/")}
    folders = {name.split("/", 1)[0] for name in inside if "/" in name}
    chosen = (folder or next((f for f in TEST_FOLDERS if f in folders), "")).strip("/")
    if not chosen or not any(n.startswith(chosen + "/") for n in inside):
        present = ", ".join(sorted(folders)[:12]) or "no folders"
        raise ConformanceError(
            f"{where} holds no test folder {(chosen or '`tests` or `test`')!s} (its folders: {present}); name it "
            f'with sdist_tests = "FOLDER" in the manifest, or take the tests from the package (tests = "pyargs")'
        )
    if chosen.split("/", 1)[0] in packages:
        raise ConformanceError(
            f"{where}: the test folder {chosen}/ is the library's package {chosen.split('/')[0]}; "
            f'its tests ship in the package: use tests = "pyargs"'
        )
    taken = [m for n, m in inside.items() if n.startswith(chosen + "/") or n == chosen or n in CONFIG_FILES]
    size = 0
    for member in taken:
        if member.issym() or member.islnk():
            raise ConformanceError(f"{where}: refused: member {member.name!r} is a link")
        if not (member.isfile() or member.isdir()):
            raise ConformanceError(f"{where}: refused: member {member.name!r} is not a plain file or folder")
        size += member.size
    if len(taken) > MAX_TEST_FILES or size > MAX_TEST_BYTES:
        raise ConformanceError(
            f"{where}: its test folder {chosen}/ is past the bound ({len(taken)} members, "
            f"{size // 2**20} MB; at most {MAX_TEST_FILES} and {MAX_TEST_BYTES // 2**20} MB)"
        )
    return chosen, taken


def extract_tests(archive: bytes, dest: Path, folder: str, packages: tuple[str, ...], where: str) -> str:
    """Extract the test folder and the top-level pytest files of the sdist `archive` into `dest` (a new folder),
    file by file; the test folder's name. Refusals as `test_members`'."""
    try:
        tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:*")
        members = _listing(tar, where)
    except (tarfile.TarError, EOFError, OSError) as exc:  # tarfile's message lists each method tried, a line each
        raise ConformanceError(f"{where}: not a readable tar archive ({' '.join(str(exc).split())})") from None
    chosen, taken = test_members(members, folder, packages, where)
    top = members[0].name.split("/", 1)[0]
    dest.mkdir(parents=True)
    for member in taken:
        relative = posixpath.normpath(member.name)[len(top) + 1 :]
        target = dest.joinpath(*relative.split("/"))
        try:
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            with open(target, "xb") as out:  # "x": a second member of the same name never overwrites the first
                out.write(source.read() if source is not None else b"")
        except (FileExistsError, NotADirectoryError):  # twice (in another case), or a file and a folder of one name
            raise ConformanceError(
                f"{where}: refused: member {member.name!r} collides with another (a file and a folder of one name)"
            ) from None
    return chosen


def _listing(tar: tarfile.TarFile, where: str) -> list[tarfile.TarInfo]:
    """The archive's members, refused in one line past `MAX_SDIST_MEMBERS` or `MAX_UNPACKED_BYTES` (each member's
    header read before its data is skipped, so the refusal comes before the bytes are decompressed)."""
    members, unpacked = [], 0
    for member in tar:
        members.append(member)
        unpacked += member.size
        if len(members) > MAX_SDIST_MEMBERS or unpacked > MAX_UNPACKED_BYTES:
            raise ConformanceError(
                f"{where}: refused: past the bound of an sdist (at most {MAX_SDIST_MEMBERS} members and "
                f"{MAX_UNPACKED_BYTES // 2**30} GB unpacked)"
            )
    return members


def sdist_tests(name: str, version: str, folder: str, packages: tuple[str, ...], builder: Any) -> Path:
    """The folder holding the extracted tests of `name==version`'s sdist (see the module's docstring); one process at
    a time fetches and extracts it."""
    cache = builder.root / "downstream" / "sdists"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache / f".{canonicalize_name(name)}-{version}.lock")):
        return _sdist_tests(cache, name, version, folder, packages, builder)


def _sdist_tests(cache: Path, name: str, version: str, folder: str, packages: tuple[str, ...], builder: Any) -> Path:
    pointer = cache / f"{canonicalize_name(name)}-{version}.json"
    try:
        known = json.loads(pointer.read_text(encoding="utf-8"))
        extracted = cache / f"{known['sha256']}-tests"
        if known.get("folder") == folder and extracted.is_dir():
            return extracted
    except (OSError, ValueError, KeyError, TypeError):
        pass
    cache.mkdir(parents=True, exist_ok=True)
    sdist, tried = None, []
    for base in builder.options.indexes():
        url = f"{base.rstrip('/')}/{canonicalize_name(name)}/"
        try:
            sdist = pick_sdist(fetch_page(url), url, name, version)
        except (OSError, ValueError) as exc:
            tried.append(scrub_credentials(str(exc), *builder.options.urls())[:200])
            continue
        if sdist is not None:
            break
    if sdist is None:
        why = f" ({tried[0]})" if tried else ""
        raise ConformanceError(
            f"{name}=={version} has no source distribution (.tar.gz) on the package index{why}; "
            f'take its tests from the package (tests = "pyargs") or name a folder'
        )
    where = f"{name}=={version}'s sdist {sdist.filename}"
    try:
        data = fetch_file(sdist.url, MAX_SDIST_BYTES)
    except OSError as exc:
        raise ConformanceError(
            f"{where}: cannot be downloaded ({scrub_credentials(str(exc), *builder.options.urls())[:200]})"
        ) from None
    sha = hashlib.sha256(data).hexdigest()
    if sdist.sha256 and sha != sdist.sha256:
        raise ConformanceError(f"{where}: its sha256 {sha} is not the index's {sdist.sha256}; not used")
    kept = cache / f"{sha}.tar.gz"
    if not kept.is_file():
        kept.write_bytes(data)
    extracted = cache / f"{sha}-tests"
    staging = cache / f".{sha}-tests.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        extract_tests(data, staging, folder, packages, where)
        shutil.rmtree(extracted, ignore_errors=True)
        os.replace(staging, extracted)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    write_text_atomically(pointer, json.dumps({"sha256": sha, "filename": sdist.filename, "folder": folder}))
    return extracted
