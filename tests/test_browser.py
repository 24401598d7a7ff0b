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
from tests.test_report import CASES, GOLDEN

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
VERSIONS = ["0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1"]

if not (CHROMIUM and DRIVER):
    if os.environ.get("CI"):
        raise RuntimeError("chromium and chromedriver are needed in CI: apt-get install chromium chromium-driver")
    pytest.skip("chromium or chromedriver is not installed (apt-get install chromium chromium-driver)",
                allow_module_level=True)

webdriver = pytest.importorskip("selenium.webdriver")
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
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()


def shown_rows(driver) -> list[str]:
    return [tr.get_attribute("data-text").split()[0] for tr in driver.find_elements(By.CSS_SELECTOR, "tr.r")
            if tr.is_displayed()]


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
    assert set(shown_rows(browser)) == {"demo.changed[new]", "demo.known_bug", "demo.segfault", "demo.escaping",
                                        "demo.raising"}
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
    assert "Observation against expectation" in text and "jax-conformance run --jax 0.12.0.1 -k 'demo.changed[new]'" in text

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
