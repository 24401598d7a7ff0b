"""A list of documentation pages run as chapters from a local checkout: `chapter --pages LIST --docs CHECKOUT`.

The list (TOML, in the project: `chapters/jax-docs.toml`) names each page by its path in the repository and the
commit it is taken at, never by its text: the pages are read from the checkout when the command runs.

```toml
repository = "jax-ml/jax"

[[page]]
path = "docs/debugging.md"
commit = "8c0c43c02728dfadec12b5aede467fde9bdb6239"  # the commit the page is taken at
blob = "9aa646f1ecb3bfda444e5a6820c675dda75b01e8"    # git rev-parse COMMIT:PATH, the page's content there
name = "docs/debugging"                              # optional: the chapter's name (default: the path, no suffix)
skip = "jax-docs/debugging.skip.toml"                # optional: its skip list, relative to the list file
```

Before any work every page is found in the checkout and its content checked against `blob` (git's blob id, the
sha1 of `blob <size>\\0` and the bytes, computed here: any checkout or export of a commit where the page has that
content will do, git or none): a page missing or with other content is one line naming the commit to check out.
When the list is read, two pages whose names give one chapter id (`docs/a-b/index` and `docs/a_b/index`: their cells
and JSON would overwrite each other's) are refused, and so is a skip path that leaves the list's folder (absolute,
or with `..`), like a page's path; each skip list is read and checked then too, not when its page runs.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from conformance.chapter.cells import chapter_ident
from conformance.chapter.read import read_text
from conformance.chapter.skiplist import parse_limits, parse_runs, parse_setup, parse_skip_list
from conformance.errors import ConformanceError
from conformance.readfile import read_regular_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_HEX40 = re.compile(r"[0-9a-f]{40}")
PAGE_LIMIT = 16 * 1024 * 1024


@dataclass(frozen=True)
class Page:
    """One page of the list: its path in the repository, the commit and blob it is taken at, the chapter's name
    and its skip list (None: none)."""

    path: str
    commit: str
    blob: str
    name: str
    skip: Path | None = None

    def origin(self, repository: str) -> str:
        """`jax-ml/jax@8c0c43c02728:docs/debugging.md`: where the page comes from."""
        return f"{repository}@{self.commit[:12]}:{self.path}"


@dataclass(frozen=True)
class PageList:
    """A list file read: the repository its pages come from, and the pages in order."""

    repository: str
    pages: tuple[Page, ...]


def git_blob_id(data: bytes) -> str:
    """git's id of a file's content (`git hash-object`): the sha1 of `blob <size>\\0` and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def parse_pages(text: str, source: str, folder: Path) -> PageList:
    """The list in `text` (`source` names it in errors; skip lists are relative to `folder`); a one-line
    `ConformanceError` naming a bad entry."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{source} is not valid TOML: {exc}") from None
    unknown = set(data) - {"repository", "page"}
    if unknown:
        raise ConformanceError(
            f"{source}: unknown key(s) {', '.join(sorted(unknown))}; it takes repository and [[page]] entries"
        )
    repository = data.get("repository")
    if not isinstance(repository, str) or not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        raise ConformanceError(f'{source}: repository should be owner/name (repository = "jax-ml/jax")')
    entries = data.get("page")
    if not isinstance(entries, list) or not entries:
        raise ConformanceError(f"{source} names no page: add [[page]] entries (path, commit, blob)")
    pages: list[Page] = []
    names: dict[str, tuple[int, str]] = {}  # chapter id -> the first page that gives it
    for number, entry in enumerate(entries, 1):
        page = _page(entry, f"{source}: [[page]] {number}", folder)
        ident = chapter_ident(page.name)
        if ident in names and names[ident][1] == page.name:
            raise ConformanceError(
                f"{source}: [[page]] {number} and [[page]] {names[ident][0]} are both named "
                f'{page.name!r}; give one a name = "..." of its own'
            )
        if ident in names:
            first = names[ident]
            raise ConformanceError(
                f"{source}: [[page]] {number} ({page.name!r}) and [[page]] {first[0]} "
                f"({first[1]!r}) give one chapter id {ident!r}, so one page's cells and JSON "
                f'would replace the other\'s; give one a name = "..." of its own'
            )
        names[ident] = (number, page.name)
        pages.append(page)
    return PageList(repository, tuple(pages))


def _confined(path: str) -> bool:
    """Whether `path` stays inside the folder it is relative to: not absolute (`/x`, `C:/x`, `\\\\server`), no `..`."""
    return not (
        Path(path).is_absolute()
        or path.startswith(("/", "\\"))
        or Path(path).drive
        or ".." in Path(path.replace("\\", "/")).parts
    )


def _page(entry: object, where: str, folder: Path) -> Page:
    if not isinstance(entry, dict):
        raise ConformanceError(f"{where} is not a table")
    extra = set(entry) - {"path", "commit", "blob", "name", "skip"}
    if extra:
        raise ConformanceError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
    path = entry.get("path")
    if not isinstance(path, str) or not path.strip() or not _confined(path):
        raise ConformanceError(f"{where}: path should be the page's path in the repository (docs/debugging.md)")
    for key in ("commit", "blob"):
        if not isinstance(entry.get(key), str) or not _HEX40.fullmatch(entry[key]):
            raise ConformanceError(
                f"{where}: {key} should be 40 lower-case hex digits (git rev-parse "
                f"{'COMMIT' if key == 'commit' else 'COMMIT:' + path})"
            )
    name = entry.get("name", str(Path(path).with_suffix("")))
    if not isinstance(name, str) or not name.strip():
        raise ConformanceError(f"{where}: name should be a non-empty string")
    skip = entry.get("skip")
    if skip is not None and (not isinstance(skip, str) or not skip.strip() or not _confined(skip)):
        raise ConformanceError(
            f"{where}: skip should be the path of its skip list, relative to the list file and "
            f"inside its folder (no leading / and no ..)"
        )
    return Page(path, entry["commit"], entry["blob"], name.strip(), folder / skip if skip else None)


def read_pages(path: Path) -> PageList:
    """The list file at `path` (see the module's docstring)."""
    try:
        text = read_regular_bytes(path, 1024 * 1024).decode("utf-8-sig")
    except FileNotFoundError:
        raise ConformanceError(f"the pages list {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"cannot read the pages list {path}: {exc}") from None
    listed = parse_pages(text, str(path), path.parent)
    for page in listed.pages:
        if page.skip is not None:
            check_skip_list(page.skip, f"the skip list of {page.path} (in {path})")
    return listed


def check_skip_list(path: Path, what: str) -> None:
    """Read and check a page's skip list as its page will (every table, `chapter.read.read_text`'s bound), when the
    list is read: one line naming it when it is missing, unreadable or malformed."""
    text = read_text(path, what, 1024 * 1024)
    for parse in (parse_skip_list, parse_limits, parse_runs, parse_setup):
        parse(text, str(path))


def locate_pages(pages: PageList, docs: Path) -> list[tuple[Page, Path]]:
    """Each page and its file in the checkout `docs`, every one found and checked first (see the module's
    docstring)."""
    if not docs.is_dir():
        raise ConformanceError(f"--docs {docs} is not a folder: give a checkout of {pages.repository}")
    found = []
    for page in pages.pages:
        local = docs / page.path
        try:
            data = read_regular_bytes(local, PAGE_LIMIT)
        except FileNotFoundError:
            raise ConformanceError(
                f"{page.path} is not in {docs}: give a checkout of {pages.repository} at "
                f"{page.commit[:12]} (git -C {docs} checkout {page.commit[:12]})"
            ) from None
        except OSError as exc:
            raise ConformanceError(f"cannot read {local}: {exc.strerror or exc}") from None
        if git_blob_id(data) != page.blob:
            raise ConformanceError(
                f"{local} is not the page the list names: its content is not {page.path} at "
                f"{page.commit[:12]} (blob {page.blob[:12]}); check out that commit (git -C "
                f"{docs} checkout {page.commit[:12]}) or update the list's commit and blob"
            )
        found.append((page, local))
    return found
