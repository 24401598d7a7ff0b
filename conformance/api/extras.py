"""What the census adds to a release's environment so that JAX's own public modules import: `absl-py` (which
`jax.export`, `jax.experimental.jax2tf` and `jax.experimental.pallas` import on releases that do not declare it),
pure Python, installed once under the cache with `uv pip install --target` from a hashed pin and put on the census
child's `PYTHONPATH` after the suite's source. Where it cannot be installed the census runs without it, and each
module that needs it is recorded as failed to import, with the reason (`unknown` to the diff and the judge).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from conformance.envs.builder import cache_root, uv_binary
from conformance.errors import ConformanceError
from conformance.portable import run_child

PINS = ("absl-py==2.5.0 --hash=sha256:0f17b89f2a4eaaedc4f28c622998aa690564b3012a396a4ffad0821007fe03ba",)
INSTALL_TIMEOUT_S = 300


def extras_digest() -> str:
    """The digest of the pins: part of the census key, so a census taken without them is taken again."""
    return hashlib.sha256("\n".join(PINS).encode()).hexdigest()[:16]


def extras_folder(python: str, root: Path | None = None) -> Path:
    """The folder the pins are installed into for the interpreter at `python` (installed now when it is not yet);
    `ConformanceError` (one line) when uv cannot install them."""
    folder = (root or cache_root()) / "census-extras" / extras_digest()
    if (folder / ".complete").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    pins = folder / "requirements.txt"
    pins.write_text("\n".join(PINS) + "\n", encoding="utf-8")
    try:
        done = run_child(
            [
                uv_binary(),
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--require-hashes",
                "--target",
                str(folder),
                "--python",
                python,
                "-r",
                str(pins),
            ],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConformanceError(f"the census extras could not be installed ({exc})") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConformanceError(f"the census extras could not be installed: {last[:300]}")
    (folder / ".complete").write_text("ok\n", encoding="utf-8")
    return folder
