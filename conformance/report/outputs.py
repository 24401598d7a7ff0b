"""Writing the report's outputs for other tools: the compat JSON and the wptreports (one JSON file per run, in a
folder). The only I/O of them.

`report.compat` and `report.wptreport` turn the report model into plain data; this module serialises that
data and writes each file atomically, and holds the options that say which are wanted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from conformance.api.model import Census
from conformance.api.table import compat_entries
from conformance.atomic import write_text_atomically
from conformance.errors import ConformanceError
from conformance.report.compat import compat_data
from conformance.report.markdown import DEFAULT_HTML_LINK
from conformance.report.model import ReportModel
from conformance.report.wptreport import wptreports


@dataclass(frozen=True)
class ExtraOutputs:
    """What `report` writes beyond the HTML page, the Markdown and JUnit: how full the Markdown is, where it links
    to, the path of the compat JSON and the folder of the wptreports, one per run (None: not written)."""

    markdown_full: bool = False
    html_link: str = DEFAULT_HTML_LINK
    compare: tuple[str, str] | None = None  # the Markdown's "From A to B"
    site_url: str = ""  # where the page is published: links made absolute against it ("" keeps them relative)
    compat_json: Path | None = None
    wptreport: Path | None = None


def extra_outputs(markdown: Path | None, markdown_full: bool, html_link: str, compat_json: Path | None,
                  wptreport_path: Path | None, *, compare: Sequence[str] | None = None,
                  site_url: str = "") -> ExtraOutputs:
    """The outputs asked for beyond the page; one `ConformanceError` when a Markdown option comes without a page, or
    `site_url` is not an http(s) address."""
    if markdown is None and (markdown_full or html_link != DEFAULT_HTML_LINK or compare):
        raise ConformanceError("--markdown-full, --html-link and --compare shape the Markdown page; "
                               "add --markdown PATH")
    if site_url and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", site_url):
        raise ConformanceError(f"--site-url {site_url!r} is not an http(s) address of a folder, without a query or "
                               f"fragment, such as https://team.example/jax/")
    if site_url and re.search(r"\.html?$", site_url, re.IGNORECASE):
        raise ConformanceError(f"--site-url {site_url!r} names a page; give the folder the page is in "
                               f"(https://team.example/jax/) and, where the page has another name, --html-link NAME")
    return ExtraOutputs(markdown_full=markdown_full, html_link=html_link, compat_json=compat_json,
                        wptreport=wptreport_path, compare=tuple(compare) if compare else None, site_url=site_url)


def as_json(data: Any, indent: int | None = 1) -> str:
    """`data` as UTF-8 JSON text with a final newline: indented for a reader (the compat JSON, diffed in review as
    BCD's files are), or compact (`indent=None`: the wptreport, thousands of results, as wptrunner writes it)."""
    separators = None if indent else (",", ":")
    return json.dumps(data, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False) + "\n"


def write_wptreports(model: ReportModel, folder: Path) -> list[Path]:
    """Write one wptreport per run of the model into `folder` (made if missing; each file atomically; files of other
    runs already there are left as they are); the paths written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConformanceError(f"--wptreport {folder}: cannot make the folder ({error.strerror or error})") from None
    written = []
    for name, report in wptreports(model):
        write_text_atomically(folder / name, as_json(report, indent=None))
        written.append(folder / name)
    return written


def write_extra_outputs(model: ReportModel, moment: dt.datetime | str, extra: ExtraOutputs,
                        censuses: Sequence[Census] = ()) -> None:
    """Write the compat JSON and the wptreports that `extra` asks for (each file atomically); `censuses` (final
    releases') give the compat JSON its `api` entries."""
    stamp = moment.isoformat(timespec="seconds") if isinstance(moment, dt.datetime) else str(moment)
    if extra.compat_json is not None:
        api = compat_entries(censuses) if censuses else None
        write_text_atomically(extra.compat_json, as_json(compat_data(model, stamp, html_link=extra.html_link,
                                                                     site_url=extra.site_url, api=api)))
    if extra.wptreport is not None:
        write_wptreports(model, extra.wptreport)
