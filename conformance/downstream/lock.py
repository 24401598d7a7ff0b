"""A suite's lock and its environments: resolved once against the baseline, installed with only jax/jaxlib swapped.

- `lock_for`: the suite's requirements (the library at its version with its extras, or a folder's `requires`;
  pytest; jax[cpu] and jaxlib of the baseline) resolved once with `uv pip compile` for the baseline's Python,
  kept in the cache (`downstream/locks/`) under the digest of what was resolved. A baseline the requirements
  cannot resolve with is bad input (one line, the resolver's last words).
- `swapped` (pure): the lock with only its `jax==` and `jaxlib==` lines changed to another release.
- `prepare_suite_env`: the environment of one (suite, release), apart from the release environment the probes
  use, under `downstream/envs/` in the cache, built with copies (never hard links into uv's cache), reused while
  its marker says the same lock. The swapped lock is installed with uv (which may add what the release needs and
  the lock lacks, but changes no pin), then `uv pip check`; a release the lock cannot serve is `Uninstallable` with
  the resolver's or the checker's reason, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from conformance.atomic import write_text_atomically
from conformance.downstream.manifest import Suite
from conformance.envs.builder import uv_binary
from conformance.errors import ConformanceError
from conformance.portable import venv_python
from conformance.scrub import scrub_credentials

LOCK_LAYOUT = 1
_PIN = re.compile(r"^(jax|jaxlib)==\S+", re.M)


@dataclass(frozen=True)
class Lock:
    """A suite's resolved requirements: the text, the baseline it was resolved against and for which Python."""

    text: str
    baseline: str
    python: str

    @property
    def digest(self) -> str:
        """The sha256 of the lock's text."""
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class SuiteEnv:
    """A ready environment of one (suite, release): its folder, interpreter and the swapped lock's digest."""

    version: str
    path: Path
    python_version: str
    lock_digest: str
    built_now: bool

    @property
    def python(self) -> str:
        """The environment's interpreter."""
        return str(venv_python(self.path))

    def site_packages(self) -> Path:
        """Where its packages are installed."""
        found = list(self.path.glob("lib/python3*/site-packages")) + list(self.path.glob("Lib/site-packages"))
        return found[0] if found else self.path


@dataclass(frozen=True)
class Uninstallable:
    """The lock cannot serve this release: the resolver's or the checker's reason."""

    version: str
    reason: str
    lock_digest: str


def env_folder_name(ident: str, version: str, minor: str, digest: str) -> str:
    """The name of a (suite, release) environment's folder under `downstream/envs/` in the cache; with `*` for the
    Python minor and the digest, the pattern the report's reproduce command finds it by."""
    return f"{ident}-jax-{version}-py{minor}-{digest}"


def swapped(text: str, jax: str, jaxlib: str) -> str:
    """The lock `text` with jax pinned to `jax` and jaxlib to `jaxlib` (to `jax` when ''), nothing else changed."""
    return _PIN.sub(lambda m: f"{m.group(1)}=={jax if m.group(1) == 'jax' else (jaxlib or jax)}", text)


def lock_inputs(suite: Suite, baseline: str, jaxlib: str) -> list[str]:
    """The requirement lines resolved into a suite's lock."""
    own = [suite.requirement] if suite.requirement else []
    return [*own, f"jax[cpu]=={baseline}", f"jaxlib=={jaxlib or baseline}", "pytest", *suite.manifest.requires]


def _last_words(stderr: str, builder: Any, lines: int = 3) -> str:
    said = [line.strip() for line in stderr.strip().splitlines() if line.strip()][-lines:]
    return scrub_credentials(" | ".join(said) or "no output", *builder.options.urls())[:600]


