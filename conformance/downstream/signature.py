"""A failure's signature: what makes two failing tests one cause. Pure.

A signature is the exception's class, its message with numbers and addresses masked, and the frame the failure is
filed under: the innermost frame in a library's own code that is not test code; else, when JAX itself raised it
(the innermost frame is in jax or jaxlib), that JAX frame, so one removed JAX name reached from two test files is one
cause (measured on chex 0.1.90 with jax 0.10.0: `jax.device_put_replicated` is called from 11 tests in two test
files, and the innermost frame of all 11 is `jax/_src/deprecations.py:getattr`); else the test's own frame (the
innermost frame in a test file); else the innermost frame. Frames are named `path/of/file.py:function`, the path
relative to the place the library is installed (`chex/_src/asserts.py:assert_tree_is_on_device`), never with a line
number, so a signature survives edits elsewhere in the file. The library a frame lies in is the signature's owner:
a failure in chex's code while optax's tests run is filed under chex (root vs dependent, as crater says).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)*(?:[eE][-+]?\d+)?(?!\w)")
_SPACE = re.compile(r"\s+")
_PATH = re.compile(r"(?<![\w:/.])(?:[A-Za-z]:)?[/\\][^\s'\"(),:]*[/\\]")  # not a URL's path
MESSAGE_CHARS = 200
JAX_PACKAGES = ("jax", "jaxlib")


def masked(message: str) -> str:
    """The message's first line with addresses as `0x?`, numbers as `N` and folders of absolute paths as `.../`,
    spaces collapsed, bounded."""
    first = (message.strip().splitlines() or [""])[0]
    first = _PATH.sub(".../", first)  # where a library is installed differs between environments
    text = _NUMBER.sub("N", _ADDRESS.sub("<address>", first)).replace("<address>", "0x?")
    return _SPACE.sub(" ", text).strip()[:MESSAGE_CHARS]


def is_test_file(path: str) -> bool:
    """Whether `path` (relative, `/`-separated) is test code: `test_*.py`, `*_test.py`, `conftest.py`, or a file
    under a `tests`/`test`/`testing` folder."""
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def relative_path(path: str, roots: Sequence[str]) -> str | None:
    """`path` relative to the first of `roots` (folders such as a site-packages or a team's folder) holding it."""
    path = path.replace("\\", "/")
    for root in roots:
        root = root.replace("\\", "/").rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root) :]
    return None


@dataclass(frozen=True)
class Signature:
    """One cause: `type`, masked `message`, the `frame` it is filed under and the library (`owner`) that frame is in
    ('' when the frame is in no library named)."""

    type: str
    message: str
    frame: str
    owner: str = ""

    @property
    def text(self) -> str:
        """`AttributeError: module 'jax' has no attribute ... @ chex/_src/asserts.py:assert_...`."""
        return f"{self.type}: {self.message} @ {self.frame or '?'}"


def library_of(relative: str, libraries: Mapping[str, Sequence[str]]) -> str:
    """The library whose top-level packages hold `relative` ('' when none): `libraries` maps a library's name to its
    top-level package or folder names."""
    top = relative.split("/", 1)[0]
    for name, packages in libraries.items():
        if top in packages:
            return name
    return ""


def signature(
    exception: Mapping | None, roots: Sequence[str] | None, libraries: Mapping[str, Sequence[str]]
) -> Signature:
    """The signature of a failure from its `exception` (`type`, `message`, `frames` as [path, line, function],
    outermost first), the folders paths are relative to (None: the paths are relative already, as stored), and the
    libraries (name → top-level packages)."""
    exception = exception or {}
    frames = []
    for frame in exception.get("frames") or []:
        path, function = str(frame[0]), str(frame[2]) if len(frame) > 2 else ""
        rel = path.replace("\\", "/") if roots is None else relative_path(path, roots)
        frames.append((rel or path.replace("\\", "/").rsplit("/", 1)[-1], function, rel is not None))
    chosen, owner = "", ""
    for rel, function, known in reversed(frames):
        lib = library_of(rel, libraries) if known else ""
        if lib and not is_test_file(rel):
            chosen, owner = f"{rel}:{function}" if function else rel, lib
            break
    if not chosen and frames and frames[-1][2] and frames[-1][0].split("/", 1)[0] in JAX_PACKAGES:
        rel, function, _ = frames[-1]
        chosen = f"{rel}:{function}" if function else rel
    if not chosen:
        for rel, function, known in reversed(frames):
            if is_test_file(rel):
                chosen = f"{rel}:{function}" if function else rel
                owner = library_of(rel, libraries) if known else ""
                break
    if not chosen and frames:
        rel, function, _ = frames[-1]
        chosen = f"{rel}:{function}" if function else rel
    return Signature(str(exception.get("type") or "?"), masked(str(exception.get("message") or "")), chosen, owner)
