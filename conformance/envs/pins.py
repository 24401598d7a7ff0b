"""Hashed, pinned requirement sets per JAX version (`matrix/pins/jax-<version>.txt`), made with uv.

`uv pip compile --universal --generate-hashes` resolves jax, jaxlib and rich for every
platform and Python that the release accepts, and records the hash of every file, so the
environment builder can install them with hash checking.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from conformance.atomic import write_text_atomically
from conformance.envs.builder import EXTRA_PACKAGES, PINS_DIR, uv_binary
from conformance.envs.index import PackageIndex
from conformance.errors import ConformanceError
from conformance.portable import run_child
from conformance.scrub import scrub_credentials

HEADER = (
    "# Hashed pins for jax {version}, for every platform and Python {floor}+ "
    "(made by `jax-conformance pin {version}`: uv pip compile --universal --generate-hashes).\n"
)


def python_floor(requires_python: str | None) -> str:
    """The lowest Python minor version a `Requires-Python` admits, e.g. `>=3.10` → `3.10` (3.10 when unknown)."""
    found = re.search(r">=\s*(\d+)\.(\d+)", requires_python or "")
    return f"{found[1]}.{found[2]}" if found else "3.10"


def compile_pins(
    version: str,
    index: PackageIndex,
    pins_dir: Path = PINS_DIR,
    run: Callable[..., subprocess.CompletedProcess] = run_child,
    uv_options: Sequence[str] = (),
) -> Path:
    """Resolve and write the hashed pin file of jax `version`; one-line `ConformanceError` when it cannot.
    `uv_options` are the index options (`IndexOptions.uv_args`), passed to `uv pip compile` as they are."""
    release = index.jax_release(version)
    floor = python_floor(release.requires_python)
    found = index.jaxlib_for(version)  # as the builder pairs them: a dev build with the jaxlib of its night
    jaxlib = [f"jaxlib=={found}"] if found and index.jaxlib_pythons(found) else []
    with tempfile.TemporaryDirectory(prefix="jaxconf-pin-") as workdir:
        wanted = Path(workdir) / "requirements.in"
        wanted.write_text("\n".join([f"jax=={version}", *jaxlib, *EXTRA_PACKAGES]) + "\n", encoding="utf-8")
        out = Path(workdir) / "pins.txt"
        done = run(
            [
                uv_binary(),
                "pip",
                "compile",
                "--quiet",
                "--universal",
                "--generate-hashes",
                "--no-header",
                "--no-annotate",
                "--python-version",
                floor,
                *uv_options,
                str(wanted),
                "-o",
                str(out),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not out.exists():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConformanceError(f"could not pin jax {version}: {scrub_credentials(last, *uv_options)}")
        body = out.read_text(encoding="utf-8")
    target = pins_dir / f"jax-{version}.txt"
    write_text_atomically(target, HEADER.format(version=version, floor=floor) + body)
    return target