def lock_for(suite: Suite, baseline: str, builder: Any) -> Lock:
    """The suite's lock against `baseline` (see the module's docstring)."""
    interpreter = builder.interpreter_for(baseline)
    minor = ".".join(interpreter.version.split(".")[:2])
    inputs = lock_inputs(suite, baseline, builder.jaxlib_for(baseline))
    digest = hashlib.sha256(json.dumps([LOCK_LAYOUT, inputs, minor, builder.options.digest()]).encode()).hexdigest()
    path = builder.root / "downstream" / "locks" / f"{suite.ident}-{baseline}-{digest[:12]}.txt"
    if path.is_file():
        return Lock(path.read_text(encoding="utf-8"), baseline, minor)
    path.parent.mkdir(parents=True, exist_ok=True)
    given = path.with_suffix(".in")
    given.write_text("\n".join(inputs) + "\n", encoding="utf-8")
    done = builder.run(
        [
            uv_binary(),
            "pip",
            "compile",
            "--quiet",
            "--no-header",
            "--python-version",
            minor,
            *builder.options.uv_args(),
            str(given),
            "-o",
            str(path) + ".tmp",
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise ConformanceError(
            f"the requirements of {suite.label} do not resolve with jax {baseline}: {_last_words(done.stderr, builder)}"
        )
    os.replace(str(path) + ".tmp", path)
    return Lock(path.read_text(encoding="utf-8"), baseline, minor)


def prepare_suite_env(suite: Suite, lock: Lock, version: str, builder: Any) -> SuiteEnv | Uninstallable:
    """The environment of `suite` on jax `version` from `lock` (see the module's docstring)."""
    interpreter = builder.interpreter_for(version)
    minor = ".".join(interpreter.version.split(".")[:2])
    text = swapped(lock.text, version, builder.jaxlib_for(version))
    digest = suite_env_digest(lock, version, builder)
    path = builder.root / "downstream" / "envs" / env_folder_name(suite.ident, version, minor, digest[:10])
    wanted = {"layout": LOCK_LAYOUT, "lock": digest, "python": interpreter.version}
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.parent / f".{path.name}.lock")):
        marker = path / "jax-conformance-downstream.json"
        try:
            if json.loads(marker.read_text(encoding="utf-8")) == wanted and venv_python(path).exists():
                return SuiteEnv(version, path, interpreter.version, digest, False)
        except (OSError, ValueError):
            pass
        staging = path.with_name(f"{path.name}.building-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            uv, python = uv_binary(), str(venv_python(staging))
            made = builder.run(
                [uv, "venv", "--quiet", "--python", interpreter.path, str(staging)], capture_output=True, text=True
            )
            if made.returncode != 0:
                raise ConformanceError(
                    f"could not make the environment of {suite.label} for jax {version}: "
                    f"{_last_words(made.stderr, builder)}"
                )
            requirements = staging / "lock.txt"
            requirements.write_text(text, encoding="utf-8")
            installed = builder.run(
                [
                    uv,
                    "pip",
                    "install",
                    "--quiet",
                    "--link-mode",
                    "copy",
                    "--python",
                    python,
                    *builder.options.uv_args(),
                    "-r",
                    str(requirements),
                ],
                capture_output=True,
                text=True,
            )
            if installed.returncode != 0:
                return Uninstallable(
                    version, f"the lock does not install: {_last_words(installed.stderr, builder)}", digest
                )
            checked = builder.run([uv, "pip", "check", "--python", python], capture_output=True, text=True)
            if checked.returncode != 0:
                said = _last_words((checked.stdout or "") + "\n" + (checked.stderr or ""), builder)
                return Uninstallable(version, f"uv pip check: {said}", digest)
            shutil.rmtree(path, ignore_errors=True)
            os.replace(staging, path)
            write_text_atomically(marker, json.dumps(wanted))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return SuiteEnv(version, path, interpreter.version, digest, True)


def suite_env_digest(lock: Lock, version: str, builder: Any) -> str:
    """The digest of the suite's environment on `version` (the swapped lock and the Python chosen), computed without
    building it: what the reuse key holds."""
    interpreter = builder.interpreter_for(version)
    text = swapped(lock.text, version, builder.jaxlib_for(version))
    return hashlib.sha256(f"{text}\n{interpreter.version}".encode()).hexdigest()
