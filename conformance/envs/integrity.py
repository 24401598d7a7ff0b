"""Release environments the suite built keep the files they were built with.

uv hard-links installed files from its cache by default, so an in-place edit in any other environment made
from that cache (a debugging session, an editor that writes in place) would silently change the suite's
"jax 0.12.0.1" too. The suite builds with `--link-mode copy`, and before it reuses an environment it checks
the files of jax and jaxlib against their RECORD hashes: cheaply first (each file's size and mtime against
the manifest written when last checked), hashing only the files whose stat changed. A file another path still
shares (a hard link, from an environment built before copies) is replaced by a copy of its own.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from conformance.atomic import write_text_atomically
from conformance.interrupts import interrupts_held

MANIFEST = "jax-conformance-files.json"
CHECKED = ("jax", "jaxlib")


def _record_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def recorded_files(site: Path, names: tuple[str, ...] = CHECKED) -> dict[str, str]:
    """Every hashed file of the named distributions' RECORD in `site` (path relative to `site` -> `sha256=...`)."""
    found: dict[str, str] = {}
    for info in sorted(site.glob("*.dist-info")):
        project = info.name[: -len(".dist-info")].rsplit("-", 1)[0].replace("_", "-").lower()
        if project not in names or not (info / "RECORD").is_file():
            continue
        with open(info / "RECORD", encoding="utf-8", newline="") as handle:
            for row in csv.reader(handle):
                if len(row) >= 2 and row[1].startswith("sha256=") and ".." not in Path(row[0]).parts:
                    found[row[0]] = row[1]
    return found


def _stamp(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns]


def _unshare(path: Path) -> None:
    """Give `path` a copy of its own (same bytes and times), atomically: a running process keeps the old inode."""
    tmp: str | None = None
    try:  # from the first instruction: an interrupt as the copy is made waits until `tmp` names it
        with interrupts_held():
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            os.close(fd)
        shutil.copy2(path, tmp)
        os.replace(tmp, path)
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def files_problem(env: Path, site_folders: list[Path]) -> str | None:
    """Why the jax/jaxlib files of the environment `env` are not the ones its RECORD lists (a one-line reason
    naming the file), or None when they are; on None, shared files were unshared and the manifest rewritten."""
    manifest_path = env / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    checked: dict[str, list[int]] = {}
    for site in site_folders:
        for relative, expected in recorded_files(site).items():
            path = site / relative
            try:
                stat = path.stat()
            except OSError:
                return f"its {relative} is missing"
            key = str(path.relative_to(env))
            if manifest.get(key) != _stamp(stat) and _record_hash(path) != expected:
                return f"its {relative} was changed in place (it no longer matches its RECORD hash)"
            if stat.st_nlink > 1:
                _unshare(path)
                stat = path.stat()
            checked[key] = _stamp(stat)
    if checked != manifest:
        write_text_atomically(manifest_path, json.dumps(checked, indent=0, sort_keys=True))
    return None
