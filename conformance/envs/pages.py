"""Reading one page of a simple index or a `--find-links` place, as PEP 691 JSON: asked for as JSON over HTTP(S),
read as PEP 503 HTML when that is all a server answers, and read from the folder of a `file://` URL. Standard library
only; a user name and password in a URL go as HTTP basic authentication, and never into a message.

Both `envs.index` (the release lists) and `envs.find_links` (a `--find-links` page) read pages through here, so
neither imports the other for it.
"""

from __future__ import annotations

import base64
import html.parser
import http.client
import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from conformance.scrub import scrub_credentials, without_credentials

_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
MAX_PAGE_BYTES = 64 * 1024 * 1024  # PyPI's jaxlib page is a few MB


class _AnchorParser(html.parser.HTMLParser):
    """The file anchors of a PEP 503 project page, as PEP 691 JSON file entries."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            found = dict(attrs)
            href = found.get("href") or ""
            name = urllib.parse.unquote(urllib.parse.urlsplit(href).path.rsplit("/", 1)[-1])
            self._open = {
                "filename": name,
                "requires-python": found.get("data-requires-python"),
                "yanked": "data-yanked" in found,
                "url": href,
            }

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            if self._open["filename"]:
                self.files.append(self._open)
            self._open = None


def parse_simple_html(text: str) -> dict[str, Any]:
    """A PEP 503 HTML project page as a PEP 691 JSON page (`files`: filename, requires-python, yanked)."""
    parser = _AnchorParser()
    parser.feed(text)
    parser.close()
    return {"files": parser.files}


def _page(data: bytes, content_type: str, where: str) -> dict[str, Any]:
    if len(data) > MAX_PAGE_BYTES:
        raise ValueError(f"{where} is larger than {MAX_PAGE_BYTES // 2**20} MB; not a simple index page")
    if "json" in content_type or (not content_type and data.lstrip()[:1] == b"{"):
        page = json.loads(data)
        if not isinstance(page, dict):
            raise ValueError(f"{where} answered JSON that is not a project page")
        return page
    text = data.decode("utf-8", "replace")
    if "html" in content_type or text.lstrip()[:1] == "<":
        return parse_simple_html(text)
    raise ValueError(
        f"{where} answered {content_type or 'an unknown type'}, neither a PEP 691 JSON nor a PEP 503 "
        f"HTML project page; is it a simple index?"
    )


def _local_page(folder: Path, where: str) -> dict[str, Any]:
    """A project page of a `file://` index: its `index.html` (or `index.json`), else the files of its folder."""
    for name, kind in (("index.json", "json"), ("index.html", "html")):
        if (folder / name).is_file():
            with open(folder / name, "rb") as handle:
                return _page(handle.read(MAX_PAGE_BYTES + 1), kind, where)
    if folder.is_dir():
        return {"files": [{"filename": p.name} for p in sorted(folder.iterdir()) if p.is_file()]}
    raise OSError(f"{where}: no such project folder in the file:// index")


def fetch_page(url: str, timeout: float = 30.0) -> dict[str, Any]:
    """The page at `url` (an index's project page, or a `--find-links` page) as PEP 691 JSON; see
    `fetch_project_page`."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        return _local_page(Path(urllib.request.url2pathname(parts.path)), without_credentials(url))
    request = _request(url, f"{_SIMPLE_JSON}, text/html;q=0.1")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            content_type = (getattr(response, "headers", None) or {}).get("Content-Type", "") or ""
            return _page(response.read(MAX_PAGE_BYTES + 1), content_type, request.full_url)
    except http.client.HTTPException as exc:  # a malformed URL or reply: an OSError for the caller's one line
        raise OSError(f"{type(exc).__name__}: {scrub_credentials(str(exc), url)}") from None


def _request(url: str, accept: str) -> urllib.request.Request:
    """A request for `url`, its user name and password (if any) sent as HTTP basic authentication, not in the URL."""
    parts = urllib.parse.urlsplit(url)
    headers = {"Accept": accept}
    if parts.username is not None or parts.password is not None:
        user = urllib.parse.unquote(parts.username or "")
        secret = urllib.parse.unquote(parts.password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
        url = without_credentials(url)
    return urllib.request.Request(url, headers=headers)


def fetch_file(url: str, limit: int, timeout: float = 60.0) -> bytes:
    """The bytes of one file an index page links to (a `file://` path, or HTTP(S) with the page's credentials), at
    most `limit` of them: a larger file is an `OSError` (one line, no credentials)."""
    parts = urllib.parse.urlsplit(url)
    try:
        if parts.scheme == "file":
            with open(urllib.request.url2pathname(parts.path), "rb") as handle:
                data = handle.read(limit + 1)
        else:
            with urllib.request.urlopen(_request(url, "*/*"), timeout=timeout) as response:
                data = response.read(limit + 1)
    except http.client.HTTPException as exc:
        raise OSError(f"{type(exc).__name__}: {scrub_credentials(str(exc), url)}") from None
    if len(data) > limit:
        raise OSError(f"{without_credentials(url)} is larger than {limit // 2**20} MB")
    return data
