"""Issue 58: the report's section "Downstream test suites" in a browser, at 1400 px and on a 390 px phone: reached
from the page's contents, its table a focusable, labelled scroll box whose status column stays in view while the
arrow keys scroll it, its reproduce commands opened by keyboard, nothing wider than the phone's screen, and axe-core
finding no violation, closed and with every command open, and on a report of suites and no probe.

The report is rendered here from result files written in the test (`tests.synthetic_downstream`, the suite's cells
shaped as `downstream` stores them, beside the synthetic report's probe cells). Needs Chromium, its driver and
axe-core, as `tests/test_browser_questions.py` (a missing one skips outside CI, fails in CI).
"""

from __future__ import annotations

import pytest

from conformance.report.render import render_results
from tests import synthetic_downstream as sd
from tests import synthetic_report as sr
from tests.chromium import require_chromium
from tests.test_browser_questions import fresh
from tests.test_browser_upgrade import axe

require_chromium()

pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    """The synthetic report's releases, each file with its probe cells and the demo suite's tests."""
    folder = tmp_path_factory.mktemp("downstream")
    suite = sd.demo_suite()
    sd.write_files(folder / "results", {v: sr._cells(v) + suite.get(v, []) for v in sr.VERSIONS})
    render_results(folder / "results", folder / "index.html", cases=sr.CASES, releases=sr.VERSIONS)
    return (folder / "index.html").as_uri()


# `browser`: tests/conftest.py's (each of DEVICES)


def test_the_contents_lead_to_the_section_and_its_answer(browser, page):
    fresh(browser, page)
    link = browser.find_element(By.CSS_SELECTOR, "nav.toc a[href='#downstream']")
    link.send_keys(Keys.ENTER)
    assert browser.switch_to.active_element.get_attribute("id") == "downstream"
    section = browser.find_element(By.ID, "downstream")
    assert "Compatibility: clean on 0.8.0; regresses against 0.8.0 from 0.11.2" in section.text
    assert "jax 0.12.0.1: 4 regressed tests against 0.8.0" in section.text


def test_the_table_scrolls_by_keyboard_with_its_status_column_in_view(browser, page):
    fresh(browser, page)
    box = browser.find_element(By.CSS_SELECTOR, "#downstream .dswrap")
    assert box.get_attribute("tabindex") == "0" and box.get_attribute("role") == "region"
    assert box.get_attribute("aria-label") == "demo==1.0: tests per status on each release"
    browser.execute_script("arguments[0].scrollIntoView(); arguments[0].focus(); arguments[0].scrollLeft = 0", box)
    for _ in range(30):
        box.send_keys(Keys.ARROW_RIGHT)
    at = browser.execute_script(
        "const box = arguments[0], b = box.getBoundingClientRect(), last = box.querySelector('thead th:last-child')"
        ".getBoundingClientRect(), name = box.querySelector('tbody th').getBoundingClientRect();"
        "return [box.scrollWidth > box.clientWidth, box.scrollLeft, last.right <= b.right + 1, "
        "Math.abs(name.left - b.left) < 2, document.documentElement.scrollWidth <= window.innerWidth];",
        box,
    )
    overflows, left, last_shown, name_stuck, page_fits = at
    assert last_shown and page_fits  # nothing of the section is wider than the screen
    if overflows:  # on the phone: the keys scrolled it, and the status column stayed
        assert left > 0 and name_stuck


def test_a_reproduce_command_opens_by_keyboard(browser, page):
    fresh(browser, page)
    summary = browser.find_element(By.CSS_SELECTOR, "#downstream details summary")
    browser.execute_script("arguments[0].scrollIntoView()", summary)
    summary.send_keys(Keys.ENTER)
    shown = browser.find_element(By.CSS_SELECTOR, "#downstream details pre")
    assert shown.is_displayed()
    lines = shown.text.splitlines()
    assert "jax-conformance downstream demo==1.0 --jax 0.8.0 --jax 0.11.2 --rerun" in lines
    assert lines[-1] == "../../../bin/python -m pytest demo/_src/a_test.py::test_0"
    right = browser.execute_script("return arguments[0].getBoundingClientRect().right <= window.innerWidth", shown)
    assert right


def test_axe_finds_no_violation_closed_and_with_every_command_open(browser, page):
    found = {}
    fresh(browser, page)
    found["closed"] = axe(browser)
    for details in browser.find_elements(By.CSS_SELECTOR, "#downstream details"):
        browser.execute_script("arguments[0].open = true", details)
    box = browser.find_element(By.CSS_SELECTOR, "#downstream .dswrap")
    browser.execute_script("arguments[0].focus(); arguments[0].scrollLeft = arguments[0].scrollWidth;", box)
    found["open and scrolled"] = axe(browser)
    assert all(v == [] for v in found.values()), found


def test_a_report_of_suites_and_no_probe_is_axe_clean(browser, tmp_path):
    sd.write_files(tmp_path / "results", sd.demo_suite())
    render_results(tmp_path / "results", tmp_path / "index.html", releases=sr.VERSIONS)
    fresh(browser, (tmp_path / "index.html").as_uri())
    assert browser.find_element(By.ID, "downstream").is_displayed()
    assert not browser.find_element(By.ID, "overview").is_displayed()
    assert axe(browser) == []
