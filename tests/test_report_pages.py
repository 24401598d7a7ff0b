"""Issue 59: the HTML report of a page that is not the suite's chapter, run with no probe (`chapter FILE -o`), says
true things about that page: titled by the page and counting its blocks, its own status changes between adjacent
releases, where its newest release breaks it; the probes' sections (where the documented release differs, the
disagreements, known issues, the table of every cell) do not appear. One test per section, each reading every
sentence of it; the page here has blocks that break and change between releases. No JAX, no browser."""

from __future__ import annotations

import html
import json
import re

import pytest

from conformance.chapter.cells import block_cell, block_keys
from conformance.chapter.grid import GridRow, chapter_views, without_blocks
from conformance.chapter.model import BlockStatus as S, Outcome
from conformance.chapter.read import chapter_from_text
from conformance.report.html import write_report
from conformance.results.merge import merge_files
from conformance.results.schema import ResultFile, RunHeader
from tests.chromium import needs_chromium, start_chromium

PAGE = chapter_from_text(
    "faq",
    "/docs/faq.md",
    "markdown",
    """\
# JAX Frequently Asked Questions

## Numerics

```python
import jax
print(jax.jit(lambda x: x + 1)(1.))
```

```python
total = jax.numpy.ones(3).sum()
```

```python
assert total == 3
```

## Devices

```python
print(len(jax.devices()))
```
""",
)
IMPORT, TOTAL, ASSERTS, DEVICES = PAGE.blocks
RELEASES = {  # per release, each block's status; the first block prints otherwise where marked
    "0.4.38": (S.RAN, S.RAN, S.RAN, S.RAN),
    "0.8.3": (S.RAN, S.RAISED, S.AFTER_FAILURE, S.RAN),
    "0.12.0.1": (S.RAN, S.RAISED, S.AFTER_FAILURE, S.ASSERT_FAILED),
}
PRINTS_OTHERWISE = {("0.8.3", IMPORT.id), ("0.12.0.1", IMPORT.id), ("0.8.3", TOTAL.id), ("0.12.0.1", TOTAL.id)}


def outcome(version: str, block, status: S) -> Outcome:
    extra = {
        S.RAISED: {"exception": "TypeError", "message": "ones() got an unexpected keyword"},
        S.AFTER_FAILURE: {"exception": "NameError", "name": "total", "because": TOTAL.id},
        S.ASSERT_FAILED: {"assert_line": 1, "assert_text": "assert len(jax.devices()) == 1"},
    }.get(status, {})
    # a block that raised is marked as printing otherwise by the runner too: the report marks only blocks that ran
    printed = (
        {"printed_differs": True, "printed_diff": ("-2.0", "+2.0000002")}
        if (version, block.id) in PRINTS_OTHERWISE
        else {}
    )
    return Outcome(status, stdout="2.0\n", **extra, **printed)


def page_report(tmp_path, releases=RELEASES):
    files = []
    for version, statuses in releases.items():
        keys = block_keys(PAGE, {}, 120.0, f"env-{version}", "runner")
        cells = [
            block_cell(PAGE, b, outcome(version, b, s), version, keys[b.id]) for b, s in zip(PAGE.blocks, statuses)
        ]
        files.append(ResultFile(RunHeader(jax=version, platform="linux-x86_64", finished_at=version), cells))
    out = write_report(
        without_blocks(files),
        tmp_path / "index.html",
        cases=[],
        chapters=chapter_views(merge_files(files), {}),
        generated_at="2026-12-06T00:00:00+00:00",
    )
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return page_report(tmp_path_factory.mktemp("page"))


def shown(markup: str) -> str:
    """The markup as a reader sees it: no hidden part, no script, tags dropped, spaces joined."""
    markup = re.sub(r'<div class="probeonly" hidden>.*?(?=<section class="chapter")', "", markup, flags=re.S)
    markup = re.sub(r"<script.*?</script>|<style.*?</style>", "", markup, flags=re.S)
    return (
        " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())
        .replace(" ,", ",")
        .replace(" .", ".")
        .replace(" :", ":")
        .replace(" ;", ";")
        .replace("( ", "(")
        .replace(" )", ")")
    )


