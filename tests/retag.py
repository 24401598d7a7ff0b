"""Test support: download a released wheel and re-tag it with another version (a team's build of its own fork).

`retag_wheel(wheel, "0.12.0.1+corp.3", out)` unpacks the wheel, changes `Version:` in its METADATA, renames its
`.dist-info` folder, rewrites RECORD (new paths, new hash and size of the METADATA) and repacks it under the new
file name, as a build with a local version label would be named. The module's own `__version__` is left alone,
as a re-tagged build keeps it.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Iterable


def download_wheel(project: str, version: str, folder: Path, python_version: str = "3.13") -> Path:
    """The released wheel of `project==version` for `python_version`, downloaded with pip (its cache helps)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--python-version", python_version, f"{project}=={version}", "-d", str(folder)], check=True)
    (found,) = folder.glob(f"{project}-{version}-*.whl")
    return found


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def retag_wheel(wheel: Path, new_version: str, out_dir: Path, edits: Iterable[tuple[str, str, str]] = ()) -> Path:
    """A copy of `wheel` whose distribution version is `new_version`, written into `out_dir`; `edits` are
    (path in the wheel, old text, new text) changes to its files, as a fork's own patches."""
    project, old_version, rest = wheel.name.split("-", 2)
    old_info, new_info = f"{project}-{old_version}.dist-info/", f"{project}-{new_version}.dist-info/"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{project}-{new_version}-{rest}"
    with zipfile.ZipFile(wheel) as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    for path, old, new in edits:
        text = members[path].decode("utf-8")
        assert text.count(old) == 1, f"{path}: the text to replace is not there exactly once"
        members[path] = text.replace(old, new).encode("utf-8")
    renamed: dict[str, bytes] = {}
    for name, data in members.items():
        if name == old_info + "METADATA":
            text = data.decode("utf-8").replace(f"\nVersion: {old_version}\n", f"\nVersion: {new_version}\n", 1)
            assert f"Version: {new_version}" in text
            data = text.encode("utf-8")
        renamed[name.replace(old_info, new_info, 1) if name.startswith(old_info) else name] = data
    record_name = new_info + "RECORD"
    lines = []
    for line in renamed[record_name].decode("utf-8").splitlines():
        path = line.rsplit(",", 2)[0]
        path = path.replace(old_info, new_info, 1) if path.startswith(old_info) else path
        if path == record_name:
            lines.append(f"{path},,")
        else:
            lines.append(f"{path},{_record_hash(renamed[path])},{len(renamed[path])}")
    renamed[record_name] = ("\n".join(lines) + "\n").encode("utf-8")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as packed:
        for name, data in renamed.items():  # a fixed date: the same re-tag gives the same bytes (and sha256)
            packed.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return target
