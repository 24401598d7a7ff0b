"""The report in a real browser: headless Chromium through selenium, filters, a cell detail, a case detail.

Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them). Outside CI the test is
skipped, with the reason, when they are missing; in CI (CI=true) their absence is a failure.
Set JAX_CONFORMANCE_SCREENSHOT=PATH to keep the screenshot.
"""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path

import pytest

from conformance.report.html import write_report
from conformance.results.load import load_results
from tests.chromium import require_chromium, start_chromium
from tests.test_report import CASES, GOLDEN

VERSIONS = ["0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1"]

require_chromium()

pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402


def nine_versions(tmp_path: Path) -> Path:
    """A report over nine versions (the golden files, relabelled), like the default matrix."""
    old, new = sorted(load_results(GOLDEN), key=lambda f: f.header.jax != "0.4.38")
    files = []
    for i, version in enumerate(VERSIONS):
        made = copy.deepcopy(old if i < 5 else new)
        made.header.jax = version
        made.header.finished_at = f"2026-11-29T00:00:0{i}+00:00"
        made.source = f"{version}-linux-x86_64.json"
        files.append(made)
    return write_report(files, tmp_path / "index.html", cases=CASES, generated_at="2026-11-29T00:00:00+00:00")


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium(1280, 900)
    yield driver
    driver.quit()


def shown_rows(driver) -> list[str]:
    return [
        tr.get_attribute("data-text").split()[0]
        for tr in driver.find_elements(By.CSS_SELECTOR, "tr.r")
        if tr.is_displayed()
    ]


def test_report_filters_and_details_work_in_chromium(browser, tmp_path):
    page = nine_versions(tmp_path)
    browser.get(page.as_uri())
    assert browser.find_element(By.ID, "overview").is_displayed()
    everything = shown_rows(browser)
    assert "demo.segfault" in everything and len(everything) == 8

    # Nine version columns fit side by side at 1280 px.
    heads = browser.find_elements(By.CSS_SELECTOR, "thead tr.v th[data-cols]")
    assert len(heads) == 9
    assert heads[-1].rect["x"] + heads[-1].rect["width"] <= browser.execute_script("return window.innerWidth")

    # Status filter: without conforms and not run, only rows with another status remain.
    for status in ("conforms", "not run"):
        browser.find_element(By.CSS_SELECTOR, f"input[name=st][value='{status}']").click()
    assert set(shown_rows(browser)) == {
        "demo.changed[new]",
        "demo.known_bug",
        "demo.segfault",
        "demo.escaping",
        "demo.raising",
    }
    for status in ("conforms", "not run"):
        browser.find_element(By.CSS_SELECTOR, f"input[name=st][value='{status}']").click()

    # Free text over ids, row IDs and claims.
    browser.find_element(By.ID, "f-text").send_keys("row.demo.known_bug")
    assert shown_rows(browser) == ["demo.known_bug"]
    browser.find_element(By.ID, "f-text").clear()
    browser.find_element(By.ID, "f-text").send_keys(" ")

    # Only rows that change across the columns shown.
    browser.find_element(By.ID, "f-changes").click()
    assert "demo.conforming" not in shown_rows(browser) and "demo.changed[new]" in shown_rows(browser)
    browser.find_element(By.ID, "f-changes").click()

    # A cell detail: the field-level diff and how to reproduce it anywhere.
    row = browser.find_element(By.CSS_SELECTOR, "tr.r[data-text^='demo.changed[new]']")
    row.find_elements(By.CSS_SELECTOR, "td.c")[-1].click()
    panel = browser.find_element(By.ID, "panel")
    assert panel.is_displayed()
    text = panel.text
    assert "Observation against expectation" in text
    assert "jax-conformance run --jax 0.12.0.1 -k 'demo.changed[new]'" in text

    # The case detail with a self-contained script.
    panel.find_element(By.CSS_SELECTOR, "[data-casedetail]").click()
    script = browser.find_element(By.ID, "script").text
    assert "pip install jax==0.12.0.1 jaxlib==0.12.0.1" in script and "class Observation" in script
    shot = tmp_path / "report.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("JAX_CONFORMANCE_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_sections_collapse(browser, tmp_path):
    browser.get(nine_versions(tmp_path).as_uri())
    toggle = browser.find_element(By.CSS_SELECTOR, "[data-toggle='0']")
    toggle.click()
    assert "demo.known_bug" not in shown_rows(browser)
    toggle.click()
    assert "demo.known_bug" in shown_rows(browser)


def test_phone_width_keeps_the_first_column_and_scrolls(browser, tmp_path):
    browser.set_window_size(390, 800)
    try:
        browser.get(nine_versions(tmp_path).as_uri())
        first = browser.find_element(By.CSS_SELECTOR, "tr.r th.k")
        assert first.is_displayed() and first.rect["width"] < 200
    finally:
        browser.set_window_size(1280, 900)


ALL_RELEASES = [
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
]