def part(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def test_the_header_names_the_page_and_counts_its_blocks_not_the_suites_chapter(report):
    head = shown(part(report, "<body", '<nav class="toc"'))
    assert head == (
        "Skip to the blocks of the page JAX conformance report The page “JAX Frequently Asked Questions” "
        "(4 blocks) run block by block as written on 3 JAX versions × 1 platform. jax-conformance "
        f"{__import__('conformance').__version__} · result schema 5 · generated 2026-12-06T00:00:00+00:00."
    )
    assert "Debugging Toolkit" not in shown(report) and "cells each" not in shown(report)


def test_the_contents_list_only_the_sections_the_page_has(report):
    contents = shown(part(report, '<nav class="toc"', "</nav>"))
    assert contents == (
        "Overview Where the newest release breaks the page Between adjacent releases The page as "
        "written Where each column comes from"
    )
    for target in re.findall(r'href="#([^"]+)"', part(report, '<nav class="toc"', "</nav>")):
        assert f'id="{target}"' in report


def test_the_overview_says_the_pages_count_on_its_newest_release_and_its_status_changes(report):
    overview = shown(part(report, '<h2 id="page-overview">', '<h2 id="page-breaks">'))
    assert overview == (
        "Overview JAX Frequently Asked Questions: 4 blocks on 3 releases; on the newest, 0.12.0.1: 1 of 4 blocks "
        "run as written (1 assert failed, 1 raised, 1 after an earlier failure; 1 printed differently). 3 status "
        "changes and 1 change of printed output alone between adjacent releases. A block's asserts and exceptions "
        "decide its status; what it prints is "
        "compared with what the page shows after it, and a difference is only a mark (P), on a block that ran as "
        "written."
    )


def test_where_the_newest_release_breaks_the_page_lists_its_blocks_that_do_not_run_as_written(report):
    breaks = shown(part(report, '<h2 id="page-breaks">', '<h2 id="page-steps">'))
    assert breaks == (
        "Where the newest release breaks the page On 0.12.0.1, 2 blocks do not run as written: line 11: total = "
        "jax.numpy.ones(3).sum(): raised (TypeError: ones() got an unexpected keyword) line 21: "
        "print(len(jax.devices())): assert failed (line 1: assert len(jax.devices()) == 1) And 1 block needs a name "
        "that a block above it did not define there (after an earlier failure). And on 0.12.0.1, 1 block that ran "
        "as written prints otherwise than the page shows: line 6: import jax."
    )


def test_where_the_newest_release_breaks_nothing_it_says_so_for_this_page(tmp_path):
    text = page_report(tmp_path, {"0.4.38": (S.RAN,) * 4, "0.12.0.1": (S.RAN,) * 4})
    breaks = shown(part(text, '<h2 id="page-breaks">', '<h2 id="page-steps">'))
    assert breaks == (
        "Where the newest release breaks the page None: on 0.12.0.1 every block of the page that was "
        "run ran as written. On 0.12.0.1, 2 blocks that ran as written print otherwise than the page "
        "shows: line 6: import jax; line 11: total = jax.numpy.ones(3).sum()."
    )
    steps = shown(part(text, '<h2 id="page-steps">', '<div class="probeonly"'))
    assert steps == (
        "Between adjacent releases 0.4.38 → 0.12.0.1: no block changed status, 2 changed only in what "
        "they printed. line 6: import jax: ran as written, its printed output now differs from the "
        "page's line 11: total = jax.numpy.ones(3).sum(): ran as written, its printed output now differs "
        "from the page's"
    )
    assert shown(part(text, '<p id="closing">', "</p>")) == "No block changed its status between adjacent releases."


def test_between_adjacent_releases_each_status_change_and_each_printed_change_alone(report):
    steps = shown(part(report, '<h2 id="page-steps">', '<div class="probeonly"'))
    assert steps == (
        "Between adjacent releases 0.4.38 → 0.8.3: 2 blocks changed status, 1 changed only in what it printed. "
        "line 11: total = jax.numpy.ones(3).sum(): ran as written → raised line 15: assert total == 3: ran as "
        "written → after an earlier failure line 6: import jax: ran as written, its printed output now differs "
        "from the page's 0.8.3 → 0.12.0.1: 1 block changed status. line 21: print(len(jax.devices())): ran as "
        "written → assert failed"
    )


def test_the_page_section_has_no_probe_column_nor_disagreements_and_marks_print_only_where_a_block_ran(report):
    section = part(report, '<section class="chapter"', "</section>")
    said = shown(section)
    assert said.startswith(
        "The page as written The page's own code, run block by block as written (jax-conformance "
        "chapter FILE), in one fresh process per release: later blocks see the names of earlier "
        "ones, as when the page is run from the top."
    )
    assert (
        "JAX Frequently Asked Questions file faq · 4 blocks on 3 releases. A block is named by its line and its "
        "first line of code. 0.4.38: 4 of 4 blocks run as written 0.8.3: 2 of 4 blocks run as written (1 raised, "
        "1 after an earlier failure; 1 printed differently); the first not as written: line 11: total = "
        "jax.numpy.ones(3).sum(), raised (TypeError: ones() got an unexpected keyword) 0.12.0.1: 1 of 4 blocks "
        "run as written (1 assert failed, 1 raised, 1 after an earlier failure; 1 printed differently); the "
        "first not as written: line 11: total = jax.numpy.ones(3).sum(), raised"
    ) in said
    assert "probe" not in said.lower() and "chapter disagree" not in said
    marks = re.findall(r'data-key="([^"|]+)\|([^"]+)">[^<]*<sup>P</sup>', section)
    assert sorted(v for _, v in marks) == ["0.12.0.1", "0.8.3"] and all(TOTAL.id not in a for a, _ in marks)
    data = json.loads(report.split('<script type="application/json" id="chapter-data">', 1)[1].split("</script>")[0])
    (details,) = data.values()
    raised = [d for key, d in details.items() if TOTAL.id in key and d["version"] == "0.8.3"]
    assert [d["status"] for d in raised] == ["raised"] and raised[0]["printed"] == []  # no printed lines either


def test_the_probes_sections_are_not_shown_and_the_closing_line_counts_the_pages_changes(report):
    said = shown(report)
    for probe_only in (
        "Where JAX 0.12.0.1 differs",
        "Deprecated APIs",
        "Known issues",
        "Compare two columns",
        "Every cell",
        "Status changes: 0",
        "No cell changed",
        "conforms",
    ):
        assert probe_only not in said
    assert shown(part(report, '<p id="closing">', "</p>")) == "3 block status changes between adjacent releases."


@needs_chromium
@pytest.mark.parametrize("phone", [False, True])
def test_a_pages_report_works_in_a_browser_and_axe_finds_no_violation(tmp_path, phone):
    """The probes' sections hidden, the page's script still draws the page: a link of "Where the newest release
    breaks the page" opens that block's detail; axe-core finds nothing, on a desktop and on a phone."""
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    from tests.test_browser_questions import axe_source

    source = axe_source()
    if source is None:
        pytest.skip("axe-core is not installed (npm install --prefix .ci axe-core, or set AXE_CORE_JS)")
    page_report(tmp_path)
    browser = start_chromium(
        mobile={"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}} if phone else None
    )
    run = (
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "[v.id, v.impact, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));"
    )
    try:
        browser.get((tmp_path / "index.html").as_uri())
        assert browser.find_element(By.ID, "page-breaks").is_displayed()
        assert not browser.find_element(By.ID, "overview").is_displayed()  # the probes' overview
        link = browser.find_element(By.CSS_SELECTOR, "#page-breaks ~ ul a.to-block")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
        link.click()
        panel = browser.find_element(By.ID, "panel")
        assert panel.is_displayed() and "raised" in panel.text and "TypeError" in panel.text
        assert "probe" not in panel.text.lower()
        browser.execute_script(source)
        browser.set_script_timeout(60)
        assert browser.execute_async_script(run) == []
    finally:
        browser.quit()


def test_a_notebooks_block_is_named_by_its_cell_as_the_blocks_listing_names_it():
    import json

    from conformance.chapter.listing import block_lines
    from conformance.report.chapterpage import block_name

    cells = [
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# A notebook"},
        {"cell_type": "code", "id": "c1", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None},
    ]
    notebook = chapter_from_text(
        "nb", "nb.ipynb", "notebook", json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    (block,) = notebook.blocks
    keys = block_keys(notebook, {}, 60.0, "env", "runner")
    cell = block_cell(notebook, block, Outcome(S.RAN), "0.12.0.1", keys[block.id])
    (view,) = chapter_views(merge_files([ResultFile(RunHeader(jax="0.12.0.1", platform="linux-x86_64"), [cell])]), {})
    assert block_name(view.grid.rows[0]) == f"cell {block.line}: x = 1"
    assert f"cell {block.line}" in block_lines(notebook, {})[1]  # the listing's word and number for it
    assert (
        block_name(GridRow("b", "c", 8, 8, "", "1.2", "x = 1", "0" * 16, {}, form="markdown")) == "§1.2, line 8: x = 1"
    )


def page_markdown(tmp_path, site_url: str = "") -> str:
    """The Markdown page (`report --markdown`) of the page's report: its blocks and no probe."""
    from conformance.report.outputs import OutputSettings

    files = []
    for version, statuses in RELEASES.items():
        keys = block_keys(PAGE, {}, 120.0, f"env-{version}", "runner")
        files.append(
            ResultFile(
                RunHeader(jax=version, platform="linux-x86_64", finished_at=version),
                [
                    block_cell(PAGE, b, outcome(version, b, s), version, keys[b.id])
                    for b, s in zip(PAGE.blocks, statuses)
                ],
            )
        )
    write_report(
        without_blocks(files),
        tmp_path / "again.html",
        cases=[],
        outputs={"markdown": tmp_path / "page.md"},
        chapters=chapter_views(merge_files(files), {}),
        generated_at="2026-12-06T00:00:00+00:00",
        settings=OutputSettings(site_url=site_url),
    )
    return (tmp_path / "page.md").read_text(encoding="utf-8")


def test_the_markdown_of_a_page_says_what_the_page_holds_and_nothing_of_probes(tmp_path):
    text = page_markdown(tmp_path)
    version = __import__("conformance").__version__
    paragraphs = text.split("\n\n")
    assert paragraphs[:3] == [
        "# JAX conformance report",
        "The page “JAX Frequently Asked Questions” (4 blocks) run block by block as written on 3 JAX releases (0.4.38 "
        "to 0.12.0.1) on linux-x86_64. 3 block status changes between adjacent releases. Generated "
        f"2026-12-06T00:00:00+00:00 by jax-conformance {version}.",
        "**[Open the interactive report](index.html)** for each block's status on each release, what it raised and "
        "what it printed against the page. The words of the tables are explained in the [legend](#legend) at the "
        "end. The link is relative: it works beside `index.html` only, and pasted elsewhere (a pull request, a CI "
        "summary) it leads nowhere; `report --site-url URL` makes it absolute.",
    ]
    # the probes' sections are not there: the page, then the legend of the words its counts use
    assert re.findall(r"^## .*", text, flags=re.M) == ["## The page as written", "## Legend"]
    section = text.split("## The page as written")[1].split("\n## ")[0]
    assert section.split("\n\n")[1:3] == [
        "The page's own code, run block by block as written on each release.",
        "**JAX Frequently Asked Questions** (`faq`, 4 blocks):",
    ]
    assert (
        "| 0.12.0.1 | 1 of 4 blocks run as written (1 assert failed, 1 raised, 1 after an earlier failure; 1 "
        "printed differently) | the same |" in section
    )
    legend = text.split("## Legend")[1]
    for word in ("assert failed", "raised", "after an earlier failure", "printed differently"):
        assert f"\n| {word} | " in legend
    for wrong in ("probe", "chapter", "cell", "documented release", "conforms", "Debugging Toolkit"):
        assert wrong.lower() not in text.lower(), wrong


def test_the_markdown_of_a_page_with_a_site_address_says_no_more_of_its_link(tmp_path):
    head = page_markdown(tmp_path, "https://example.org/r/").split("\n\n")[2]
    assert head.endswith("The words of the tables are explained in the [legend](#legend) at the end. ")
    assert "](https://example.org/r/index.html)" in head


def test_beside_the_suites_chapter_and_its_probes_a_page_says_nothing_of_probes(tmp_path):
    from conformance.core.status import Status
    from tests.test_chapter_cells import cells_for, probe

    files = []
    for version, statuses in RELEASES.items():
        keys = block_keys(PAGE, {}, 120.0, f"env-{version}", "runner")
        page_cells = [
            block_cell(PAGE, b, outcome(version, b, s), version, keys[b.id]) for b, s in zip(PAGE.blocks, statuses)
        ]
        seed = cells_for(version, S.RAN, S.RAN, S.RAN, S.RAN).values()
        files.append(
            ResultFile(
                RunHeader(jax=version, platform="linux-x86_64", finished_at=version),
                [*page_cells, *seed, probe("numerics.a", "§3.1", Status.CONFORMS)],
            )
        )
    text = write_report(
        without_blocks(files),
        tmp_path / "index.html",
        cases=[],
        chapters=chapter_views(merge_files(files), {"numerics.x": "3.1"}, documented="000_seedlike"),
        generated_at="2026-12-06T00:00:00+00:00",
    ).read_text(encoding="utf-8")
    assert 'id="chapter-0-disagree"' in text and 'id="chapter-1-disagree"' not in text  # the seed chapter first
    page = part(text, '<h3 id="chapter-1">', '<script type="application/json" id="chapter-data">')
    assert "probe" not in shown(page).lower() and 'class="chprobes"' not in page
    overview = shown(part(text, '<h2 id="overview">', '<h2 id="discrepancies">'))
    assert overview.count("probe and chapter disagree in") == 1


def test_adjacent_releases_where_nothing_changed_are_named_together(tmp_path):
    same = (S.RAN, S.RAISED, S.AFTER_FAILURE, S.RAN)
    text = page_report(tmp_path, {"0.4.38": (S.RAN,) * 4, "0.8.3": same, "0.12.0.1": same})
    steps = shown(part(text, '<h2 id="page-steps">', '<div class="probeonly"'))
    assert steps.startswith(
        "Between adjacent releases 0.4.38 → 0.8.3: 2 blocks changed status, 1 changed only in what it printed."
    )
    assert steps.endswith("No block changed status or what it printed in 0.8.3 → 0.12.0.1.")
    assert "0.8.3 → 0.12.0.1:" not in steps
