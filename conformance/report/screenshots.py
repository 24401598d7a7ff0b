"""Screenshots of a rendered report in headless Chromium, for the published page's README.

    python benchmarks/screenshots.py reports/index.html [--cell CELL_ID] [--out reports]

(that script parses the command line and calls `take`: `cli.py` is the package's one argparse user.)

Writes `screenshot-overview.png` (the page at 1400 px), `screenshot-table.png` (the table of
every cell, in the view the page opens in: compact with more than 12 version columns) and
`screenshot-cell.png` (the same page with one cell's detail open: by default the first row whose
cells differ across versions), `screenshot-compare.png` (What changed, comparing the oldest column with the newest) and
`screenshot-phone.png` (a 390x844 phone, mobile emulation, with the same cell's detail as a sheet). Needs selenium
(`pip install -e '.[test]'`) and Debian's `chromium` and `chromium-driver`; without them it says so in one line.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import quote

WIDTH, HEIGHT = 1400, 900
PHONE = (390, 844)


def _browser(phone: bool = False):
    """A headless Chromium at the report's design width (or a 390x844 phone), or a one-line reason why there is
    none."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        from selenium import webdriver
    except ImportError:
        raise SystemExit("selenium is not installed: pip install -e '.[test]'") from None
    if not (chromium and driver):
        raise SystemExit("chromium or chromedriver is missing: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
    ):
        options.add_argument(flag)
    if phone:
        options.add_experimental_option(
            "mobileEmulation",
            {"deviceMetrics": {"width": PHONE[0], "height": PHONE[1], "pixelRatio": 2.0, "touch": True}},
        )
    else:
        options.add_argument(f"--window-size={WIDTH},{HEIGHT}")
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver), options=options)


def _open_last_cell_of_first_row(browser) -> None:
    """Open the newest column's cell of the first row shown. The table draws only the rows and columns near its visible
    part: it is scrolled to its last column first, and the cell clicked by script, which keeps the first column."""
    from selenium.webdriver.common.by import By

    browser.execute_async_script(
        "const done = arguments[arguments.length - 1], w = document.getElementById('wrap');"
        "w.scrollLeft = w.scrollWidth;"
        "requestAnimationFrame(() => requestAnimationFrame(() => done()));"
    )
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "tr.r") if r.is_displayed())
    browser.execute_script("arguments[0].click()", row.find_elements(By.CSS_SELECTOR, "td.c")[-1])


def take(page: Path, out: Path, cell: str | None = None) -> list[Path]:
    """Save the overview and one cell's detail of `page` into `out`; return the files written."""
    from selenium.webdriver.common.by import By

    browser = _browser()
    try:
        browser.get(page.resolve().as_uri())
        overview = out / "screenshot-overview.png"
        browser.save_screenshot(str(overview))
        browser.execute_script("document.getElementById('table').scrollIntoView({block: 'start'})")
        table = out / "screenshot-table.png"
        browser.save_screenshot(str(table))
        if cell:  # the page's own deep link: it opens the cell, scrolls the table to it and marks it
            newest = browser.execute_script(
                "const h = document.querySelectorAll('thead th.leaf');return h[h.length - 1].dataset.key;"
            )
            browser.get(f"{page.resolve().as_uri()}#cell={quote(cell, safe='')}&at={quote(newest, safe='')}")
        else:
            browser.find_element(By.ID, "f-changes").click()
            _open_last_cell_of_first_row(browser)
        detail = out / "screenshot-cell.png"
        browser.save_screenshot(str(detail))
        link = browser.current_url  # the open cell is in the URL
        browser.execute_script(
            "const a = document.getElementById('cmp-a'); if (a.options.length > 2) {"
            "a.value = '0'; a.dispatchEvent(new Event('change', {bubbles: true})); }"
            "document.getElementById('panel-close').click(); document.getElementById('compare').scrollIntoView();"
        )
        compare = out / "screenshot-compare.png"
        browser.save_screenshot(str(compare))
    finally:
        browser.quit()
    phone = _browser(phone=True)
    try:
        phone.get(link)
        shot = out / "screenshot-phone.png"
        phone.save_screenshot(str(shot))
    finally:
        phone.quit()
    return [overview, table, detail, compare, shot]
