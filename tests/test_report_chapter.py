"""Issue 37 in the report: "The chapter as written" (a block × release grid, the summary per release, since which
release each block runs, its links to the probe rows of its subsection and back, the "probe and chapter disagree"
list with its count on the overview), drawn from block cells stored beside the probes' cells."""

from __future__ import annotations

import html
import json
import re

import pytest

from conformance.chapter.model import BlockStatus
from conformance.core.status import Status
from conformance.report.html import write_report
from tests.chromium import needs_chromium, start_chromium
from tests.test_chapter_cells import ASSERTS, FIRST, cells_for, probe, result_file


@pytest.fixture
def page(tmp_path):
    from conformance.chapter.grid import chapter_views
    from conformance.results.merge import merge_files

    old = cells_for("0.4.38", BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAN, BlockStatus.RAN)
    new = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAISED, BlockStatus.AFTER_FAILURE)
    files = [
        result_file("0.4.38", [*old.values(), probe("numerics.a", "§3.1", Status.CONFORMS)]),
        result_file("0.12.0.1", [*new.values(), probe("numerics.a", "§3.1", Status.CONFORMS)]),
    ]
    from conformance.chapter.grid import without_blocks

    out = write_report(
        without_blocks(files),
        tmp_path / "index.html",
        cases=[],
        chapters=chapter_views(merge_files(files), {"numerics.x": "3.1"}, documented="000_seedlike"),
        generated_at="2026-12-02T00:00:00+00:00",
    )
    return out


def test_the_section_draws_the_grid_summaries_since_links_and_the_disagree_count(page):
    text = page.read_text(encoding="utf-8")
    assert '<a href="#chapter">The chapter as written</a>' in text
    section = text[text.index('<section class="chapter"') : text.index("</section>", text.index('id="chapter"'))]
    # The chapter's own title (its first heading), counts in words that add up to its blocks (issue 47)
    assert '<h3 id="chapter-0">3.1 NaNs</h3>' in section
    assert "<strong>0.4.38: 3 of 4 blocks run as written (1 assert failed; 1 printed differently)</strong>" in section
    assert (
        "<strong>0.12.0.1: 2 of 4 blocks run as written (1 raised, 1 after an earlier failure; 1 printed "
        "differently)</strong>"
    ) in section
    assert section.count('<tr id="chb-') == 4
    first_row = re.search(r'<tr id="chb-[^"]*' + re.escape(FIRST.id) + r'".*?</tr>', section, re.S).group(0)
    assert "≤0.4.38 (every release measured)" in first_row
    assert 'href="#cell=numerics.a&amp;at=0.12.0.1"' in first_row  # the block links to its subsection's probe
    assert "0.4.38: assert failed: line 1: assert old_release is False" in html.unescape(section)
    assert "assert_failed" not in re.sub(r'(class|data-s)="[^"]*"', "", section.split("<script")[0])  # words
    overview = text[text.index('id="overview"') : text.index('id="discrepancies"')]
    assert "probe and chapter disagree in" in overview and "#chapter-0-disagree" in overview
    disagree = section[section.index("Probe and chapter disagree (") :]
    assert re.search(r"Probe and chapter disagree \((\d+)\)", disagree).group(1) == "1"  # ASSERTS on 0.4.38
    (entry,) = re.findall(r"<li>On .*?</li>", disagree.split("</ul>")[0], re.S)
    plain = html.unescape(re.sub(r"<[^>]+>", "", entry))
    # one sentence with both sides, the block named as everywhere else (its section, line and first code line)
    assert plain == (
        "On 0.4.38, §3.1, line 10: assert old_release is False — assert failed (line 1: assert "
        "old_release is False), while every probe of its subsection conforms there: numerics.a conforms "
        "(every fact it asserts holds)."
    )
    assert (
        "#block=" + re.search(r'id="(chb-[^"]*' + re.escape(ASSERTS.id) + ')"', section).group(1) + "&amp;at=0.4.38"
        in entry
    )  # the block's link opens it on the release the sentence is about
    details = json.loads(text.split('<script type="application/json" id="chapter-data">', 1)[1].split("</script>")[0])
    (grid,) = details.values()
    assert any(v["status"] == "raised" and "RuntimeError" in v["detail"] for v in grid.values())
    assert {v["name"] for v in grid.values()} >= {"§3.1, line 10: assert old_release is False"}


