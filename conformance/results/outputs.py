"""Where a command may write its outputs (reports, Markdown, JUnit, a folder of wptreports): never over a result
file or another output, and never into a folder of result files.

Checked before any work, so a wrong path costs one line on stderr, never a result file. The files a command reads
are all named to the check, those given on the command line and those it finds by itself (a chapter's skip list
and map file beside it or in `chapters/`: `chapter.read.chapter_inputs`; the case folders and the matrix file:
`inputs_read`), and so are the folders it will make (the results folder, even when it does not exist yet:
`bisect --json r2 --results r2` is refused before the search). `--json -` (standard output, `jsonout`) is no file
and passes; as a folder of outputs it is refused. An output equal to a file the command reads, or
inside a folder it reads (a `--cases` folder: its modules are imported, and any file there changes the folder's
digest and so every stored cell's reuse key), is refused; so is a folder of outputs that holds something it reads.

A command that writes into the results folder (`run`, `perf`, `gate --from/--to`) passes `writing=True`: the folder
is checked writable (`check_results_writable`: a file made, written and removed there), so a read-only or full disk
is one line before anything is built or sampled, not an error after a perf round.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

from conformance.envs.matrix import DEFAULT_MATRIX, matrix_path
from conformance.errors import ConformanceError
from conformance.jsonout import is_stdout
from conformance.readfile import special_kind
from conformance.results.load import is_result_name, result_files


def real(path: Path | str) -> Path:
    """`path` with its links followed, as far as they go (a link loop is left as it is, never an exception)."""
    return Path(os.path.realpath(path))


def inputs_read(cases: Sequence[Path | str] = (), matrix: str | None = None) -> list[Path]:
    """What a command reads that the output check must know: each `--cases` folder, and the matrix file `matrix`
    names (by name or path; None: the default matrix's file, which a run that names no versions reads)."""
    return [Path(folder) for folder in cases] + [matrix_path(matrix or DEFAULT_MATRIX)]


def check_outputs(
    outputs: Sequence[tuple[str, Path | None]],
    inputs: Sequence[Path] = (),
    results: Path | None = None,
    folders: Sequence[tuple[str, Path | None]] = (),
    reads: Sequence[Path | str | None] = (),
    writing: bool = False,
) -> None:
    """Fail with one line, before any work, when an output would overwrite a result file (one of `inputs`, or any
    result file in the `results` folder), a census of `results/api/`, a file the command reads or lies inside a
    folder it reads (`reads`: an expectations file, a chapter, an interpreter, a case folder, a matrix file: see
    `inputs_read`), another output of the same command, or a file inside an output folder, or cannot be written.
    `folders` are outputs that are folders of files (`report --wptreport DIR`), checked by `check_output_folder`
    and refused when they hold, or lie inside, something the command reads. With `writing`, the `results` folder
    must be writable (`check_results_writable`)."""
    if writing and results is not None:
        check_results_writable(results)
    protected = {real(p) for p in result_files(list(inputs))} if inputs else set()
    read = {real(p): str(p) for p in reads if p is not None and os.path.lexists(p)}
    read_folders = {where: shown for where, shown in read.items() if where.is_dir()}
    census = real(results) / "api" if results is not None else None
    if results is not None and results.is_dir():
        protected |= {
            real(p)
            for p in [*results.iterdir(), *results.glob("builds/*/*")]  # builds stored apart
            if is_result_name(p.name)
        }
    # Folders of result files read or written: a new file named like a result file there (or in a build's folder
    # of them, `builds/*/`) would be read as one, and set aside as unreadable, by the next command.
    result_folders = {real(p) for p in [*inputs, *([results] if results is not None else [])] if Path(p).is_dir()}
    if results is not None:
        result_folders.add(real(results))
    seen: dict[Path, str] = {}
    for option, out in outputs:
        if out is None or (option == "--json" and is_stdout(out)):  # `--json -`: standard output, no file
            continue
        where = real(out)
        if where in result_folders:  # the results folder, even one this command is yet to make
            raise ConformanceError(
                f"{option} {out} is the results folder this command reads and writes; write the output elsewhere"
            )
        in_results = where.parent in result_folders or (
            where.parent.parent.name == "builds" and where.parent.parent.parent in result_folders
        )
        if where in protected or (is_result_name(out.name) and out.exists()):
            raise ConformanceError(f"{option} {out} is a result file; write the output elsewhere")
        if is_result_name(out.name) and in_results:
            raise ConformanceError(
                f"{option} {out} is named like a result file in a folder of them, so the next "
                f"command would read it as one; write the output elsewhere"
            )
        if census is not None and census in where.parents:
            raise ConformanceError(f"{option} {out} is in the census folder {census}; write the output elsewhere")
        if where in read:
            raise ConformanceError(
                f"{option} {out} is {read[where]}, which this command reads; write the output elsewhere"
            )
        _refuse_inside_read(option, out, where, read_folders)
        if where in seen:
            raise ConformanceError(f"{option} and {seen[where]} both name {out}; give each output its own file")
        seen[where] = option
        check_writable(out, option)
    for option, folder in folders:
        if is_stdout(folder):
            raise ConformanceError(
                f"{option} names a folder here (one file per item), and `-` (standard output) "
                f"takes one JSON document; give a folder"
            )
        if folder is not None:
            check_output_folder(folder, option, seen)
            _refuse_inside_read(option, folder, real(folder), read_folders)
            holds = [shown for where, shown in read.items() if where == real(folder) or real(folder) in where.parents]
            if holds:
                raise ConformanceError(
                    f"{option} {folder} holds {holds[0]}, which this command reads; write the outputs to another folder"
                )
            inside = [(o, p) for p, o in seen.items() if real(folder) in p.parents]
            if inside:
                raise ConformanceError(
                    f"{inside[0][0]} {inside[0][1]} is inside {option} {folder}, whose files "
                    f"that command writes; write it elsewhere"
                )
            seen[real(folder)] = option


def _refuse_inside_read(option: str, out: Path, where: Path, read_folders: dict[Path, str]) -> None:
    for folder, shown in read_folders.items():
        if folder in where.parents:
            raise ConformanceError(
                f"{option} {out} is inside {shown}, a folder this command reads; write the output elsewhere"
            )


def check_results_writable(results: Path) -> None:
    """Fail with one line, before any work, when the results folder cannot take a file: it is not a folder, or a
    file made there cannot be written (read-only, no space left). A folder yet to be made is checked at the nearest
    folder that exists; the probe file is removed."""
    if results.exists() and not results.is_dir():
        raise ConformanceError(f"--results {results} is not a folder; name the folder result files are kept in")
    folder = results
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    probe: str | None = None
    try:
        handle, probe = tempfile.mkstemp(prefix=".writable-", suffix=".tmp", dir=folder)
        with os.fdopen(handle, "wb") as out:
            out.write(b"\0" * 65536)  # a full disk fails here or on the flush of close, not on creating the name
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        raise ConformanceError(
            f"the results folder {results} cannot be written ({exc.strerror or exc}, writing a "
            f"test file in {folder}); free space or name another folder with --results"
        ) from None
    finally:
        if probe is not None:
            Path(probe).unlink(missing_ok=True)


def check_output_folder(folder: Path, option: str, taken: dict[Path, str]) -> None:
    """Fail with one line, before any work, when `folder` cannot be a folder of outputs: it is a file (or, missing,
    is named like one: `x.json` is the old single-file form), another output (`taken`) names it, it holds result files,
    or it cannot be made or written."""
    if folder.exists() and not folder.is_dir():
        raise ConformanceError(f"{option} {folder} is a file; name a folder (one file per run is written into it)")
    if not folder.exists() and folder.suffix.lower() in (".json", ".gz"):
        raise ConformanceError(
            f"{option} {folder} is named like a file; it takes a folder (one file per run is written into it)"
        )
    where = real(folder)
    if where in taken:
        raise ConformanceError(f"{option} and {taken[where]} both name {folder}; give each output its own path")
    if folder.is_dir() and any(is_result_name(p.name) for p in folder.iterdir()):
        raise ConformanceError(f"{option} {folder} holds result files; write the output to another folder")
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise ConformanceError(f"{option} {folder}: {existing} is not a writable folder")


def check_writable(path: Path, option: str) -> None:
    """Fail with one line, before any work, when `path` cannot be written as a file: a folder, a FIFO, a device
    (`/dev/stdout`, which as root would be replaced by a file), or a place in no writable folder."""
    if path.is_dir():
        raise ConformanceError(f"{option} {path} is a folder; name a file")
    kind = special_kind(path)
    if kind:
        raise ConformanceError(f"{option} {path} is {kind}, not a regular file; name a file to write")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ConformanceError(f"{option} {path}: {folder} is not a writable folder")
