"""Rendering result files into the report: read them tolerantly, merge, write the HTML and the outputs asked for.

`render_results` returns what it did as a `Rendered` outcome (the report's path, the unreadable files, the
conflicting cells of merged files); the CLI prints it.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.api.model import Census, load_census
from conformance.api.store import api_folder
from conformance.chapter.grid import chapter_views, without_blocks
from conformance.downstream.cells import without_tests
from conformance.envs.builder import EnvironmentBuilder
from conformance.errors import ConformanceError
from conformance.report.downstreamview import downstream_view
from conformance.report.html import write_report
from conformance.report.perfview import perf_sections, perf_view
from conformance.report.outputs import OutputSettings
from conformance.report.since import since_view
from conformance.results.history_file import read_history
from conformance.results.load import read_results_tolerantly
from conformance.results.merge import merge_files


@dataclass
class Rendered:
    """The report written, the result files that could not be read (skipped), the conflicts of merged files."""

    path: Path
    problems: list[str] = field(default_factory=list)
    conflicts: list = field(default_factory=list)


def history_href(history: Path, out: Path) -> str:
    """The history file's address relative to the page, where it lies in the page's folder or below (as on the
    published site); "" elsewhere, so the page never names a path of the machine that made it. Each part of the path
    is percent-quoted (`:` too) and the address starts `./`: a file named `javascript:…` is a relative link to that
    file, never a URL with a scheme."""
    relative = os.path.relpath(os.path.realpath(history), os.path.dirname(os.path.realpath(out)))
    if relative.startswith(".."):
        return ""
    return "./" + "/".join(urllib.parse.quote(part, safe="") for part in Path(relative).parts)


def stored_censuses_of(paths: Any) -> tuple[list[Census], list[str]]:
    """The census files (`api census`) stored in each results folder of `paths`, and a line for each that cannot be
    read (a report names it and goes on, as for a result file)."""
    found, problems = [], []
    for folder in [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]:
        where = api_folder(folder)
        for path in sorted(where.glob("*.json")) if where.is_dir() else []:
            try:
                found.append(load_census(path))
            except ConformanceError as exc:
                problems.append(f"census {exc}")
    return found, problems


def render_results(
    paths: Any,
    out: Path,
    *,
    cases: list | None = None,
    releases: Any = None,
    outputs: Mapping[str, Path] | None = None,
    settings: OutputSettings | None = None,
    history: Path | None = None,
) -> Rendered:
    """Render every readable result file of `paths` into `out`, and the outputs `outputs` asks for (`{format name:
    path}`, `report.formats`) shaped by `settings`; one `ConformanceError` when none can be read. `cases` give rows
    their sections (default: the built-in cases);
    `releases` are the JAX releases known (None: those the package index cache holds; the report names ranges);
    `history` (a history.json) adds "Since the last run", and one `ConformanceError` when it cannot be read."""
    since = None
    if history is not None:
        written = [out, *(outputs or {}).values()]
        if any(os.path.realpath(path) == os.path.realpath(history) for path in written):
            raise ConformanceError(f"--history {history} is also an output of this report; it would be overwritten")
        since = since_view(read_history(history), history_href(history, out))
    loaded = read_results_tolerantly(paths)
    if not loaded.files:
        more = f" (and {len(loaded.problems) - 1} more unreadable)" if len(loaded.problems) > 1 else ""
        raise ConformanceError(f"{loaded.problems[0]}{more}" if loaded.problems else "no result files given")
    merged = merge_files(loaded.files)
    conflicts = [c for run in merged for c in run.conflicts]
    if releases is None:
        releases = EnvironmentBuilder().index.cached_releases("jax")  # offline: the report names ranges instead
    # A chapter's blocks (`jax-conformance chapter`) are not probes: the page's table, overview and the outputs for
    # other tools leave them out, and its section "The chapter as written" shows them (`chapter_views`). Nor are a
    # downstream suite's tests (`jax-conformance downstream`): its section "Downstream test suites" shows them.
    censuses, unread = stored_censuses_of(paths)
    malformed_perf: list[str] = []  # a malformed workload entry is left out and named, as an unreadable file is
    perf = perf_view(perf_sections(paths, malformed_perf))
    path = write_report(
        without_blocks(without_tests(loaded.files)),
        out,
        outputs=outputs,
        settings=settings,
        cases=cases,
        releases=releases,
        since=since,
        censuses=censuses,
        chapters=chapter_views(merged),
        perf=perf,
        downstream=downstream_view(merged),
    )
    return Rendered(path, list(loaded.problems) + unread + malformed_perf, conflicts)
