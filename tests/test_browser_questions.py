"""Issue 26: the four questions people bring to the report, each answered in at most 3 steps from the top of the
page, at 1400x900 and on a 390x844 phone (mobile emulation); the view's state in the URL; Back and Forward; focus;
and axe-core finding no violation with the panel closed and open, in both views.

Uses the small synthetic report of `tests.synthetic_report` (five versions, seven rows). Needs Debian's
`chromium` and `chromium-driver` and axe-core from npm (`.ci/run` installs them into `.ci/node_modules`, or set
AXE_CORE_JS to an `axe.min.js`); outside CI a missing one skips, with the reason; in CI (CI=true) it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import synthetic_report
from tests.chromium import DEVICES, require_chromium

ROOT = Path(__file__).resolve().parents[1]

require_chromium()

pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


def axe_source() -> str | None:
    """axe-core's `axe.min.js`, from AXE_CORE_JS or an npm install under the checkout."""
    candidates = [
        os.environ.get("AXE_CORE_JS", ""),
        ROOT / ".ci" / "node_modules" / "axe-core" / "axe.min.js",
        ROOT / "node_modules" / "axe-core" / "axe.min.js",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate).read_text(encoding="utf-8")
    return None


class Steps:
    """Counts what a person does (a click, a choice, some typing), so each question can be held to 3 steps."""

    def __init__(self, driver):
        self.driver, self.count = driver, 0

    def click(self, element):
        self.count += 1
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def choose(self, select_id: str, text: str):
        self.count += 1
        Select(self.driver.find_element(By.ID, select_id)).select_by_visible_text(text)

    def type(self, element_id: str, text: str):
        self.count += 1
        self.driver.find_element(By.ID, element_id).send_keys(text)


def fresh(driver, url: str) -> Steps:
    """The page loaded anew (a link, or the top of the page)."""
    driver.get("about:blank")
    driver.get(url)
    return Steps(driver)


def panel(driver):
    found = driver.find_element(By.ID, "panel")
    WebDriverWait(driver, 5).until(lambda d: found.is_displayed())
    return found


def cell(driver, row_id: str, version: str):
    columns = [
        th.get_attribute("title").split()[1] for th in driver.find_elements(By.CSS_SELECTOR, "thead tr.v th[data-cols]")
    ]
    row = driver.find_element(By.CSS_SELECTOR, f"tr.r[data-text^='{row_id.lower()}']")
    return row.find_elements(By.CSS_SELECTOR, "td.c")[columns.index(version)]


def inside_the_viewport(driver, element) -> bool:
    rect = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); "
        "return [r.left, r.right, window.innerWidth, r.top, window.innerHeight]",
        element,
    )
    left, right, width, top, height = rect
    return left >= 0 and right <= width + 1 and 0 <= top < height


def shown_rows(driver) -> list[str]:
    return [
        tr.get_attribute("data-text").split()[0]
        for tr in driver.find_elements(By.CSS_SELECTOR, "tr.r")
        if tr.is_displayed()
    ]


def test_the_page_fits_the_device(browser, page):
    fresh(browser, page)
    # Against the device's own width: a phone's browser zooms out to a page wider than it, which widens innerWidth too.
    device = (DEVICES[browser.device] or {"deviceMetrics": {"width": 1400}})["deviceMetrics"]["width"]
    width, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner <= device, f"the page is {width} px wide in a {inner} px viewport ({browser.device})"
    # At the table, the filters, the column header and the first rows are all in view, none under another.
    browser.execute_script("document.getElementById('table').scrollIntoView({block: 'start'})")
    filters, header, first = (
        browser.find_element(By.CSS_SELECTOR, css) for css in ("#filters", "thead tr.v th[data-cols]", "tr.r td.c")
    )
    bottom = lambda el: el.rect["y"] + el.rect["height"]  # noqa: E731 - page coordinates
    assert bottom(filters) <= header.rect["y"] + 1 and bottom(header) <= first.rect["y"] + 1
    scrolled = browser.execute_script("return window.scrollY")
    assert bottom(first) - scrolled <= browser.execute_script("return window.innerHeight")
    # In the compact view every row is one line; its claim shows on demand.
    fresh(browser, page + "#compact=1")
    heights = [tr.rect["height"] for tr in browser.find_elements(By.CSS_SELECTOR, "tr.r, tr.case")]
    assert heights and max(heights) < 30, heights
    browser.find_element(By.ID, "v-claims").click()
    assert max(tr.rect["height"] for tr in browser.find_elements(By.CSS_SELECTOR, "tr.case")) > 30


def test_did_the_newest_release_fix_the_known_issue(browser, page):
    steps = fresh(browser, page)
    steps.type("f-text", "vmap_miss[vmap]")
    steps.click(cell(browser, "demo.vmap_miss[vmap]", "0.12.0.1"))
    shown = panel(browser)
    assert steps.count <= 3 and inside_the_viewport(browser, shown)
    assert "bug still present" in shown.text and synthetic_report.VMAP_WHY in shown.text


def test_what_changed_between_two_columns(browser, page):
    steps = fresh(browser, page)
    steps.choose("cmp-a", "0.4.38")  # B is the newest column already
    out = browser.find_element(By.ID, "cmp-out")
    assert steps.count <= 3 and out.is_displayed()
    text = out.text
    # Fixes and regressions first, each with its why; the unexplained one says so; printed-only changes folded.
    assert text.index("fixed") < text.index("regressed") < text.index("API added")
    assert synthetic_report.MESSAGE_WHY in text and synthetic_report.API_WHY in text
    assert "demo.regressed" in text and "unexplained" in text
    folded = out.find_element(By.TAG_NAME, "details")
    assert "1 cell whose printed output mark alone differs" in folded.text and not folded.get_attribute("open")
    assert not out.find_element(By.XPATH, ".//details//code[text()='demo.wording']").is_displayed()


def test_which_rows_differ_in_a_column_and_why(browser, page):
    steps = fresh(browser, page)
    steps.click(browser.find_element(By.CSS_SELECTOR, "thead tr.v th[title='jax 0.4.38'] button"))
    answer = browser.find_element(By.ID, "answer")
    assert steps.count <= 3 and answer.is_displayed()
    assert "2 rows with the status “differs” in jax 0.4.38" in answer.text
    assert synthetic_report.VMAP_WHY in answer.text and synthetic_report.MESSAGE_WHY in answer.text
    assert shown_rows(browser) == ["demo.vmap_miss[vmap]", "demo.old_message"]


def test_reproduce_a_cell_opens_the_script_on_its_parameter_and_version(browser, page):
    steps = fresh(browser, page)
    steps.click(cell(browser, "demo.vmap_miss[vmap]", "0.8.0"))
    steps.click(panel(browser).find_element(By.CSS_SELECTOR, "[data-casedetail]"))
    script = browser.find_element(By.ID, "script").get_attribute("textContent")
    assert steps.count <= 3
    assert "pip install jax==0.8.0 jaxlib==0.8.0" in script and 'result = vmap_miss("vmap")' in script
    assert Select(browser.find_element(By.ID, "rp")).first_selected_option.text == "vmap"
    assert inside_the_viewport(browser, panel(browser))


def test_a_nan_observation_is_shown_as_nan(browser, page):
    steps = fresh(browser, page)
    steps.click(cell(browser, "demo.stable", "0.12.0.1"))
    shown = panel(browser).get_attribute("textContent")
    assert '"sample": NaN' in shown and "$float" not in shown


def test_the_url_reproduces_the_view_and_back_forward_restore_it(browser, page):
    steps = fresh(browser, page)
    steps.choose("cmp-a", "0.7.2")
    steps.click(browser.find_element(By.CSS_SELECTOR, "thead tr.v th[title='jax 0.4.38'] button"))
    steps.click(cell(browser, "demo.old_message", "0.4.38"))
    title = panel(browser).find_element(By.TAG_NAME, "h2").text
    link = browser.current_url
    assert "col=0.4.38" in link and "a=0.7.2" in link and "cell=demo.old_message" in link

    fresh(browser, link)  # the link, opened anew, shows the same view
    assert panel(browser).find_element(By.TAG_NAME, "h2").text == title
    assert browser.find_element(By.ID, "f-col").get_attribute("value") == "0"
    assert shown_rows(browser) == ["demo.vmap_miss[vmap]", "demo.old_message"]
    assert "0.7.2 → jax 0.12.0.1" in browser.find_element(By.ID, "cmp-out").text

    steps = fresh(browser, page)  # Back and Forward, within one visit
    steps.click(browser.find_element(By.CSS_SELECTOR, "thead tr.v th[title='jax 0.4.38'] button"))
    steps.click(cell(browser, "demo.old_message", "0.4.38"))
    panel(browser)
    browser.back()  # the panel closes; the column question stays
    WebDriverWait(browser, 5).until(lambda d: not d.find_element(By.ID, "panel").is_displayed())
    assert shown_rows(browser) == ["demo.vmap_miss[vmap]", "demo.old_message"]
    browser.back()  # every row again
    WebDriverWait(browser, 5).until(lambda d: len(shown_rows(d)) == 7)
    assert not browser.find_element(By.ID, "answer").is_displayed()
    browser.forward()
    WebDriverWait(browser, 5).until(lambda d: len(shown_rows(d)) == 2)
    browser.forward()
    assert panel(browser).find_element(By.TAG_NAME, "h2").text == title


def test_the_skip_link_and_the_panel_take_and_give_back_focus(browser, page):
    if browser.device != "desktop":
        pytest.skip("a keyboard path; the phone has none")
    fresh(browser, page)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    skip = browser.switch_to.active_element
    assert skip.get_attribute("id") == "skip" and skip.is_displayed()
    skip.send_keys(Keys.ENTER)
    first = browser.switch_to.active_element
    assert first.tag_name == "td" and "c" in first.get_attribute("class").split()
    ring = browser.execute_script(
        "const s = getComputedStyle(arguments[0]); return [s.outlineStyle, s.outlineWidth, s.outlineColor]", first
    )
    assert ring[0] == "solid" and float(ring[1].rstrip("px")) >= 2
    first.send_keys(Keys.ENTER)
    shown = panel(browser)
    assert shown.get_attribute("role") == "dialog"
    label = browser.find_element(By.ID, shown.get_attribute("aria-labelledby"))
    focused = browser.switch_to.active_element
    assert focused == label and browser.execute_script("return arguments[0].contains(arguments[1])", shown, focused)
    focused.send_keys(Keys.ESCAPE)
    assert not shown.is_displayed() and browser.switch_to.active_element == first


def relative_luminance(rgb: tuple[int, ...]) -> float:
    channels = [c / 255 for c in rgb[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_focus_ring_is_3_to_1_on_every_status_colour(browser, page):
    if browser.device != "desktop":
        pytest.skip("the colours are the same on the phone")
    fresh(browser, page)
    parse = "const rgb = (t) => t.match(/\\d+/g).slice(0, 3).map(Number);"
    for status in (
        "conforms",
        "differs",
        "unsupported",
        "error",
        "crash",
        "timeout",
        "skipped",
        "flaky",
        "not-run",
        "b-present",
        "b-absent",
        "b-maybe-fixed",
    ):
        background, ring = browser.execute_script(
            parse + "const td = document.createElement('td'); td.className = 'c ' + arguments[0];"
            "td.tabIndex = -1; document.querySelector('#m tbody tr.r').appendChild(td); td.focus();"
            "const s = getComputedStyle(td); const out = [rgb(s.backgroundColor), rgb(s.outlineColor)];"
            "td.remove(); return out;",
            status if status.startswith("b-") else "s-" + status,
        )
        if background == [0, 0, 0]:  # transparent (a striped or unset background): the page's white shows
            background = [255, 255, 255]
        assert contrast(tuple(ring), tuple(background)) >= 3, status


@pytest.mark.parametrize("compact", [False, True])
def test_axe_finds_no_violation_with_the_panel_closed_and_open(browser, page, compact):
    source = axe_source()
    if source is None:
        if os.environ.get("CI"):
            raise RuntimeError("axe-core is needed in CI: npm install --prefix .ci axe-core")
        pytest.skip("axe-core is not installed (npm install --prefix .ci axe-core, or set AXE_CORE_JS)")
    fresh(browser, page + ("#compact=1" if compact else "#compact=0"))
    assert ("view-compact" in browser.find_element(By.TAG_NAME, "body").get_attribute("class")) == compact
    browser.execute_script(source)
    run = (
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "[v.id, v.impact, v.help, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));"
    )
    browser.set_script_timeout(60)
    closed = browser.execute_async_script(run)
    cell(browser, "demo.vmap_miss[vmap]", "0.8.0").click()
    panel(browser)
    opened = browser.execute_async_script(run)
    panel(browser).find_element(By.CSS_SELECTOR, "[data-casedetail]").click()  # the case's script, too
    script = browser.execute_async_script(run)
    assert closed == [] and opened == [] and script == [], (closed, opened, script)


def test_the_deprecation_filter_keeps_the_rows_with_a_warning_and_lives_in_the_url(browser, page):
    steps = fresh(browser, page)
    steps.click(browser.find_element(By.ID, "f-warned"))
    assert shown_rows(browser) == ["demo.regressed"] and "warned=1" in browser.current_url
    section = browser.find_element(By.ID, "deprecations").find_element(By.XPATH, "following-sibling::ul[1]").text
    assert "jax-demo-api" in section and "first warns in 0.11.2" in section
    fresh(browser, browser.current_url)  # the link reproduces the view
    assert shown_rows(browser) == ["demo.regressed"]


def test_typing_is_one_history_entry(browser, page):
    steps = fresh(browser, page)
    steps.type("f-text", "demo.old")
    assert shown_rows(browser) == ["demo.old_message"] and "q=demo.old" in browser.current_url
    browser.back()  # the view before the typing, not the view after its first keystroke
    WebDriverWait(browser, 5).until(lambda d: len(shown_rows(d)) == 7)
    assert browser.find_element(By.ID, "f-text").get_attribute("value") == ""
    browser.forward()
    WebDriverWait(browser, 5).until(lambda d: shown_rows(d) == ["demo.old_message"])
