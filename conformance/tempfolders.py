"""Temporary folders a process owns, named after it, and those left behind by a process that is gone.

A folder in the temporary folder is named `<prefix><pid>-<random>` (`jaxconf-run-4242-k3j9x`): the pid of the
process that made it and removes it when it is done. A process killed with SIGKILL removes nothing, so each command
that makes such folders first removes those of the suite whose process no longer exists
(`remove_orphaned_folders`): `kill -9` of a run's pytest leaves a `jaxconf-run-*` folder until the next run starts,
never for good. Only folders of this user, named with one of `PREFIXES`, are touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from conformance.portable import pid_alive

PREFIXES = ("jaxconf-run-", "jaxconf-chapter-", "jaxconf-blocks-", "jaxconf-perf-")
_OWNED = re.compile(r"^(?P<prefix>[a-z-]+-)(?P<pid>\d+)-[^/]+$")


@contextlib.contextmanager
def owned_temporary_folder(prefix: str, parent: str | os.PathLike | None = None) -> Iterator[Path]:
    """A new folder `<prefix><pid>-<random>` in `parent` (default the temporary folder), removed at the end, even
    when something in it removed it first or changed it."""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def remove_orphaned_folders(
    parent: str | os.PathLike | None = None, prefixes: tuple[str, ...] = PREFIXES
) -> list[Path]:
    """Remove the suite's folders in `parent` (default the temporary folder) whose process is gone (see the
    module's docstring); the folders removed."""
    root = Path(parent or tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        named = _OWNED.match(entry.name)
        if not named or named["prefix"] not in prefixes:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or (uid is not None and entry.stat().st_uid != uid):
                continue
        except OSError:
            continue
        pid = int(named["pid"])
        if pid != os.getpid() and not pid_alive(pid):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed
