"""Issue 39: finding one's way in the page, on a desktop (1400x900) and a 390x844 phone: the contents at the top,
links from every list to its cell, the grid's keys, a deep link that scrolls to and marks its cell, the text search
for a release and for "known issue", an empty result in words, the phone's filter box and its one scroll box at a
time, and the table drawn in its visible part when it is large (`tests.synthetic_report.write_large`).

Timings are measured by `benchmarks/report_scale.py --browser`, never here. Needs what
`tests/test_browser_questions.py` needs (Chromium, chromedriver, axe-core), and skips or fails as it does.
"""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from tests import synthetic_report

# Before selenium's imports: it skips this module too where Chromium or selenium is missing. The `browser` and `page`
# fixtures are tests/conftest.py's.
from tests.test_browser_questions import axe_source, fresh, panel, shown_rows
from selenium.webdriver.common.by import By  # noqa: E402 - after the skip in test_browser_questions
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> str:
    return synthetic_report.write_large(tmp_path_factory.mktemp("large") / "index.html").as_uri()


def rect(driver, element) -> dict:
    return driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};",
        element,
    )


def in_view(driver, element) -> bool:
    """Whether `element` lies inside the viewport, and not under the panel when it is open."""
    box = rect(driver, element)
    width, height = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    if not (box["left"] >= -1 and box["right"] <= width + 1 and box["top"] >= -1 and box["bottom"] <= height + 1):
        return False
    sheet = driver.find_element(By.ID, "panel")
    if not sheet.is_displayed():
        return True
    over = rect(driver, sheet)
    return box["right"] <= over["left"] + 1 or box["bottom"] <= over["top"] + 1


def column_of(driver, td) -> str:
    """The column key of a drawn cell (its header's data-key)."""
    return driver.execute_script(
        "return document.querySelector(`thead th.leaf[data-col='${arguments[0].dataset.c}']`).dataset.key", td
    )


def focused_cell(driver) -> tuple[str, str]:
    """(row id, column key) of the focused cell."""
    td = driver.switch_to.active_element
    assert td.tag_name == "td", td.tag_name
    return td.find_element(By.XPATH, "..").get_attribute("data-text").split()[0], column_of(driver, td)


def marked(driver) -> tuple[str, str]:
    """(row id, column key) of the one marked cell."""
    [td] = driver.find_elements(By.CSS_SELECTOR, "#m td.marked")
    assert td.get_attribute("aria-current") == "true"
    return td.find_element(By.XPATH, "..").get_attribute("data-text").split()[0], column_of(driver, td)


def typed(driver, text: str) -> None:
    """`text` in the text filter, typed over what it held (Selenium's clear() fires no input event)."""
    box = driver.find_element(By.ID, "f-text")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)
    if text:
        box.send_keys(text)


# ---------------------------------------------------------------- contents and links


def test_the_contents_show_at_the_top_and_lead_to_the_table(browser, page):
    fresh(browser, page)
    nav = browser.find_element(By.CSS_SELECTOR, "nav.toc")
    assert nav.is_displayed() and in_view(browser, nav)  # without any keyboard focus
    targets = [unquote(a.get_attribute("href").split("#")[1]) for a in nav.find_elements(By.TAG_NAME, "a")]
    for needed in ("overview", "discrepancies", "changes", "known-issues", "steps", "table", "sources"):
        assert needed in targets
    assert all(browser.find_elements(By.ID, target) for target in targets)
    before = browser.current_url
    nav.find_element(By.CSS_SELECTOR, "a[href='#table']").click()
    heading = browser.find_element(By.ID, "table")
    assert in_view(browser, heading) and browser.switch_to.active_element == heading
    assert in_view(browser, browser.find_element(By.ID, "f-text"))
    assert browser.current_url == before  # the URL keeps the view's state, not "#table"


