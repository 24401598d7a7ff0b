"""Test support: download a released wheel and re-tag it with another version (a team's build of its own fork,
or a dev build between two releases).

`retag_wheel(wheel, "0.12.0.1+corp.3", out)` unpacks the wheel, changes `Version:` in its METADATA, renames its
`.dist-info` folder, rewrites RECORD (new paths, new hash and size of the METADATA) and repacks it under the new
file name, as a build with a local version label would be named. The module's own `__version__` is left alone,
as a re-tagged build keeps it. `jax_build(wheel, "0.10.3.dev20260102+gbbbbbbb", out, commit)` goes further, as a
real dev build is made: jax's `version.py` says that version and commit too (`jax.__version__`, `_git_hash`).
`TEST_UTIL_PATCH` is the change the tests make to jax's source: after it, `jax.test_util` is an attribute of jax
after a bare `import jax`, which flips the quick cell `setup.explicit_test_util_import`.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Iterable

# Appended to jax/__init__.py: `jax.test_util` becomes an attribute after a bare `import jax`.
TEST_UTIL_PATCH = "from jax import test_util as test_util  # patched by the test\n"


def download_wheel(project: str, version: str, folder: Path, python_version: str = "3.13") -> Path:
    """The released wheel of `project==version` for `python_version`, downloaded with pip (its cache helps)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python_version,
            f"{project}=={version}",
            "-d",
            str(folder),
        ],
        check=True,
    )
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
        if not old:  # an empty old text appends
            members[path] = (text + new).encode("utf-8")
            continue
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


def jax_build(wheel: Path, new_version: str, out_dir: Path, commit: str, patched: bool = False) -> Path:
    """A copy of jax `wheel` made as the build `new_version` of commit `commit` (40 hex digits): re-tagged as
    `retag_wheel` does, with `_release_version` and `_git_hash` of `jax/version.py` rewritten (what
    `jax.__version__` and the run header's `jax_git_hash` read); `patched` appends `TEST_UTIL_PATCH` to jax."""
    old_version = wheel.name.split("-", 2)[1]
    with zipfile.ZipFile(wheel) as source:
        text = source.read("jax/version.py").decode("utf-8")
    old_hash = next(line for line in text.splitlines() if line.startswith("_git_hash"))
    edits = [
        (
            "jax/version.py",
            f"\n_release_version: str = '{old_version}'\n",
            f"\n_release_version: str = '{new_version}'\n",
        ),
        ("jax/version.py", f"\n{old_hash}\n", f"\n_git_hash: str = '{commit}'\n"),
    ]
    return retag_wheel(
        wheel, new_version, out_dir, edits + ([("jax/__init__.py", "", TEST_UTIL_PATCH)] if patched else [])
    )
