"""Writing the report's outputs for other tools: the compat JSON and the wptreport JSON. The only I/O of them.

`report.compat` and `report.wptreport` turn the report model into plain data; this module serialises that
data and writes each file atomically, and holds the options that say which are wanted.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.atomic import write_text_atomically
from conformance.errors import ConformanceError
from conformance.report.compat import compat_data
from conformance.report.markdown import DEFAULT_HTML_LINK
from conformance.report.model import ReportModel
from conformance.report.wptreport import wptreport


@dataclass(frozen=True)
class ExtraOutputs:
    """What `report` writes beyond the HTML page, the Markdown and JUnit: how full the Markdown is, where it links
    to, and the paths of the compat JSON and the wptreport (None: not written)."""

    markdown_full: bool = False
    html_link: str = DEFAULT_HTML_LINK
    compat_json: Path | None = None
    wptreport: Path | None = None


def extra_outputs(markdown: Path | None, markdown_full: bool, html_link: str, compat_json: Path | None,
                  wptreport_path: Path | None) -> ExtraOutputs:
    """The outputs asked for beyond the page; one `ConformanceError` when a Markdown option comes without a page."""
    if markdown is None and (markdown_full or html_link != DEFAULT_HTML_LINK):
        raise ConformanceError("--markdown-full and --html-link shape the Markdown page; add --markdown PATH")
    return ExtraOutputs(markdown_full, html_link, compat_json, wptreport_path)


def as_json(data: Any, indent: int | None = 1) -> str:
    """`data` as UTF-8 JSON text with a final newline: indented for a reader (the compat JSON, diffed in review as
    BCD's files are), or compact (`indent=None`: the wptreport, thousands of results, as wptrunner writes it)."""
    separators = None if indent else (",", ":")
    return json.dumps(data, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False) + "\n"


def write_extra_outputs(model: ReportModel, moment: dt.datetime | str, extra: ExtraOutputs) -> None:
    """Write the compat JSON and the wptreport that `extra` asks for (each atomically)."""
    stamp = moment.isoformat(timespec="seconds") if isinstance(moment, dt.datetime) else str(moment)
    if extra.compat_json is not None:
        write_text_atomically(extra.compat_json, as_json(compat_data(model, stamp)))
    if extra.wptreport is not None:
        write_text_atomically(extra.wptreport, as_json(wptreport(model), indent=None))
