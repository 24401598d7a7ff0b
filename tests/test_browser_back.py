"""Issue 47: a column asked about is the column shown, and Back returns the reader to their place. Every link of
"rows with the status differs in jax 0.4.38" opens that column's cell; Back from a list's link to a cell puts the
page where the reader was (it jumped 2,952 → 6,518 px); on a phone the compact view's row names stay
distinguishable (cut in the middle, never into look-alikes). Uses `tests.synthetic_report`."""

from __future__ import annotations

import pytest

from tests import synthetic_report
from tests.chromium import require_chromium, start_chromium

require_chromium()
pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

PHONE = {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}}


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    return synthetic_report.write(tmp_path_factory.mktemp("back") / "index.html").as_uri()


@pytest.fixture(scope="module", params=["desktop", "phone"])
def browser(request):
    driver = start_chromium(1400, 900, mobile=PHONE if request.param == "phone" else None)
    yield driver
    driver.quit()


def test_every_link_of_a_columns_answer_opens_that_column(browser, page):
    browser.get("about:blank")
    browser.get(page + "#col=0.4.38&status=differs")
    buttons = browser.find_elements(By.CSS_SELECTOR, "#answer button[data-open]")
    assert buttons
    for k in range(len(buttons)):
        button = browser.find_elements(By.CSS_SELECTOR, "#answer button[data-open]")[k]
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        row = button.text
        button.click()
        assert browser.find_element(By.CSS_SELECTOR, "#panel h2").text == f"{row} · jax 0.4.38"
        browser.find_element(By.ID, "panel-close").click()


@pytest.mark.parametrize("link", ["#known-issues + ul a.to-cell", "#steps ~ details a.to-cell"])
def test_back_from_a_lists_link_returns_to_the_readers_place(browser, page, link):
    browser.get("about:blank")
    browser.get(page)
    found = browser.find_elements(By.CSS_SELECTOR, link)[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", found)
    before = browser.execute_script("return window.scrollY")
    browser.execute_script("arguments[0].click()", found)
    assert browser.find_element(By.ID, "panel").is_displayed()
    moved = browser.execute_script("return window.scrollY")
    browser.back()
    assert not browser.find_element(By.ID, "panel").is_displayed()
    back = browser.execute_script("return window.scrollY")
    assert abs(back - before) <= 2, (before, moved, back)
    assert not browser.find_element(By.ID, "tip").is_displayed()


def test_compact_row_names_on_a_phone_are_cut_in_the_middle(tmp_path):
    from selenium.webdriver.common.by import By as by

    driver = start_chromium(mobile=PHONE)
    try:
        from conformance.core.case import load_cases
        from conformance.report.html import write_report
        from tests.published_report import published_files

        page = write_report(
            published_files(), tmp_path / "published.html", cases=load_cases(), generated_at="2026-12-03T00:00:00+00:00"
        )  # the real case ids
        driver.get(page.as_uri() + "#compact=1")
        names = [th for th in driver.find_elements(by.CSS_SELECTOR, "tr.r th.k .cid, tr.case th.k .cid")]
        ends = [th.find_elements(by.CSS_SELECTOR, ".ce") for th in names]
        long = [(th, end[0]) for th, end in zip(names, ends) if end]
        assert long, "no name long enough to be cut"
        for th, end in long:
            # the end shows whole, inside its cell; the accessible text is the whole name
            box = driver.execute_script(
                "const e = arguments[0].getBoundingClientRect(), c = arguments[1]"
                ".closest('th').getBoundingClientRect(); return [e.right, c.right]",
                end,
                th,
            )
            assert box[0] <= box[1] + 1 and th.get_attribute("textContent").endswith(end.text)
    finally:
        driver.quit()
