"""Issue 47: the Markdown page travels. Without `--site-url` it says its link is relative; with it every cell id links
to its cell at the release its line is about; it sums up the chapter as written and every public name; no bare file
name is left for a linkifying renderer to take for a host; and with all of that, on the published results and a
chapter measured on each of their 27 releases, it stays under its size budget. Rendered with cmark-gfm (GitHub's
renderer)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import cmarkgfm
import pytest

from conformance.chapter.grid import chapter_views
from conformance.chapter.model import BlockStatus
from conformance.core.status import Status
from conformance.report.apiview import ApiView
from conformance.report.chapterpage import chapter_pages
from conformance.report.markdown import markdown_summary, prose
from conformance.report.model import build_model
from conformance.report.perfview import perf_view
from conformance.results.merge import merge_files
from tests.test_chapter_cells import cells_for, probe, result_file
from tests.test_report_outputs import MARKDOWN_BUDGET

SITE = "https://reports.example/jax/"
PERF_ALL = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "perf-all-5rounds.json"


@pytest.fixture(scope="module")
def published():
    from conformance.core.case import load_cases
    from tests.published_report import published_files

    files = published_files()
    return files, build_model(files, load_cases())


@pytest.fixture(scope="module")
def chapter(published):
    """A chapter run on every published release (a row per release is what the summary grows by)."""
    files, _ = published
    statuses = (BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAISED, BlockStatus.AFTER_FAILURE)
    runs = [
        result_file(
            f.header.jax, [*cells_for(f.header.jax, *statuses).values(), probe("numerics.a", "§3.1", Status.CONFORMS)]
        )
        for f in files
    ]
    return chapter_pages(chapter_views(merge_files(runs), {}, documented="000_seedlike"))


API = ApiView(
    releases=tuple(
        {
            "jax": v,
            "platform": "linux-x86_64",
            "added": ["jax.a"] * 3,
            "removed": [],
            "deprecated": ["jax.b"] if v != "0.5.1" else [],
        }
        for v in (
            "0.4.38",
            "0.5.0",
            "0.5.1",
            "0.5.2",
            "0.5.3",
            "0.6.0",
            "0.6.1",
            "0.6.2",
            "0.7.0",
            "0.7.1",
            "0.7.2",
            "0.8.0",
            "0.8.1",
            "0.8.2",
            "0.8.3",
            "0.9.0",
            "0.9.0.1",
            "0.9.1",
            "0.9.2",
            "0.10.0",
            "0.10.1",
            "0.10.2",
            "0.11.0",
            "0.11.1",
            "0.11.2",
            "0.12.0",
            "0.12.0.1",
        )
    ),
    platforms=("linux-x86_64",),
    names={"jax.a": [["0.5.0", "", "", ""]]},
    censuses=27,
)
NO_CHANGE = ApiView(
    releases=({"jax": "0.5.0", "platform": "linux-x86_64", "added": [], "removed": [], "deprecated": []},),
    platforms=("linux-x86_64",),
    names={},
    censuses=2,
)


def linked_codes(rendered: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The code spans of the rendered page that are not links, and (code, href) of those that are."""
    linked = [(unescape(c), unescape(h)) for h, c in re.findall(r'<a href="([^"]+)"><code>(.*?)</code></a>', rendered)]
    bare = [unescape(c) for c in re.findall(r"(?<!\">)<code>(.*?)</code>", rendered)]
    return bare, linked


def test_without_a_site_url_it_says_its_link_is_relative(published):
    _, model = published
    page = markdown_summary(model, generated_at="2026-12-03 14:00 UTC")
    head = page.split("## Overview")[0]
    assert "The link is relative: it works beside `index.html` only" in head and "--site-url URL" in head
    assert "https://" not in page.split("## Legend")[0]


