"""Render a synthetic results set at scale: how long the report takes and how big it is.

    python benchmarks/report_scale.py [--cases 300] [--versions 40] [--platforms 3] [--browser]

Builds `cases × versions × platforms` cell results in memory (most conform, some differ with a
diff, some with printed output that differs, a few crash with output tails), renders the HTML
report, and prints the render time and the file size. With `--browser` it also opens the page
in headless Chromium (Debian's chromium and chromium-driver, through selenium) and measures the
load (navigation start to the end of the page's own script) and one filter (typing into the text
filter, which re-filters every row), in wall-clock time and in CPU time of the page's main thread (which a busy
machine does not inflate). The goals for 300 × 40 × 3: render under 3 s, a file under 10 MB, load and filter
under 2 s in the browser.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.core.case import Case, Expect, Param  # noqa: E402
from conformance.core.status import Status  # noqa: E402
from conformance.report.html import write_report  # noqa: E402
from conformance.results.schema import CellResult, ResultFile, RunHeader  # noqa: E402

PLATFORMS = ["linux-x86_64", "darwin-arm64", "windows-amd64", "linux-arm64"]


def synthetic_probe():
    """A stand-in probe."""
    return {"value": 1}


def synthetic(cases: int, versions: int, platforms: int) -> tuple[list[ResultFile], list[Case]]:
    """Result files and declared cases of the requested size."""
    declared = [Case(id=f"section{i % 10}.case{i}", section=f"§{i % 10}", heading=f"§{i % 10} Section {i % 10}",
                     claim=f"Claim number {i}, one sentence long enough to look like a real one.",
                     params=(Param("", (f"section{i % 10}.row{i}",), Expect({"value": 1, "name": "x"})),),
                     probe=synthetic_probe) for i in range(cases)]
    files = []
    for v in range(versions):
        version = f"0.{4 + v // 10}.{v % 10}"
        for p in PLATFORMS[:platforms]:
            cells = []
            for i, case in enumerate(declared):
                kind = (i * 7 + v * 3) % 50
                if kind == 0:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.CRASH, expected={"value": 1, "name": "x"},
                                      reason="the child died by SIGSEGV", stderr_tail="Fatal Python error\n" * 20,
                                      duration_s=0.4)
                elif kind < 3:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.CONFORMS, expected={"value": 1},
                                      observation={"value": 1, "name": "y"}, printed_expected={"name": "x"},
                                      printed_diff=[{"path": "name", "expected": "x", "observed": "y",
                                                     "kind": "changed"}], duration_s=0.1)
                elif kind < 6:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.DIFFERS, expected={"value": 1, "name": "x"},
                                      observation={"value": 2, "name": "x"},
                                      diff=[{"path": "value", "expected": 1, "observed": 2, "kind": "changed"}],
                                      details={"message": f"observed {v}"}, duration_s=0.2)
                else:
                    cell = CellResult(case.id, "", [f"row{i}"], Status.CONFORMS, expected={"value": 1, "name": "x"},
                                      observation={"value": 1, "name": "x"}, duration_s=0.1)
                cells.append(cell)
            header = RunHeader(jax=version, platform=p, suite_version="bench", finished_at=f"2026-01-01T00:{v:02d}")
            files.append(ResultFile(header, cells, f"{version}-{p}.json"))
    return files, declared


def browser_seconds(page: Path) -> tuple[float, float, float, float]:
    """Load and filter times of `page` in headless Chromium: (navigation start to the page's script done, one
    filter keystroke applied to every row), then the same two as CPU time of the page's main thread (DevTools'
    thread-ticks metrics), which other processes on a busy machine do not inflate."""
    import shutil

    from selenium import webdriver
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=shutil.which("chromedriver")),
                              options=options)
    def thread_time() -> float:
        metrics = driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]
        return next((m["value"] for m in metrics if m["name"] == "ThreadTime"), float("nan"))

    try:
        driver.get("about:blank")
        driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
        before = thread_time()
        driver.get(page.as_uri())
        loaded = thread_time()
        load = driver.execute_script(
            "const t = performance.getEntriesByType('navigation')[0]; return (t.loadEventEnd - t.startTime) / 1000;")
        box = driver.find_element(By.ID, "f-text")
        filtered = driver.execute_script(
            "const box = arguments[0], t0 = performance.now(); box.value = 'case1';"
            "box.dispatchEvent(new Event('input', {bubbles: true}));"
            "document.body.offsetHeight; return (performance.now() - t0) / 1000;", box)
        return float(load), float(filtered), loaded - before, thread_time() - loaded
    finally:
        driver.quit()


def main() -> int:
    """Render and print the numbers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--versions", type=int, default=40)
    parser.add_argument("--platforms", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also measure load and filter in headless Chromium")
    args = parser.parse_args()
    files, cases = synthetic(args.cases, args.versions, args.platforms)
    releases = sorted({f.header.jax for f in files})
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        out = write_report(files, Path(folder) / "index.html", cases=cases, generated_at="bench", releases=releases)
        seconds = time.perf_counter() - started
        size = out.stat().st_size
        cells = args.cases * args.versions * args.platforms
        print(f"{args.cases} cases x {args.versions} versions x {args.platforms} platforms = {cells} cells: "
              f"rendered in {seconds:.2f} s, {size / 1e6:.2f} MB")
        if args.browser:
            load, filtered, load_cpu, filter_cpu = browser_seconds(out)
            print(f"headless Chromium: loaded in {load:.2f} s, filtered in {filtered:.2f} s "
                  f"(load + filter {load + filtered:.2f} s)")
            print(f"main-thread CPU time: load {load_cpu:.2f} s, filter {filter_cpu:.2f} s "
                  f"(load + filter {load_cpu + filter_cpu:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
