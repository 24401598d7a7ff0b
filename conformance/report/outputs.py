"""What every output of the report is made from: the report data (`ReportData`: the model, the moment, the page's
sections) and the settings that shape the outputs (`OutputSettings`, checked by `output_settings`), and `as_json`,
the JSON text the JSON outputs share. Pure: the outputs themselves are listed, rendered and written by
`report.formats`, the registry.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.errors import ConformanceError
from conformance.report.markdown import DEFAULT_HTML_LINK
from conformance.report.model import ReportModel

if TYPE_CHECKING:
    from conformance.api.model import Census
    from conformance.chapter.grid import ChapterView
    from conformance.report.apiview import ApiView
    from conformance.report.downstreamview import DownstreamView
    from conformance.report.perfview import PerfView
    from conformance.report.since import SinceView

__all__ = ["DEFAULT_HTML_LINK", "OutputSettings", "ReportData", "as_json", "output_settings"]


@dataclass(frozen=True)
class OutputSettings:
    """How the outputs beside the page are shaped: how full the Markdown is, where it and the compat JSON link to,
    the Markdown's "From A to B", and where the page is published."""

    markdown_full: bool = False
    html_link: str = DEFAULT_HTML_LINK
    compare: tuple[str, str] | None = None  # the Markdown's "From A to B"
    site_url: str = ""  # where the page is published: links made absolute against it ("" keeps them relative)


@dataclass(frozen=True)
class ReportData:
    """What an output is made from: the report model, the moment the report was made, the settings, and the
    sections the page shows beside the table (since the last run, the API census, the chapters, performance, the
    downstream suites).
    `censuses` are every stored census; `api` is the page's view of them."""

    model: ReportModel
    moment: dt.datetime | str
    settings: OutputSettings = OutputSettings()
    since: SinceView | None = None
    api: ApiView | None = None
    censuses: Sequence[Census] = ()
    chapters: Sequence[ChapterView] = ()
    perf: PerfView | None = None
    downstream: DownstreamView | None = None

    @property
    def stamp(self) -> str:
        """The moment as text: ISO 8601 to the second, or as given."""
        moment = self.moment
        return moment.isoformat(timespec="seconds") if isinstance(moment, dt.datetime) else str(moment)


def output_settings(
    wanted: Mapping[str, Any],
    markdown_full: bool = False,
    html_link: str = DEFAULT_HTML_LINK,
    compare: Sequence[str] | None = None,
    site_url: str = "",
) -> OutputSettings:
    """The settings of the outputs `wanted` ({format name: path}); one `ConformanceError` when a Markdown option
    comes without a Markdown page, or `site_url` is not an http(s) address of a folder."""
    if "markdown" not in wanted and (markdown_full or html_link != DEFAULT_HTML_LINK or compare):
        raise ConformanceError(
            "--markdown-full, --html-link and --compare shape the Markdown page; add --markdown PATH"
        )
    if site_url and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", site_url):
        raise ConformanceError(
            f"--site-url {site_url!r} is not an http(s) address of a folder, without a query or "
            f"fragment, such as https://team.example/jax/"
        )
    if site_url and re.search(r"\.html?$", site_url, re.IGNORECASE):
        raise ConformanceError(
            f"--site-url {site_url!r} names a page; give the folder the page is in "
            f"(https://team.example/jax/) and, where the page has another name, --html-link NAME"
        )
    return OutputSettings(
        markdown_full=markdown_full,
        html_link=html_link,
        compare=(compare[0], compare[1]) if compare else None,
        site_url=site_url,
    )


def as_json(data: Any, indent: int | None = 1) -> str:
    """`data` as UTF-8 JSON text with a final newline: indented for a reader (the compat JSON, diffed in review as
    BCD's files are), or compact (`indent=None`: the wptreport, thousands of results, as wptrunner writes it)."""
    separators = None if indent else (",", ":")
    return json.dumps(data, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False) + "\n"