def test_with_a_site_url_every_cell_id_links_to_its_cell_at_the_release_it_is_about(published):
    _, model = published
    page = markdown_summary(model, full=True, generated_at="2026-12-03 14:00 UTC", site_url=SITE)
    assert "Every cell id links to its cell in the interactive report" in page.split("## Overview")[0]
    rendered = cmarkgfm.github_flavored_markdown_to_html(page)
    bare, linked = linked_codes(rendered)
    ids = {row.cell_id for row in model.param_rows}
    assert not [c for c in bare if c in ids], "a cell id without its link"
    assert len(linked) > len(ids)
    for cell_id, href in linked:
        parts = urlsplit(href)
        state = parse_qs(parts.fragment)
        assert href.startswith(SITE + "index.html#") and state["cell"] == [cell_id] and state["at"]
    # the discrepancies are about the documented release: their links open that column
    discrepancies = page.split("## Where JAX 0.12.0.1 differs from the chapter")[1].split("\n## ")[0]
    assert discrepancies.count("at=0.12.0.1)") == len(model.discrepancies) > 0


def test_it_sums_up_the_chapter_and_every_public_name(published, chapter):
    _, model = published
    page = markdown_summary(model, generated_at="2026-12-03 14:00 UTC", chapters=chapter, api=API, site_url=SITE)
    section = page.split("## The chapter as written")[1].split("\n## ")[0]
    assert "**3.1 NaNs** (`000_seedlike`, 4 blocks)" in section
    assert (
        "| 0.4.38 | 1 of 4 blocks run as written (1 assert failed, 1 raised, 1 after an earlier failure; 1 printed "
        "differently) | "
        "§3.1, line 10 (`assert old_release is False`): assert failed |"
    ) in section
    assert (
        "| 0.5.0 | 1 of 4 blocks run as written (1 assert failed, 1 raised, 1 after an earlier failure; 1 printed "
        "differently) | the same |"
    ) in section
    assert f"({SITE}index.html#chapter)" in section and "Probe and chapter disagree in" in section
    names = page.split("## Every public name")[1].split("\n## ")[0]
    assert "1 public names over 27 release censuses" in names and "| 0.5.0 | 3 | 0 | 1 |" in names
    empty = markdown_summary(model, generated_at="2026-12-03 14:00 UTC", api=NO_CHANGE)
    assert "| 0.5.0 |" not in empty.split("## Every public name")[1]  # a release that changed no name is left out


def test_no_bare_file_name_is_left_for_a_linkifier():
    shown = prose("jax/_src/debugging.py line 674 and config.py; `already.py` stays; version 0.4.38, jax.numpy")
    assert shown == ("`jax/_src/debugging.py` line 674 and `config.py`; `already.py` stays; version 0.4.38, jax.numpy")


def test_the_published_page_has_no_bare_file_name(published):
    _, model = published
    page = markdown_summary(model, full=True, generated_at="2026-12-03 14:00 UTC")
    outside_code = re.sub(r"`[^`]*`", "", page)
    assert not re.findall(r"\b[\w-]+\.(?:py|md|toml|json|tsv)\b", outside_code.replace("\\_", "_"))


def published_perf():
    """The Performance section of the published run: the `all` matrix's perf JSON (benchmarks/results), its samples
    as the result files store them."""
    data = json.loads(PERF_ALL.read_text(encoding="utf-8"))
    by_release: dict[str, dict] = {}
    for workload in data["workloads"]:
        for release in workload["releases"]:
            by_release.setdefault(release["release"], {})[workload["id"]] = {
                "claim": workload["claim"],
                "samples": [{"metrics": m} for m in release["samples"]],
            }
    return perf_view([(jax, "linux-x86_64", workloads) for jax, workloads in by_release.items()])


def test_with_every_section_and_site_links_the_published_page_stays_under_its_budget(published, chapter):
    _, model = published
    perf = published_perf()
    assert len(perf.releases) == 27 and len(perf.rows) == 13
    page = markdown_summary(
        model, generated_at="2026-12-03 14:00 UTC", chapters=chapter, api=API, site_url=SITE, perf=perf
    )
    assert "\n## Performance\n" in page
    size = len(page.encode("utf-8"))
    assert size < MARKDOWN_BUDGET, f"the Markdown page is {size} bytes"
