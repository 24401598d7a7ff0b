"""A local simple index that stands in for PyPI on a given day: PEP 503 HTML pages in a folder, read by uv and pip
through a `file://` URL (uv does not read a folder of PEP 691 `index.json` pages), and by the suite's own index
reader.

Each page is PyPI's own page of the project, fetched when the index is made (a fresh machine has nothing cached),
optionally cut to some releases: the files stay on PyPI, linked by URL with their sha256, so uv downloads them (or
takes them from its download cache by hash).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Iterable, Mapping

from conformance.envs.index import DEFAULT_INDEX, fetch_project_page


def normalized(project: str) -> str:
    """The PEP 503 normalized name (`ml_dtypes` → `ml-dtypes`), the folder name uv asks for."""
    return re.sub(r"[-_.]+", "-", project).lower()


def _version_of(project: str, filename: str) -> str | None:
    """The version a wheel or sdist file name carries, or None."""
    stem = re.escape(project).replace(r"\-", "[-_.]")
    found = re.match(rf"^{stem}-(?P<version>[^-]+?)(?:-|\.tar\.gz$|\.zip$)", filename, flags=re.I)
    return found["version"] if found else None


def anchor(entry: Mapping) -> str:
    """One file of a PEP 691 page as a PEP 503 anchor: its URL with the sha256 fragment, Requires-Python, yanked."""
    url = entry["url"]
    digest = (entry.get("hashes") or {}).get("sha256")
    if digest and "#" not in url:
        url = f"{url}#sha256={digest}"
    attributes = [f'href="{html.escape(url, quote=True)}"']
    if entry.get("requires-python"):
        attributes.append(f'data-requires-python="{html.escape(entry["requires-python"], quote=True)}"')
    if entry.get("yanked"):
        attributes.append('data-yanked=""')
    return f"<a {' '.join(attributes)}>{html.escape(entry['filename'])}</a><br>"


def write_simple_index(
    folder: Path, projects: Iterable[str], cut: Mapping[str, Iterable[str]] | None = None, source: str = DEFAULT_INDEX
) -> str:
    """Write a PEP 503 index of `projects` into `folder` from `source`'s pages; a project named in `cut` keeps only
    the files of the releases listed there (the releases out that day). Returns the index's `file://` URL."""
    cut = {normalized(name): set(versions) for name, versions in (cut or {}).items()}
    names = sorted({normalized(p) for p in projects} | set(cut))
    for project in names:
        page = fetch_project_page(project, source)
        files = [f for f in page.get("files", []) if isinstance(f, dict) and f.get("url") and f.get("filename")]
        if project in cut:
            files = [f for f in files if _version_of(project, f["filename"]) in cut[project]]
            found = {_version_of(project, f["filename"]) for f in files}
            if found != cut[project]:
                raise ValueError(f"{source} has no files of {project} {sorted(cut[project] - found)}")
        (folder / project).mkdir(parents=True, exist_ok=True)
        body = "\n".join(anchor(f) for f in files)
        (folder / project / "index.html").write_text(
            f"<!DOCTYPE html>\n<html><head><title>Links for {project}</title></head><body>\n"
            f"<h1>Links for {project}</h1>\n{body}\n</body></html>\n",
            encoding="utf-8",
        )
    (folder / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n" + "\n".join(f'<a href="{p}/">{p}</a>' for p in names) + "\n</body></html>\n",
        encoding="utf-8",
    )
    return folder.as_uri()


def pinned_projects(pin_files: Iterable[Path]) -> set[str]:
    """Every project a hashed pin file names (`numpy==2.5.5 \\`), normalized."""
    names: set[str] = set()
    for path in pin_files:
        names.update(normalized(m) for m in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", path.read_text(), re.M))
    return names
