"""Where a command may write its outputs (reports, Markdown, JUnit): never over a result file or another output.

Checked before any work, so a wrong path costs one line on stderr, never a result file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from conformance.errors import ConformanceError
from conformance.results.load import is_result_name, result_files


def check_outputs(outputs: Sequence[tuple[str, Path | None]], inputs: Sequence[Path] = (),
                  results: Path | None = None) -> None:
    """Fail with one line, before any work, when an output would overwrite a result file (one of `inputs`, or any
    result file in the `results` folder) or another output of the same command, or cannot be written."""
    protected = {p.resolve() for p in result_files(list(inputs))} if inputs else set()
    if results is not None and results.is_dir():
        protected |= {p.resolve() for p in [*results.iterdir(), *results.glob("builds/*/*")]  # builds stored apart
                      if is_result_name(p.name)}
    seen: dict[Path, str] = {}
    for option, out in outputs:
        if out is None:
            continue
        where = out.resolve()
        if where in protected or (out.exists() and is_result_name(out.name)) or (
                results is not None and where.parent == results.resolve() and is_result_name(out.name)):
            raise ConformanceError(f"{option} {out} is a result file; write the output elsewhere")
        if where in seen:
            raise ConformanceError(f"{option} and {seen[where]} both name {out}; give each output its own file")
        seen[where] = option
        check_writable(out, option)


def check_writable(path: Path, option: str) -> None:
    """Fail with one line, before any work, when `path` cannot be written as a file."""
    if path.is_dir():
        raise ConformanceError(f"{option} {path} is a folder; name a file")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ConformanceError(f"{option} {path}: {folder} is not a writable folder")
