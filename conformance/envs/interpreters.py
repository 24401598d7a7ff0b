"""Finding the Python interpreters installed on this machine, and choosing one for a JAX release.

Looks in JAX_CONFORMANCE_PYTHONS (first), the current interpreter, the interpreters `uv python list` finds (uv's own
and those on PATH, on every OS), PATH, and pyenv's versions (which uv does not see; pyenv-win's too). The choice
itself (`choose_interpreter`) is pure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from conformance.childenv import without_credentials
from conformance.envs.uvbin import uv_binary
from conformance.errors import ConformanceError
from conformance.portable import run_child

_VERSION_QUERY = "import json, sys, platform; print(json.dumps([platform.python_version(), sys.implementation.name]))"


@dataclass(frozen=True)
class Interpreter:
    """An installed CPython interpreter."""

    path: str
    version: str

    @property
    def tag(self) -> str:
        """Its wheel tag, e.g. `cp312`."""
        major, minor = Version(self.version).release[:2]
        return f"cp{major}{minor}"


def uv_pythons(env: dict[str, str] | None = None) -> list[str]:
    """The CPython interpreters `uv python list --only-installed` finds (uv's managed ones and those on PATH, on
    Linux, macOS and Windows alike); none where uv is missing or fails."""
    try:
        done = run_child(
            [uv_binary(), "python", "list", "--only-installed", "--output-format", "json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=without_credentials(dict(os.environ if env is None else env)),
        )
        listed = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.SubprocessError, ConformanceError):
        return []
    if not isinstance(listed, list):
        return []
    return [
        entry["path"]
        for entry in listed
        if isinstance(entry, dict) and entry.get("implementation") == "cpython" and isinstance(entry.get("path"), str)
    ]


def pyenv_pythons(pyenv_root: Path) -> list[str]:
    """pyenv's versions (`versions/*/bin/python3`; pyenv-win's `versions/*/python.exe`)."""
    return sorted(
        str(p) for pattern in ("versions/*/bin/python3", "versions/*/python.exe") for p in pyenv_root.glob(pattern)
    )


def candidate_paths(
    env: dict[str, str] | None = None, listed: Callable[[dict[str, str]], list[str]] = uv_pythons
) -> list[str]:
    """Paths that may be interpreters, most explicit first (JAX_CONFORMANCE_PYTHONS), then `sys.executable`, what
    `listed` (uv) finds, PATH's `python3.X` and pyenv's; not yet checked."""
    env = dict(os.environ if env is None else env)
    found = [p for p in env.get("JAX_CONFORMANCE_PYTHONS", "").split(os.pathsep) if p]
    found.append(sys.executable)
    found += listed(env)
    for minor in range(20, 7, -1):
        path = shutil.which(f"python3.{minor}", path=env.get("PATH"))
        if path:
            found.append(path)
    found += pyenv_pythons(Path(env.get("PYENV_ROOT") or Path.home() / ".pyenv"))
    return found


def probe_interpreter(path: str) -> Interpreter | None:
    """Ask `path` for its version; None when it is not a working CPython."""
    try:
        done = run_child(
            [path, "-c", _VERSION_QUERY],
            capture_output=True,
            text=True,
            timeout=30,
            env=without_credentials(os.environ),
        )
        version, implementation = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return Interpreter(path, version) if implementation == "cpython" else None


def discover_interpreters(paths: Iterable[str] | None = None) -> list[Interpreter]:
    """Working interpreters, one per real path, in the order found."""
    seen: set[str] = set()
    found = []
    for path in candidate_paths() if paths is None else paths:
        real = os.path.realpath(path)
        if real in seen or not os.path.exists(real):
            continue
        seen.add(real)
        interpreter = probe_interpreter(path)
        if interpreter:
            found.append(interpreter)
    return found


def choose_interpreter(
    interpreters: list[Interpreter],
    requires_python: str | None,
    wheel_tags: frozenset[str],
    what: str,
) -> Interpreter:
    """The newest interpreter that `requires_python` accepts and, where known, that has a jaxlib wheel.

    Raises a one-line `ConformanceError` naming what was found when none fits.
    """
    try:
        spec = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        spec = SpecifierSet()
    fitting = [i for i in interpreters if Version(i.version) in spec]
    if wheel_tags:
        fitting = [i for i in fitting if i.tag in wheel_tags]
    if not fitting:
        seen = ", ".join(f"{i.version} ({i.path})" for i in interpreters) or "none"
        wheels = f" and a jaxlib wheel ({', '.join(sorted(wheel_tags))})" if wheel_tags else ""
        raise ConformanceError(
            f"no installed Python fits {what}, which needs Python {requires_python or 'any'}{wheels}; "
            f"found: {seen}. Install a fitting Python, or list its path in JAX_CONFORMANCE_PYTHONS"
        )
    return max(fitting, key=lambda i: Version(i.version))
