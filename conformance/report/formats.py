"""The registry of the report's outputs beside the HTML page, as mozlog's formatters are: one entry per format
(its name, its command-line option, a file or a folder of files, its help, and its renderer), and the one place they
are checked, rendered and written.

A format is a module with a pure renderer and one entry in `FORMATS`: the `report` command gets its option from the
entry (`cli_parser`), the CLI passes the paths asked for as one mapping `{name: path}` (`requested`), their paths
are checked with the page's by `results.outputs.check_outputs` (`check_report_outputs`), and `report.html` renders
each (`render_outputs`, before anything is written: a bad `--compare` costs no file) and writes it atomically
(`write_outputs`). A renderer takes the `ReportData` and returns the file's text, or for a folder the
`(file name, text)` of each file in it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.api.table import compat_entries
from conformance.atomic import write_text_atomically
from conformance.errors import ConformanceError
from conformance.report.chapterpage import chapter_pages
from conformance.report.compat import compat_data, is_final
from conformance.report.junit import junit_xml
from conformance.report.markdown import markdown_summary
from conformance.report.outputs import ReportData, as_json
from conformance.report.since import since_markdown
from conformance.report.wptreport import wptreports
from conformance.results.outputs import check_outputs

# A file's text, or the (name, text) of each file of a folder.
Rendered = str | list[tuple[str, str]]


@dataclass(frozen=True)
class OutputFormat:
    """One output beside the page: `name` keys it in the mapping of requested outputs (and is the option's dest),
    `option` is its command-line option, `folder` says it is a folder of files (one per run) rather than a file,
    `help` is the option's help, `render` turns the report data into its text (a folder's: each file's name and
    text), and `label` names it where the command says what it wrote."""

    name: str
    option: str
    help: str
    render: Callable[[ReportData], Rendered]
    folder: bool = False
    label: str = ""

    @property
    def metavar(self) -> str:
        """What the option takes: a PATH, or a DIR for a folder."""
        return "DIR" if self.folder else "PATH"

    @property
    def said(self) -> str:
        """How the command names it when it says what it wrote."""
        return self.label or self.name.replace("_", " ")


def _markdown(data: ReportData) -> str:
    shape = data.settings
    return markdown_summary(
        data.model,
        full=shape.markdown_full,
        generated_at=data.moment,
        html_link=shape.html_link,
        lead=since_markdown(data.since),
        compare=shape.compare,
        site_url=shape.site_url,
        api=data.api,
        chapters=chapter_pages(data.chapters, len(data.model.platforms) > 1),
        perf=data.perf,
        downstream=data.downstream,
    )


def _compat_json(data: ReportData) -> str:
    finals = [census for census in data.censuses if is_final(census.jax)]  # final releases' give the `api` entries
    return as_json(
        compat_data(
            data.model,
            data.stamp,
            html_link=data.settings.html_link,
            site_url=data.settings.site_url,
            api=compat_entries(finals) if finals else None,
        )
    )


def _wptreports(data: ReportData) -> list[tuple[str, str]]:
    return [(name, as_json(report, indent=None)) for name, report in wptreports(data.model)]


# The formats, in the order their options are listed, checked, written and said.
FORMATS: dict[str, OutputFormat] = {
    entry.name: entry
    for entry in (
        OutputFormat("markdown", "--markdown", "also write the Markdown summary", _markdown),
        OutputFormat("junit", "--junit", "also write JUnit XML, one test case per cell", lambda d: junit_xml(d.model)),
        OutputFormat("compat_json", "--compat-json", "also write MDN-style compatibility data", _compat_json),
        OutputFormat(
            "wptreport",
            "--wptreport",
            "also write web-platform-tests' wptreport JSON, one file per run, into the folder DIR",
            _wptreports,
            folder=True,
        ),
    )
}


def output_formats() -> list[OutputFormat]:
    """Every registered format, in order."""
    return list(FORMATS.values())


def requested(values: Mapping[str, Any]) -> dict[str, Path]:
    """The outputs asked for, `{name: path}` in the registry's order, from values keyed by format name (the parsed
    options); a format not given (None, or absent) is not asked for."""
    return {name: Path(values[name]) for name in FORMATS if values.get(name) is not None}


def check_report_outputs(
    page: Path, wanted: Mapping[str, Path], inputs: Iterable[Path] = (), reads: Iterable[Path | None] = ()
) -> None:
    """Fail with one line, before any work, when the page (`-o`) or an output asked for would overwrite an input, a
    result file or another output (`results.outputs.check_outputs`; a folder format is checked as a folder)."""
    files = [(FORMATS[name].option, path) for name, path in wanted.items() if not FORMATS[name].folder]
    folders = [(FORMATS[name].option, path) for name, path in wanted.items() if FORMATS[name].folder]
    check_outputs([("-o", page), *files], inputs=list(inputs), folders=folders, reads=list(reads))


def render_outputs(data: ReportData, wanted: Mapping[str, Path]) -> dict[str, Rendered]:
    """Each output asked for, rendered (nothing written): `{name: text}` (a folder's: its files); one
    `ConformanceError` for a name the registry does not hold."""
    unknown = [name for name in wanted if name not in FORMATS]
    if unknown:
        raise ConformanceError(f"no output format {unknown[0]!r}; the formats are {', '.join(FORMATS)}")
    return {name: FORMATS[name].render(data) for name in wanted}


def write_outputs(rendered: Mapping[str, Rendered], wanted: Mapping[str, Path]) -> list[Path]:
    """Write each rendered output to its path atomically, a folder format's files into its folder (made if missing;
    files of other runs already there are left as they are); the paths of the files written."""
    written: list[Path] = []
    for name, text in rendered.items():
        entry, path = FORMATS[name], wanted[name]
        if not entry.folder:
            write_text_atomically(path, str(text))
            written.append(path)
            continue
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            why = error.strerror or error
            raise ConformanceError(f"{entry.option} {path}: cannot make the folder ({why})") from None
        for file_name, file_text in text:
            write_text_atomically(path / file_name, file_text)
            written.append(path / file_name)
    return written


def outputs_said(page: Path, wanted: Mapping[str, Path]) -> str:
    """What the command says it wrote: the page, then each output, a line each."""
    return "\n".join([f"report: {page}", *(f"{FORMATS[name].said}: {path}" for name, path in wanted.items())])
