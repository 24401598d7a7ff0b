"""The one reader of a TOML file the user names (the expectations file, a downstream suite's manifest): a table with
known keys, refused in one line. Standard library `tomllib` and the bounded reader (`readfile`).

- `read_toml_file`: the text of the file, read only as a regular file and up to a bound; one that cannot be read is
  `PATH: cannot read the WHAT (why)`.
- `parse_toml`: its top-level table; text that does not parse is `SOURCE: does not parse as TOML: ...`.
- `known_table`: a table holding only known keys, else `is not a table` or `unknown key `k` (known keys: ...)`, said
  through the caller's `fail(key, message)` (which adds where: the file, the line, the entry).
- `first_unknown`: the first key not among the known ones, for a caller that words that refusal its own way.

Each refusal is one `ConformanceError` line, never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from conformance.errors import ConformanceError
from conformance.readfile import read_regular_text

Fail = Callable[[Any, str], Any]  # fail(key or None, message): raises the caller's one-line error


def read_toml_file(path: str | os.PathLike, limit: int, what: str) -> str:
    """The UTF-8 text of the file at `path` (a regular file of at most `limit` bytes); else one line naming `path`
    and `what` it was read as (`the expectations file`, `the manifest`)."""
    try:
        return read_regular_text(path, limit)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"{path}: cannot read {what} ({getattr(exc, 'strerror', None) or exc})") from None


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """The top-level table of TOML `text`; one line naming `source` when it does not parse."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{source}: does not parse as TOML: {exc}") from None
    except RecursionError:  # tomllib reads nested arrays and inline tables recursively, without a bound of its own
        raise ConformanceError(f"{source}: does not parse as TOML: arrays or tables nested too deeply") from None


def first_unknown(data: dict[str, Any], keys: Iterable[str]) -> str | None:
    """The first key of `data` (in the file's order) that is not one of `keys`, or None."""
    known = set(keys)
    return next((key for key in data if key not in known), None)


def known_table(data: object, keys: tuple[str, ...], fail: Fail) -> dict[str, Any]:
    """`data` when it is a table holding only `keys`; else `fail(None, "is not a table")` or `fail(key, "unknown key
    `key` (known keys: ...)")`, naming the first unknown key."""
    if not isinstance(data, dict):
        fail(None, "is not a table")
        raise AssertionError("fail must raise")  # pragma: no cover - every caller's `fail` raises
    unknown = first_unknown(data, keys)
    if unknown is not None:
        fail(unknown, f"unknown key `{unknown}` (known keys: {', '.join(keys)})")
    return data


def failing(prefix: str) -> Callable[[Any, str], NoReturn]:
    """A `fail(key, message)` that raises `PREFIX: message` in one line (the key is not placed: no line to name)."""

    def fail(key: Any, message: str) -> NoReturn:
        raise ConformanceError(f"{prefix}: {message}")

    return fail