def test_each_glyph_is_named_by_its_visible_text_then_its_words(page):
    """axe's label-content-name-mismatch: a glyph's accessible name holds what it shows (✓P), then the words."""
    section = page.read_text(encoding="utf-8").split('<section class="chapter"', 1)[1].split("</section>", 1)[0]
    buttons = re.findall(r'<button type="button" class="chcell"[^>]*>(.*?)</button>', section, re.S)
    assert len(buttons) == 8 and "aria-label" not in section.split("<tbody>", 1)[1]
    for inner in buttons:
        shown = re.sub(r'<span class="vh">.*?</span>', "", inner)
        name = html.unescape(re.sub(r"<[^>]+>", "", inner))
        assert name.startswith(re.sub(r"<[^>]+>", "", shown)) and ": " in name


def test_a_probe_cells_panel_links_back_to_the_chapters_blocks(page):
    text = page.read_text(encoding="utf-8")
    data = json.loads(text.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0])
    (row,) = [r for r in data["rows"] if r["id"] == "numerics.a"]
    anchors = [anchor for anchor, _ in row["bl"]]
    assert len(anchors) == 2 and all(f'<tr id="{a}" ' in text for a in anchors)  # the two blocks of §3.1
    assert FIRST.id in anchors[0] and ASSERTS.id in anchors[1]
    assert [label for _, label in row["bl"]] == [
        "3.1 NaNs, §3.1, line 4: import jax",
        "3.1 NaNs, §3.1, line 10: assert old_release is False",
    ]


@needs_chromium
def test_a_click_on_a_block_shows_what_decided_it_beside_the_grid(page):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser = start_chromium()
    try:
        browser.get(page.as_uri())
        grid = browser.find_element(By.CSS_SELECTOR, "table.chgrid")
        stops = [b for b in grid.find_elements(By.CSS_SELECTOR, "button.chcell") if b.get_attribute("tabindex") == "0"]
        assert len(stops) == 1  # one tab stop per grid (a roving tabindex)
        raised = next(
            b
            for b in browser.find_elements(By.CSS_SELECTOR, "button.chcell")
            if "raised" in b.get_attribute("textContent")
        )
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", raised)
        raised.click()
        panel = browser.find_element(By.ID, "panel")
        assert panel.is_displayed()
        title = panel.find_element(By.TAG_NAME, "h2").text
        assert title.startswith("§3.2, line ") and title.endswith("on 0.12.0.1")
        assert "raised" in panel.text and "RuntimeError: boom" in panel.text and "runs as written" in panel.text
        # the clicked glyph stays on screen, clear of the panel, and is marked
        box = browser.execute_script(
            "const r = arguments[0].getBoundingClientRect(), p = arguments[1]"
            ".getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom, p.left, "
            "innerHeight]",
            raised,
            panel,
        )
        assert box[1] <= box[4] and 0 <= box[2] and box[3] <= box[5]
        assert "chmark" in raised.find_element(By.XPATH, "..").get_attribute("class")
        assert "#block=" in browser.current_url and "at=0.12.0.1" in browser.current_url
        browser.back()  # Back closes the detail and keeps the reader where they were
        assert not panel.is_displayed()
        # arrow keys move the one tab stop
        first = stops[0]
        first.send_keys(Keys.ARROW_RIGHT)
        moved = browser.switch_to.active_element
        assert moved != first and moved.get_attribute("tabindex") == "0" and first.get_attribute("tabindex") == "-1"
    finally:
        browser.quit()