def every_release(tmp_path: Path) -> Path:
    """A report over the 27 releases of the `all` matrix (the golden files, relabelled; jax 0.5.2 ran with jaxlib
    0.5.1, as on the package index)."""
    old, new = sorted(load_results(GOLDEN), key=lambda f: f.header.jax != "0.4.38")
    files = []
    for i, version in enumerate(ALL_RELEASES):
        made = copy.deepcopy(old if i < 12 else new)
        made.header.jax = version
        made.header.jaxlib = "0.5.1" if version == "0.5.2" else version
        made.header.finished_at = f"2026-11-29T00:00:{i:02d}+00:00"
        made.source = f"{version}-linux-x86_64.json"
        files.append(made)
    return write_report(files, tmp_path / "all.html", cases=CASES, generated_at="2026-11-29T00:00:00+00:00")


def shown_columns(driver) -> list[str]:
    return [
        th.text.split("\n")[0]
        for th in driver.find_elements(By.CSS_SELECTOR, "thead tr.v th[data-cols]")
        if th.is_displayed()
    ]


def test_the_compact_view_shows_27_releases_at_1400_px_collapses_a_series_and_keeps_a_keyboard_path(browser, tmp_path):
    browser.set_window_size(1400, 900)
    try:
        browser.get(every_release(tmp_path).as_uri())
        assert "view-compact" in browser.find_element(By.TAG_NAME, "body").get_attribute("class")
        # Every version column visible at once, without horizontal scrolling.
        heads = browser.find_elements(By.CSS_SELECTOR, "thead tr.v th[data-cols]")
        assert len(heads) == 27 and all(th.is_displayed() for th in heads)
        wrap = browser.find_element(By.CSS_SELECTOR, ".wrap")
        assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", wrap)
        assert heads[-1].rect["x"] + heads[-1].rect["width"] <= 1400
        assert "jaxlib 0.5.1" in heads[3].get_attribute("title")
        # A cell is a colour and a glyph; its words show on hover and on focus.
        from selenium.webdriver.common.action_chains import ActionChains

        cell = browser.find_element(By.CSS_SELECTOR, "tr.r[data-text^='demo.known_bug'] td.c")
        glyph = browser.execute_script("return getComputedStyle(arguments[0], '::before').content", cell)
        assert glyph == '"●"' and cell.rect["width"] < 30
        ActionChains(browser).move_to_element(cell).perform()
        tip = browser.find_element(By.ID, "tip")
        assert tip.is_displayed() and tip.text == "bug still present"
        # Collapse the 0.8 series to its newest patch, then every series, then back.
        browser.find_element(By.CSS_SELECTOR, "[data-collapse='0.8']").click()
        shown = shown_columns(browser)
        assert "0.8.3" in shown and not {"0.8.0", "0.8.1", "0.8.2"} & set(shown) and len(shown) == 24
        row_cells = cell.find_element(By.XPATH, "..").find_elements(By.CSS_SELECTOR, "td.c")
        assert [td.is_displayed() for td in row_cells].count(True) == 24  # the body follows its header
        browser.find_element(By.ID, "v-newest").click()
        assert shown_columns(browser) == [
            "0.4.38",
            "0.5.3",
            "0.6.2",
            "0.7.2",
            "0.8.3",
            "0.9.2",
            "0.10.2",
            "0.11.2",
            "0.12.0.1",
        ]
        browser.find_element(By.ID, "v-newest").click()
        assert len(shown_columns(browser)) == 27
        # The keyboard path to a cell: Tab into the table, arrows to move, Enter opens the panel, Escape closes it.
        from selenium.webdriver.common.keys import Keys

        body = browser.find_element(By.TAG_NAME, "body")
        for _ in range(80):
            body.send_keys(
                Keys.TAB
            ) if browser.switch_to.active_element.tag_name == "body" else browser.switch_to.active_element.send_keys(
                Keys.TAB
            )
            if browser.switch_to.active_element.tag_name == "td":
                break
        first = browser.switch_to.active_element
        assert first.tag_name == "td"
        first.send_keys(Keys.ARROW_RIGHT)
        second = browser.switch_to.active_element
        column = lambda td: int(td.get_attribute("cellIndex"))  # noqa: E731 - a cell's column is its place in the row
        assert column(second) == column(first) + 1
        second.send_keys(Keys.ARROW_DOWN)
        below = browser.switch_to.active_element
        assert column(below) == column(second) and below != second
        below.send_keys(Keys.ENTER)
        panel = browser.find_element(By.ID, "panel")
        assert panel.is_displayed() and "jax-conformance run --jax" in panel.text
        below.send_keys(Keys.ESCAPE)
        assert not panel.is_displayed()
        # The detailed view is one toggle away.
        browser.find_element(By.ID, "v-compact").click()
        assert cell.text.strip() == "bug still present" and cell.rect["width"] > 80
        keep = os.environ.get("JAX_CONFORMANCE_SCREENSHOT")
        if keep:
            browser.find_element(By.ID, "v-compact").click()
            browser.save_screenshot(keep.replace(".png", "-compact.png"))
    finally:
        browser.set_window_size(1280, 900)