@pytest.mark.parametrize(
    "section, row, version",
    [
        ("known-issues", "demo.vmap_miss[vmap]", "0.12.0.1"),  # a known issue: its cell in the newest column
        ("discrepancies", "demo.regressed", "0.12.0.1"),
        ("steps", "demo.old_message", "0.7.2"),  # the status change 0.4.38 -> 0.7.2
        ("closing", "demo.regressed", "0.12.0.1"),  # the unexplained change, at the foot of the page
    ],
)
def test_a_row_name_in_a_list_leads_to_its_cell_in_the_table(browser, page, section, row, version):
    fresh(browser, page + "#q=stable")  # a filter that hides the row: the link shows it anyway
    where = browser.find_element(By.ID, section)
    scope = where if section in ("closing", "discrepancies") else where.find_element(By.XPATH, "following::ul[1]")
    if section == "discrepancies":
        scope = where.find_element(By.XPATH, "following-sibling::div[@class='disc'][1]")
    link = next(a for a in scope.find_elements(By.CSS_SELECTOR, "a.to-cell") if a.text == row)
    assert f"at={version}" in unquote(link.get_attribute("href"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    assert panel(browser).find_element(By.TAG_NAME, "h2").text == f"{row} · jax {version}"
    assert marked(browser) == (row.lower(), version)
    assert in_view(browser, browser.find_element(By.CSS_SELECTOR, "#m td.marked"))
    assert f"cell={row}" in unquote(browser.current_url)


def test_a_count_of_the_overview_leads_to_its_rows(browser, page):
    fresh(browser, page)
    link = browser.find_element(By.CSS_SELECTOR, "#overview + .scrollx a.to-rows[href*='status=differs']")
    assert link.text == "2" and "col=0.4.38" in link.get_attribute("href")
    link.click()
    answer = browser.find_element(By.ID, "answer")
    assert answer.is_displayed() and "2 rows with the status “differs” in jax 0.4.38" in answer.text
    assert in_view(browser, answer.find_element(By.TAG_NAME, "h3"))
    assert shown_rows(browser) == ["demo.vmap_miss[vmap]", "demo.old_message"]


# ---------------------------------------------------------------- a deep link


def test_a_deep_link_scrolls_to_and_marks_its_cell(browser, page):
    fresh(browser, page + "#cell=demo.wording&at=0.4.38")
    panel(browser)
    assert marked(browser) == ("demo.wording", "0.4.38")
    td = browser.find_element(By.CSS_SELECTOR, "#m td.marked")
    assert in_view(browser, td), (rect(browser, td), browser.device)
    td.send_keys(Keys.ESCAPE) if browser.device == "desktop" else browser.find_element(By.ID, "panel-close").click()
    assert not browser.find_elements(By.CSS_SELECTOR, "#m td.marked")  # the mark goes with the panel
    if browser.device == "desktop":
        assert browser.switch_to.active_element == td  # focus returns to the cell


# ---------------------------------------------------------------- keys


def test_home_end_and_page_keys_move_in_the_grid_and_enter_in_the_text_field_reaches_it(browser, page):
    if browser.device != "desktop":
        pytest.skip("a keyboard path; the phone has none")
    fresh(browser, page)
    typed(browser, "demo.vmap")
    browser.find_element(By.ID, "f-text").send_keys(Keys.ENTER)
    assert focused_cell(browser) == ("demo.vmap_miss[with]", "0.4.38")  # the first matching cell
    typed(browser, "")
    browser.switch_to.active_element.send_keys(Keys.ENTER)  # an empty text: to the table's first cell
    start = focused_cell(browser)
    assert start == ("demo.vmap_miss[with]", "0.4.38")
    cell = browser.switch_to.active_element
    cell.send_keys(Keys.END)
    assert focused_cell(browser) == ("demo.vmap_miss[with]", "0.12.0.1")
    browser.switch_to.active_element.send_keys(Keys.HOME)
    assert focused_cell(browser) == start
    browser.switch_to.active_element.send_keys(Keys.CONTROL, Keys.END)
    assert focused_cell(browser) == ("demo.regressed", "0.12.0.1")
    browser.switch_to.active_element.send_keys(Keys.CONTROL, Keys.HOME)
    assert focused_cell(browser) == start
    browser.switch_to.active_element.send_keys(Keys.PAGE_DOWN)
    down = focused_cell(browser)
    assert down[1] == "0.4.38" and shown_rows(browser).index(down[0]) >= 1
    browser.switch_to.active_element.send_keys(Keys.PAGE_UP)
    assert focused_cell(browser) == start
    # One tab stop: the cell moved to; Enter opens it.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#m td.c[tabindex='0']")) == 1
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    assert "demo.vmap_miss[with]" in panel(browser).text


# ---------------------------------------------------------------- the text search


@pytest.mark.parametrize(
    "text, rows",
    [
        ("0.8.0", ["demo.vmap_miss[vmap]", "demo.new_api"]),  # their status changes at 0.8.0
        ("0.7.2", ["demo.old_message", "demo.wording"]),  # a status change, and a printed-output change
        ("0.12", ["demo.regressed"]),  # a series: every release it starts
        ("known issue", ["demo.vmap_miss[vmap]"]),
        ("known issue 0.8.0", ["demo.vmap_miss[vmap]"]),  # every term
    ],
)
def test_the_text_finds_a_release_and_known_issue(browser, page, text, rows):
    fresh(browser, page)
    typed(browser, text)
    assert shown_rows(browser) == rows


def test_an_empty_result_says_so_and_clears(browser, page):
    fresh(browser, page)
    typed(browser, "no such row")
    empty = browser.find_element(By.ID, "f-empty")
    assert empty.is_displayed() and "No row matches" in empty.text and "no such row" in empty.text
    assert shown_rows(browser) == [] and "No row matches" in browser.find_element(By.ID, "f-count").text
    empty.find_element(By.ID, "f-clear").click()
    assert len(shown_rows(browser)) == 7 and not empty.is_displayed()


def test_the_marks_p_and_w_are_drawn(browser, page):
    fresh(browser, page + "#compact=0")
    cell = lambda row, i: browser.find_elements(By.CSS_SELECTOR, f"tr.r[data-text^='{row}'] td.c")[i]  # noqa: E731
    assert cell("demo.wording", 0).text == "conforms P"
    assert cell("demo.regressed", 3).text == "conforms W"


# ---------------------------------------------------------------- the phone


def scroll_boxes_in_view(driver) -> list[str]:
    """The elements that scroll (besides the page) and show in the viewport now."""
    return driver.execute_script("""
        const boxes = [];
        for (const el of document.querySelectorAll('body *')) {
          const s = getComputedStyle(el), r = el.getBoundingClientRect();
          const y = /(auto|scroll)/.test(s.overflowY) && el.scrollHeight > el.clientHeight + 1;
          const x = /(auto|scroll)/.test(s.overflowX) && el.scrollWidth > el.clientWidth + 1;
          if ((x || y) && r.bottom > 0 && r.top < innerHeight && r.width && r.height) boxes.push(el.id || el.className);
        }
        return boxes;""")


@pytest.mark.parametrize(
    "report, question",
    [("page", "col=0.4.38&status=differs"), ("large", ""), ("large", "col=0.6.1%40linux-x86_64&status=differs")],
)
def test_the_phone_filter_box_shows_the_text_field_and_in_column_without_scrolling(browser, request, report, question):
    if browser.device != "phone":
        pytest.skip("the phone's layout")
    fresh(browser, request.getfixturevalue(report) + "#" + question)
    browser.execute_script("document.getElementById('table').scrollIntoView({block: 'start'})")
    filters = browser.find_element(By.ID, "filters")
    inner, outer = browser.execute_script("return [arguments[0].scrollHeight, arguments[0].clientHeight]", filters)
    assert inner <= outer + 1, f"the filter box scrolls: {inner} px of content in {outer} px"
    box = rect(browser, filters)
    for control in ("f-text", "f-col"):
        shown = browser.find_element(By.ID, control)
        assert shown.is_displayed() and in_view(browser, shown)
        place = rect(browser, shown)
        assert box["top"] <= place["top"] and place["bottom"] <= box["bottom"]


def test_the_phone_shows_one_scroll_box_at_a_time(browser, page):
    if browser.device != "phone":
        pytest.skip("the phone's layout")
    fresh(browser, page + "#col=0.4.38&status=differs")  # a column question open: its answer above the table
    for where in (
        "document.body",
        "document.getElementById('table')",
        "document.getElementById('answer')",
        "document.getElementById('wrap')",
    ):
        browser.execute_script(f"{where}.scrollIntoView({{block: 'start'}})")
        boxes = scroll_boxes_in_view(browser)
        assert len(boxes) <= 1, (where, boxes)


# ---------------------------------------------------------------- a large table: its visible part drawn


def test_a_large_table_draws_its_visible_part_and_the_rest_on_scrolling(browser, large):
    if browser.device != "desktop":
        pytest.skip("the same drawing on the phone")
    fresh(browser, large + "#compact=0")
    drawn = browser.find_elements(By.CSS_SELECTOR, "#m td.c")
    assert 0 < len(browser.find_elements(By.CSS_SELECTOR, "tr.r")) < 60 and len(drawn) < 600
    assert browser.find_element(By.ID, "f-count").text == "150 of 150 rows shown"
    browser.execute_script(
        "document.getElementById('tablearea').scrollIntoView();"
        "const w = document.getElementById('wrap'); w.scrollTop = w.scrollHeight;"
        "w.scrollLeft = w.scrollWidth;"
    )
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.r[data-text^='big.case149']"))
    last = browser.find_elements(By.CSS_SELECTOR, "tr.r[data-text^='big.case149'] td.c")[-1]
    assert column_of(browser, last) == "0.9.1@linux-x86_64" and in_view(browser, last)
    typed(browser, "0.6.1")  # rows whose status changes at 0.6.1: every 7th
    assert shown_rows(browser)[:3] == ["big.case000", "big.case007", "big.case014"]
    assert browser.find_element(By.ID, "f-count").text == "22 of 150 rows shown"


def test_a_large_table_keeps_a_deep_link_and_the_keys(browser, large):
    if browser.device != "desktop":
        pytest.skip("the same drawing on the phone")
    fresh(browser, large + "#compact=0&cell=big.case140&at=0.8.1%40darwin-arm64")
    panel(browser)
    assert marked(browser) == ("big.case140", "0.8.1@darwin-arm64")
    assert in_view(browser, browser.find_element(By.CSS_SELECTOR, "#m td.marked"))
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert focused_cell(browser) == ("big.case140", "0.8.1@darwin-arm64")
    browser.switch_to.active_element.send_keys(Keys.CONTROL, Keys.END)
    assert focused_cell(browser) == ("big.case149", "0.9.1@linux-x86_64")
    assert in_view(browser, browser.switch_to.active_element)
    browser.switch_to.active_element.send_keys(Keys.CONTROL, Keys.HOME)
    assert focused_cell(browser) == ("big.case000", "0.4.0@darwin-arm64")
    browser.switch_to.active_element.send_keys(Keys.PAGE_DOWN)
    row = focused_cell(browser)[0]
    assert int(row[-3:]) >= 3 and in_view(browser, browser.switch_to.active_element)


def test_axe_finds_no_violation_in_a_large_table_an_answer_and_an_empty_result(browser, large, page):
    source = axe_source()
    if source is None:
        pytest.skip("axe-core is not installed (npm install --prefix .ci axe-core, or set AXE_CORE_JS)")
    run = (
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "[v.id, v.impact, v.help, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));"
    )
    browser.set_script_timeout(120)
    found = {}
    for name, url in (
        ("large", large + "#cell=big.case070&at=0.7.0%40linux-x86_64"),
        ("answer", page + "#col=0.4.38&status=differs"),
        ("empty", page + "#q=no+such+row"),
    ):
        fresh(browser, url)
        browser.execute_script(source)
        found[name] = browser.execute_async_script(run)
    assert found == {"large": [], "answer": [], "empty": []}
