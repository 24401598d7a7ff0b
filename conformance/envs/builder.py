"""One virtual environment per JAX version, built with uv and cached between runs.

An environment holds jax, jaxlib and numpy (and what they need), never this
project: the child reaches our source through PYTHONPATH. A pinned requirement
set `matrix/pins/jax-<version>.txt` is used when present, so that runs are
repeatable; otherwise `jax==<version>` with `jaxlib==<version>` where one exists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conformance.errors import ConformanceError
from conformance.envs.index import PackageIndex
from conformance.envs.interpreters import Interpreter, choose_interpreter, discover_interpreters
from conformance.envs.matrix import MATRIX_DIR

MARKER = "jax-conformance-env.json"
ENV_LAYOUT = 1


def cache_root() -> Path:
    """Where environments and index answers are kept: JAX_CONFORMANCE_CACHE, else the user cache folder."""
    if os.environ.get("JAX_CONFORMANCE_CACHE"):
        return Path(os.environ["JAX_CONFORMANCE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jax-conformance"


def uv_binary() -> str:
    """The uv executable: the one the `uv` package ships, else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if not found:
            raise ConformanceError("uv is not installed; run `pip install uv` (it builds the JAX environments)")
        return found


def requirements_for(version: str, jaxlib_known: bool, pins_dir: Path = MATRIX_DIR / "pins") -> list[str]:
    """The requirement lines for the environment of jax `version`."""
    pinned = pins_dir / f"jax-{version}.txt"
    if pinned.exists():
        return [line.strip() for line in pinned.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    return [f"jax=={version}"] + ([f"jaxlib=={version}"] if jaxlib_known else [])


@dataclass(frozen=True)
class JaxEnvironment:
    """A ready environment for one JAX version."""

    version: str
    path: Path
    interpreter: Interpreter
    built_now: bool
    seconds: float

    @property
    def python(self) -> str:
        """The environment's interpreter."""
        return str(self.path / "bin" / "python")


class EnvironmentBuilder:
    """Builds (or reuses) the environment of each JAX version."""

    def __init__(self, root: Path | None = None, index: PackageIndex | None = None,
                 run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
                 interpreters: list[Interpreter] | None = None) -> None:
        self.root = root or cache_root()
        self.index = index or PackageIndex(self.root)
        self.run = run
        self._interpreters = interpreters

    @property
    def interpreters(self) -> list[Interpreter]:
        """The installed interpreters, found once."""
        if self._interpreters is None:
            self._interpreters = discover_interpreters()
        return self._interpreters

    def interpreter_for(self, version: str) -> Interpreter:
        """The installed interpreter chosen for jax `version`."""
        release = self.index.jax_release(version)
        wheel_tags = {t for t in self.index.jaxlib_pythons(version) if t.startswith("cp")}
        return choose_interpreter(self.interpreters, release.requires_python, frozenset(wheel_tags),
                                  f"jax {version}")

    def prepare(self, version: str) -> JaxEnvironment:
        """A ready environment for jax `version`, built now or reused from the cache."""
        started = time.monotonic()
        interpreter = self.interpreter_for(version)
        requirements = requirements_for(version, bool(self.index.jaxlib_pythons(version)))
        minor = ".".join(interpreter.version.split(".")[:2])
        path = self.root / "envs" / f"jax-{version}-py{minor}"
        wanted = {"layout": ENV_LAYOUT, "jax": version, "python": interpreter.version,
                  "requirements": requirements}
        marker = path / MARKER
        if marker.exists() and json.loads(marker.read_text(encoding="utf-8")) == wanted:
            return JaxEnvironment(version, path, interpreter, False, time.monotonic() - started)
        self._build(path, interpreter, requirements, version)
        marker.write_text(json.dumps(wanted, indent=1), encoding="utf-8")
        return JaxEnvironment(version, path, interpreter, True, time.monotonic() - started)

    def _build(self, path: Path, interpreter: Interpreter, requirements: list[str], version: str) -> None:
        staging = path.with_name(f"{path.name}.building-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        uv = uv_binary()
        steps = [
            [uv, "venv", "--quiet", "--python", interpreter.path, str(staging)],
            [uv, "pip", "install", "--quiet", "--python", str(staging / "bin" / "python"), *requirements],
        ]
        for step in steps:
            done = self.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                shutil.rmtree(staging, ignore_errors=True)
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                raise ConformanceError(f"could not build the environment for jax {version} "
                                       f"with Python {interpreter.version}: {last}")
        shutil.rmtree(path, ignore_errors=True)
        os.replace(staging, path)
