"""One JSON convention for every command: `--json PATH` writes the command's JSON result to PATH (atomically), and
`--json -` writes it to standard output. While a command writes its JSON to standard output, everything else it
says (progress, summaries, notes) goes to standard error, so that standard output is exactly one JSON document
(`json.loads` reads it). `write_json` is the one writer every command's JSON goes through."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from conformance.atomic import write_text_atomically

STDOUT = "-"
# The real standard output while `human_text_to_stderr` holds sys.stdout on stderr (innermost last).
_JSON_STREAMS: list[TextIO] = []


def is_stdout(path: str | os.PathLike | None) -> bool:
    """Whether an output path names standard output (`-`)."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) == STDOUT


def write_json(path: str | os.PathLike, text: str) -> str:
    """Write the JSON `text` to `path`, or to standard output when `path` is `-`; the line a command says about it
    (`json: PATH`, or `json: stdout`)."""
    if not is_stdout(path):
        write_text_atomically(path, text)  # a file as before: byte for byte
        return f"json: {path}"
    stream = _JSON_STREAMS[-1] if _JSON_STREAMS else sys.stdout
    stream.write(text if text.endswith("\n") else text + "\n")
    stream.flush()
    return "json: stdout"


def _fileno(stream: Any) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None


@contextlib.contextmanager
def human_text_to_stderr(active: bool) -> Iterator[None]:
    """While `active` (the command was given `--json -`), what is printed to sys.stdout goes to standard error and
    `write_json("-", ...)` alone reaches standard output. Where standard output is a file descriptor, it is moved
    too, so that the children a command starts (pytest, uv, a chapter's runner) write theirs to standard error."""
    if not active:
        yield
        return
    stream = sys.stdout
    stream.flush()
    fd, err_fd = _fileno(stream), _fileno(sys.stderr)  # None for an in-memory stream (a test's capture)
    saved = os.dup(fd) if fd is not None and err_fd is not None else None
    target: TextIO = stream
    if saved is not None:
        os.dup2(err_fd, fd)  # children inherit fd 1: now standard error
        target = os.fdopen(os.dup(saved), "w", encoding="utf-8", errors="backslashreplace")
    _JSON_STREAMS.append(target)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _JSON_STREAMS.pop()
        if saved is not None:
            target.close()
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)


def json_wanted(values: dict[str, Any]) -> bool:
    """Whether a command's options (argparse's names and values) ask for its JSON on standard output."""
    return is_stdout(values.get("json"))


def json_path(text: str) -> Path:
    """The type of every `--json` option: the path it names. Only `-` itself is standard output; a file named `-`
    spelled another way (`./-`, `-/`), which `Path` would shorten to `-`, is kept a file by making it absolute."""
    path = Path(text)
    if text != STDOUT and os.fspath(path) == STDOUT:
        return path.absolute()
    return path


def json_help(what: str) -> str:
    """The help of a command's `--json PATH` option, the same words everywhere."""
    return f"write {what} as JSON to PATH; `-`: to standard output, everything else then to standard error"


# `matrix --json` without a value: the old spelling, kept for one release with its old output and a note
# (`engine.matrixlist`); `api scan --format json` is the other (`api.session.run_scan`).
class _Bare:
    """The value of a bare `--json` (argparse converts a string const with the option's type, never an object)."""

    def __repr__(self) -> str:
        return "--json without a value"


BARE_JSON: Any = _Bare()
BARE_NOTE = (
    "`--json` without a value is deprecated and will need PATH or `-` (standard output) in the next release; "
    "it still prints the old plain list"
)
