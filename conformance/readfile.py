"""Reading a file the user names (an expectations file, a matrix, a result file, a history, a pin file): only a
regular file, only up to a bound. Standard library only.

`open()` on a FIFO waits for a writer without end, and a device or `/dev/zero` never ends: so the file is opened
without blocking, checked to be a regular file on the descriptor itself (no race between a check and the open), and
read up to `limit` bytes. Each refusal is an `OSError` subclass whose text is one line for the caller's message.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a folder: nothing the tool reads. `kind` says which (`a folder`)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class TooLarge(OSError):
    """The file is larger than any file of its kind the tool writes or reads."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_regular_bytes(path: str | os.PathLike, limit: int = 64 * 1024 * 1024) -> bytes:
    """The bytes of the regular file at `path` (links followed); `NotRegularFile` for anything else, `TooLarge` past
    `limit`, `FileNotFoundError` and the other `OSError`s as the system gives them."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(os.fspath(path), flags)
    except IsADirectoryError:
        raise NotRegularFile(f"{path} is a folder, not a regular file", "a folder") from None
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path} is {_kind(mode)}, not a regular file", _kind(mode))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(handle, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise TooLarge(f"{path} is larger than {limit // 2**20 or limit} {'MB' if limit >= 2**20 else 'bytes'}")
        return b"".join(chunks)
    finally:
        os.close(handle)


def read_regular_text(path: str | os.PathLike, limit: int = 64 * 1024 * 1024) -> str:
    """The UTF-8 text of the regular file at `path`; see `read_regular_bytes` (and `UnicodeDecodeError`)."""
    return read_regular_bytes(path, limit).decode("utf-8")


def special_kind(path: str | os.PathLike) -> str:
    """What `path` is when it exists (links followed) and is not a regular file: `a FIFO (named pipe)`, `a device`,
    `a socket`, `a folder`; '' when it is a regular file or does not exist. A command never reads, writes over, or
    sets aside such a path (as root, `/dev/null` or `/dev/stdout` would be replaced by a file)."""
    try:
        mode = os.stat(os.fspath(path)).st_mode
    except (OSError, ValueError):
        return ""
    return "" if stat.S_ISREG(mode) else _kind(mode)


def is_regular_file(path: Path) -> bool:
    """Whether `path` is a regular file (links followed), without opening it."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False
