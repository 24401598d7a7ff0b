"""Reading a chapter file, its map file and its skip list (the chapter package's only file reads).

The form is told by the file's suffix: `.ipynb` a notebook, `.md`/`.markdown`/`.myst` Markdown or MyST, `.rst`
reStructuredText, anything else plain text exported from a notebook. Every file is read as a regular file only
(`readfile.read_regular_bytes`): a FIFO, a device or a folder is one line, never a hang. The chapter is read at run
time; nothing of it is copied into the project.

The map file and the skip list are found, in order: the path given (`--map`, `--skip`), beside the chapter as
`<stem>.map.toml` / `<stem>.skip.toml`, or in the project's `chapters/` folder under the same name.
"""

from __future__ import annotations

import os
from pathlib import Path

import conformance
from conformance.chapter.blocks import make_blocks, stated_raise
from conformance.chapter.headings import chapter_title
from conformance.chapter.mapfile import ChapterMap, apply_map, parse_map
from conformance.chapter.markdown import read_markdown
from conformance.chapter.model import Chapter
from conformance.chapter.notebook import read_notebook
from conformance.chapter.rst import read_rst
from conformance.chapter.skiplist import (
    LimitEntry,
    RunEntry,
    SkipEntry,
    parse_limits,
    parse_runs,
    parse_setup,
    parse_skip_list,
)
from conformance.chapter.textsplit import split_text
from conformance.errors import ConformanceError
from conformance.readfile import read_regular_bytes

PROJECT_CHAPTERS = Path(conformance.__file__).resolve().parent.parent / "chapters"
CHAPTER_LIMIT = 16 * 1024 * 1024
_MARKDOWN = {".md", ".markdown", ".myst", ".mystnb"}
_RST = {".rst", ".rest"}


def read_text(path: Path, what: str, limit: int = CHAPTER_LIMIT) -> str:
    """The text of a regular file (a UTF-8 byte order mark dropped, as editors on Windows write one); a one-line
    `ConformanceError` naming `what` it is for."""
    try:
        return read_regular_bytes(path, limit).decode("utf-8-sig")
    except FileNotFoundError:
        raise ConformanceError(f"{what} {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ConformanceError(f"{what} {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConformanceError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def form_of(path: Path) -> str:
    """`notebook`, `markdown`, `rst` or `text`, by the file's suffix."""
    suffix = path.suffix.lower()
    return (
        "notebook" if suffix == ".ipynb" else "markdown" if suffix in _MARKDOWN else "rst" if suffix in _RST else "text"
    )


def companion(chapter: Path, kind: str, given: Path | None = None) -> Path | None:
    """The chapter's `kind` file (`map`, `skip`): the one given, else `<stem>.<kind>.toml` beside the chapter, else
    the project's `chapters/<stem>.<kind>.toml`; None when there is none."""
    if given is not None:
        return given
    name = f"{chapter.stem}.{kind}.toml"
    for candidate in (chapter.parent / name, PROJECT_CHAPTERS / name):
        if os.path.lexists(candidate):
            return candidate
    return None


def chapter_inputs(path: Path, skip: Path | None = None, chapter_map: Path | None = None) -> list[Path]:
    """Every file `chapter` reads for the chapter at `path`: the chapter, and its skip list and map file, given or
    found (`companion`): an output must not name any of them."""
    return [p for p in (path, companion(path, "skip", skip), companion(path, "map", chapter_map)) if p is not None]


def chapter_from_text(
    name: str, path: str, form: str, text: str, chapter_map: ChapterMap | None = None, origin: str = ""
) -> Chapter:
    """A chapter from its text (pure): split by its form's reader, corrected by `chapter_map` (plain text only)."""
    if chapter_map is not None and form != "text":
        raise ConformanceError(f"a map file corrects the split of a plain-text chapter; {path} is a {form}")
    if form == "notebook":
        raw = read_notebook(text)
    elif form == "markdown":
        raw = read_markdown(text)
    elif form == "rst":
        raw = read_rst(text)
    else:
        lines = text.splitlines()
        raw = [
            {
                "code": "\n".join(lines[p.start : p.end]),
                "line": p.start + 1,
                "end_line": p.end,
                "heading": p.heading,
                "output": "\n".join(lines[p.out_start : p.out_end]),
                "output_known": p.output_known,
                "joined": not p.output_known,
                "output_line": p.out_start + 1 if p.out_end > p.out_start else 0,
                "raises": stated_raise("\n".join(lines[p.start : p.end])),
                "skip": "",
                "shows_value": p.out_end > p.out_start,
            }
            for p in split_text(text)
        ]
        if chapter_map is not None:
            raw = apply_map(raw, chapter_map, lines)
    return Chapter(name, path, form, make_blocks(raw), origin, chapter_title(form, text))


def read_chapter(
    path: Path,
    map_path: Path | None = None,
    name: str | None = None,
    shown_path: str | None = None,
    origin: str = "",
    companions: bool = True,
) -> Chapter:
    """The chapter at `path`, split into blocks, with its map file's corrections (see the module's docstring).
    `name` (default: the file's stem), `shown_path` (default: `path`) and `origin` are a listed page's (`pages`);
    `companions` False looks for no map file beside it or in chapters/."""
    text = read_text(path, "chapter")
    form = form_of(path)
    wanted = form == "text" or map_path is not None
    found = (companion(path, "map", map_path) if companions else map_path) if wanted else None
    chapter_map = parse_map(read_text(found, "map file", 1024 * 1024), str(found)) if found else None
    chapter = chapter_from_text(name or path.stem, shown_path or str(path), form, text, chapter_map, origin)
    if not chapter.blocks:
        raise ConformanceError(f"found no Python code in {path} (read as {form})")
    return chapter


def read_skip_list(
    chapter: Path, given: Path | None = None
) -> tuple[Path | None, tuple[SkipEntry, ...], tuple[LimitEntry, ...]]:
    """The chapter's skip list (see the module's docstring), its `[[skip]]` and its `[[limit]]` entries; no file, no
    entries."""
    found = companion(chapter, "skip", given)
    if found is None:
        return None, (), ()
    text = read_text(found, "skip list", 1024 * 1024)
    return found, parse_skip_list(text, str(found)), parse_limits(text, str(found))


def read_runs(found: Path | None) -> tuple[RunEntry, ...]:
    """The `[[run]]` entries of the skip list `read_skip_list` found (none without one): listings to run."""
    if found is None:
        return ()
    return parse_runs(read_text(found, "skip list", 1024 * 1024), str(found))


def read_setup(found: Path | None) -> tuple[str, str]:
    """The `[setup]` of the skip list `read_skip_list` found, its code and reason (('', '') without one)."""
    if found is None:
        return "", ""
    return parse_setup(read_text(found, "skip list", 1024 * 1024), str(found))
