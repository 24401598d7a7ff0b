"""An interpreter the suite did not build (`run --python PATH`): a container's Python, a conda env, a CI image.

Nothing is built or installed. `existing_environment(path)` asks the interpreter to describe itself (the
suite's `conformance.child.envinfo`, run there with the suite's source on PYTHONPATH) and refuses in one line a
path that is not an interpreter, one without jax, and one whose jax does not import. The JAX version is the
installed distribution's (`importlib.metadata`), so a re-tagged build reads `0.12.0.1+corp.3`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance.errors import ConformanceError, one_line
from conformance.envs.interpreters import Interpreter
from conformance.results.schema import PLATFORM_NAME
from conformance.childenv import child_environment
from conformance.portable import run_bounded

SOURCE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding the `conformance` package
DESCRIBE_TIMEOUT_S = 90  # importing jax takes seconds; a hanging interpreter must not cost minutes
MAX_DESCRIPTION_BYTES = 4 * 1024 * 1024


def describe_interpreter(python: str) -> dict[str, Any]:
    """What `python` says about itself and its jax (see `conformance.child.envinfo`); `ConformanceError` when it
    cannot be run or says nothing."""
    if not os.path.isfile(python):
        raise ConformanceError(f"--python {python}: no such file")
    if not os.access(python, os.X_OK):
        raise ConformanceError(f"--python {python}: not an executable interpreter")
    environ = child_environment(os.environ, {}, source_root=SOURCE_ROOT)  # no JAX settings, no credentials
    with tempfile.TemporaryDirectory(prefix="jaxconf-python-") as workdir:
        out = Path(workdir) / "env.json"
        try:  # bounded: an interpreter that prints without end, or hangs, costs a tail and DESCRIBE_TIMEOUT_S
            done = run_bounded(
                [python, "-m", "conformance.child.envinfo", "--out", str(out)],
                env=environ,
                timeout=DESCRIBE_TIMEOUT_S,
                limit=8192,
                cwd=workdir,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise ConformanceError(f"--python {python}: not a Python interpreter that runs ({exc})") from None
        if done.timed_out:
            raise ConformanceError(
                f"--python {python}: did not answer within {DESCRIBE_TIMEOUT_S}s (it and what it "
                f"started were stopped); is it a Python interpreter that imports jax?"
            )
        if done.returncode != 0 or not out.is_file():
            last = (done.output.strip().splitlines() or ["no output"])[-1]
            raise ConformanceError(
                f"--python {python}: not a Python interpreter the suite can use ({one_line(last)[:200]})"
            )
        try:
            if out.stat().st_size > MAX_DESCRIPTION_BYTES:
                raise ValueError(f"{out.stat().st_size} bytes, more than {MAX_DESCRIPTION_BYTES}")
            described = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise ConformanceError(
                f"--python {python}: its description is unreadable ({one_line(str(exc))[:200]})"
            ) from None
    if not isinstance(described, dict):
        raise ConformanceError(
            f"--python {python}: its description is JSON but not an object "
            f"({type(described).__name__}); is it an interpreter running the suite's envinfo?"
        )
    return described


def check_described(python: str, described: dict[str, Any]) -> str:
    """The JAX version of a described interpreter; `ConformanceError` when it has no jax or jax does not import, or
    names a platform that is not a platform name (it becomes part of a result file's name)."""
    if described.get("jax"):
        try:  # as PEP 440 normalizes it, the form result files and the plugin use (`+corp_3` is `+corp.3`)
            version = str(Version(str(described["jax"])))
        except InvalidVersion:
            raise ConformanceError(
                f"--python {python}: its jax says version {described['jax']!r}, which is not a PEP 440 version"
            ) from None
        platform = described.get("platform")
        if not isinstance(platform, str) or not PLATFORM_NAME.fullmatch(platform):
            raise ConformanceError(
                f"--python {python}: its description names the platform {str(platform)[:80]!r}, "
                f"not a platform name such as linux-x86_64"
            )
        said = described.get("python")  # printed in the run's heading: never a terminal's escape sequence
        if not isinstance(said, str) or not re.fullmatch(r"\d+\.\d+(\.\d+)?[a-z0-9+.]*", said):
            raise ConformanceError(
                f"--python {python}: its description names the Python version "
                f"{str(said)[:80]!r}, not a version such as 3.13.0"
            )
        return version
    installed = described.get("jax_installed") or (described.get("packages") or {}).get("jax")
    if installed:
        why = described.get("jax_error") or "unknown error"
        raise ConformanceError(f"--python {python}: jax {installed} is installed but does not import ({why[:200]})")
    raise ConformanceError(
        f"--python {python}: jax is not installed in it (Python {described.get('python')}); "
        f"install jax there, or give --wheels DIR or --jax VERSION instead"
    )


def existing_interpreter(python: str) -> tuple[str, Interpreter, dict[str, Any], float]:
    """The JAX version, the interpreter, its description and the seconds it took, for `--python PATH` (the path
    made absolute, symbolic links kept: a venv's `bin/python` links to its base interpreter)."""
    started = time.monotonic()
    python = os.path.abspath(os.path.expanduser(python))
    described = describe_interpreter(python)
    version = check_described(python, described)
    return version, Interpreter(python, str(described.get("python") or "")), described, time.monotonic() - started
