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
from tests.test_chapter_cells import ASSERTS, FIRST, RAISES, cells_for, probe, result_file



@pytest.fixture
def page(tmp_path):
    from conformance.chapter.grid import chapter_views
    from conformance.results.merge import merge_files

    old = cells_for("0.4.38", BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAN, BlockStatus.RAN)
    new = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAISED, BlockStatus.AFTER_FAILURE)
    files = [result_file("0.4.38", [*old.values(), probe("numerics.a", "§3.1", Status.CONFORMS)]),
             result_file("0.12.0.1", [*new.values(), probe("numerics.a", "§3.1", Status.CONFORMS)])]
    from conformance.chapter.grid import without_blocks

    out = write_report(without_blocks(files), tmp_path / "index.html", cases=[],
                       chapters=chapter_views(merge_files(files), {"numerics.x": "3.1"}, documented="000_seedlike"),
                       generated_at="2026-12-02T00:00:00+00:00")
    return out


def test_the_section_draws_the_grid_summaries_since_links_and_the_disagree_count(page):
    text = page.read_text(encoding="utf-8")
    assert '<a href="#chapter">The chapter as written</a>' in text
    section = text[text.index('<section class="chapter"'):text.index("</section>", text.index('id="chapter"'))]
    assert "<li>3 of 4 blocks run as written on 0.4.38</li>" in section
    assert "<li>2 of 4 blocks run as written on 0.12.0.1</li>" in section
    assert section.count("<tr id=\"chb-") == 4
    first_row = re.search(r'<tr id="chb-[^"]*' + re.escape(FIRST.id) + r'">.*?</tr>', section, re.S).group(0)
    assert "≤0.4.38 (every release measured)" in first_row
    assert 'href="#cell=numerics.a&amp;at=0.12.0.1"' in first_row  # the block links to its subsection's probe
    assert 'title="0.4.38: assert_failed: line 1: assert old_release is False"' in html.unescape(section) or \
        "0.4.38: assert_failed: line 1: assert old_release is False" in html.unescape(section)
    overview = text[text.index('id="overview"'):text.index('id="discrepancies"')]
    assert "probe and chapter disagree in" in overview and "#chapter-0-disagree" in overview
    disagree = section[section.index("Probe and chapter disagree ("):]
    assert re.search(r"Probe and chapter disagree \((\d+)\)", disagree).group(1) == "1"  # ASSERTS on 0.4.38
    assert ASSERTS.id in disagree.split("</ul>")[0] and RAISES.id not in disagree.split("</ul>")[0]
    details = json.loads(text.split('<script type="application/json" id="chapter-data">', 1)[1].split("</script>")[0])
    (grid,) = details.values()
    assert any(v["status"] == "raised" and "RuntimeError" in v["detail"] for v in grid.values())


def test_a_probe_cells_panel_links_back_to_the_chapters_blocks(page):
    text = page.read_text(encoding="utf-8")
    data = json.loads(text.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0])
    (row,) = [r for r in data["rows"] if r["id"] == "numerics.a"]
    anchors = [anchor for anchor, _ in row["bl"]]
    assert len(anchors) == 2 and all(f'<tr id="{a}">' in text for a in anchors)  # the two blocks of §3.1
    assert FIRST.id in anchors[0] and ASSERTS.id in anchors[1]
    assert all(label.startswith("000_seedlike 3.1 NaNs") for _, label in row["bl"])


@needs_chromium
def test_a_click_on_a_block_shows_what_decided_it(page):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    browser = start_chromium()
    try:
        browser.get(page.as_uri())
        raised = next(b for b in browser.find_elements(By.CSS_SELECTOR, "button.chcell")
                      if "raised" in b.get_attribute("title"))
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", raised)
        raised.click()
        shown = browser.find_element(By.CSS_SELECTOR, ".chout").text
        assert "on 0.12.0.1: raised" in shown and "RuntimeError: boom" in shown
    finally:
        browser.quit()
