"""Writing a file so that readers see the old content or the new, never half of it, even after a power loss: the
data is flushed to the disk (`fsync`) before the rename, and the rename itself after it (the folder's `fsync`, where
the system has one). The new file gets the mode any new file gets (0666 less the umask), as `open` would give it.
Standard library only."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from conformance.interrupts import interrupts_held


def _umask() -> int:
    """The process's umask: read where the system shows it (Linux's /proc), else set and put back at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable; a no-op where folders cannot be opened (Windows)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:  # some filesystems refuse a folder's fsync: the file's own fsync still held
        pass
    finally:
        os.close(descriptor)


def _write_atomically(path: str | os.PathLike, mode: str, data: str | bytes, **options: str) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`; on any failure (a full
    disk) the temporary file is removed and `path` is as it was."""
    path = Path(path)
    if os.path.exists(path) and not os.path.isfile(path):  # a FIFO, a device (`/dev/null` as root), a folder
        raise IsADirectoryError(
            errno.EISDIR if os.path.isdir(path) else errno.EINVAL,
            "not a regular file; nothing was written over it",
            str(path),
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    temp: str | None = None
    try:  # from the first instruction: Ctrl-C or SIGTERM as the file is made waits until `temp` names it
        with interrupts_held():
            handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, mode, **options) as out:
            out.write(data)
            out.flush()
            # without it, a filesystem that orders no data before a rename (ext4 without auto_da_alloc, XFS, btrfs)
            # may show an empty file after a power loss
            os.fsync(out.fileno())
        os.chmod(temp, 0o666 & ~_umask())  # mkstemp makes 0600; a file the user's tools share gets their umask
        os.replace(temp, path)
        _sync_folder(path.parent)
    except BaseException as exc:
        if temp is not None:
            Path(temp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk on write or close names no file
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    return path


def write_text_atomically(path: str | os.PathLike, text: str) -> Path:
    """Write `text` to `path` through a temporary file in the same folder and `os.replace`; return the path."""
    # backslashreplace: a lone surrogate from a probe's output stays visible instead of failing the write.
    return _write_atomically(path, "w", text, encoding="utf-8", errors="backslashreplace")


def write_bytes_atomically(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` as `write_text_atomically` writes text; return the path."""
    return _write_atomically(path, "wb", data)