@needs_chromium
def test_choosing_a_release_answers_which_blocks_run_on_it(page):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser = start_chromium(
        390, 844, mobile={"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}}
    )
    try:
        browser.get(page.as_uri())
        Select(browser.find_element(By.CSS_SELECTOR, "select.chrel")).select_by_visible_text("0.4.38")
        answer = browser.find_element(By.ID, "chapter-0-answer")
        assert answer.is_displayed()
        assert "On 0.4.38: 3 ran as written, 1 assert failed (of 4 blocks)" in answer.text
        assert "§3.1, line 10: assert old_release is False: assert failed" in answer.text
        answer.find_element(By.CSS_SELECTOR, "button[data-block]").click()
        assert "on 0.4.38" in browser.find_element(By.CSS_SELECTOR, "#panel h2").text  # the release asked about
        # the probes column folds into the detail on a phone
        assert not browser.find_element(By.CSS_SELECTOR, "table.chgrid td.chprobes").is_displayed()
    finally:
        browser.quit()


def test_several_chapters_the_documented_first_and_a_listed_page_linked_at_its_commit():
    from dataclasses import replace

    from conformance.chapter.grid import chapter_views
    from conformance.report.chapterpage import chapter_pages, source_link
    from conformance.results.merge import merge_files

    seed = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN)
    listed = [
        replace(
            c,
            case=c.case.replace("000_seedlike", "debugging"),
            details={
                **c.details,
                "chapter": "debugging",
                "title": "Debugging runtime values",
                "origin": "jax-ml/jax@8c0c43c0:docs/debugging.md",
            },
        )
        for c in seed.values()
    ]
    runs = merge_files([result_file("0.12.0.1", [*listed, *seed.values()])])
    pages = chapter_pages(chapter_views(runs, {}, documented="000_seedlike"))
    assert [p.chapter for p in pages] == ["000_seedlike", "debugging"]
    assert pages[1].name == "Debugging runtime values"
    assert (
        pages[1].source
        == "https://github.com/jax-ml/jax/blob/8c0c43c0/docs/debugging.md"
        == source_link("jax-ml/jax@8c0c43c0:docs/debugging.md")
    )
    assert source_link("somewhere else") == ""


def test_a_chapters_title_is_its_first_heading():
    from conformance.chapter.headings import chapter_title

    assert (
        chapter_title("text", "\n\nChapter 8: The Debugging Toolkit\n\nIn earlier chapters")
        == "Chapter 8: The Debugging Toolkit"
    )
    assert (
        chapter_title("markdown", "---\ntitle: x\n---\n```\n# not a heading\n```\n# `jax.debug` and you\n")
        == "jax.debug and you"
    )
    notebook = (
        '{"cells": [{"cell_type": "code", "source": "# no"}, {"cell_type": "markdown", "source": ["## Title\\n"]}]}'
    )
    assert chapter_title("notebook", notebook) == "Title"


@needs_chromium
@pytest.mark.parametrize("phone", [False, True])
def test_axe_finds_no_violation_in_the_chapter_section_with_a_detail_open(page, phone):
    """Issue 47: axe found 184 glyph buttons whose visible text was not in their name; the section is checked with
    the release question answered and a block's detail open, on a desktop and on a phone."""
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from tests.test_browser_questions import axe_source

    source = axe_source()
    if source is None:
        pytest.skip("axe-core is not installed (npm install --prefix .ci axe-core, or set AXE_CORE_JS)")
    browser = start_chromium(
        mobile={"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}} if phone else None
    )
    run = (
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "[v.id, v.impact, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));"
    )
    try:
        browser.get(page.as_uri())
        Select(browser.find_element(By.CSS_SELECTOR, "select.chrel")).select_by_visible_text("0.4.38")
        browser.find_element(By.CSS_SELECTOR, "#chapter-0-answer button[data-block]").click()
        assert browser.find_element(By.ID, "panel").is_displayed()
        browser.execute_script(source)
        browser.set_script_timeout(60)
        assert browser.execute_async_script(run) == []
    finally:
        browser.quit()


def test_a_chapter_grid_wider_than_a_phone_scrolls_in_its_box_and_never_widens_the_page(tmp_path):
    """Its glyphs' hidden words (`.vh`, absolutely placed) sat in cells of no positioned box, so they escaped the grid's
    scroll box: the published page (9 releases) was 657 px wide on a 390 px phone, which the browser zoomed out to."""
    pytest.importorskip("selenium.webdriver")
    from conformance.chapter.grid import chapter_views, without_blocks
    from conformance.results.merge import merge_files

    releases = ("0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1")
    files = [
        result_file(
            v,
            [
                *cells_for(v, BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAISED, BlockStatus.RAN).values(),
                probe("numerics.a", "§3.1", Status.CONFORMS),
            ],
        )
        for v in releases
    ]
    out = write_report(
        without_blocks(files),
        tmp_path / "index.html",
        cases=[],
        chapters=chapter_views(merge_files(files), {"numerics.x": "3.1"}, documented="000_seedlike"),
        generated_at="2026-12-02T00:00:00+00:00",
    )
    browser = start_chromium(
        390, 844, mobile={"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}}
    )
    try:
        browser.get(out.as_uri())
        grid, box, page, viewport = browser.execute_script(
            "const w = document.querySelector('.chwrap');"
            "return [w.scrollWidth, w.clientWidth, document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert grid > box  # the grid is wider than the phone: it scrolls inside its box
        assert (page, viewport) == (390, 390)
    finally:
        browser.quit()
