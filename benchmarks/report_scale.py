"""Render a synthetic results set at scale: how long the report takes, how big it is, and how the page runs.

    python benchmarks/report_scale.py [--cases 300] [--versions 40] [--platforms 3] [--browser]
                                      [--repeat 3] [--before COMMIT]

Builds `cases × versions × platforms` cell results in memory (most conform, some differ with a
diff, some with printed output that differs, a few crash with output tails), renders the HTML
report, and prints the render time and the file size. With `--browser` it also opens the page
in headless Chromium (Debian's chromium and chromium-driver, through selenium) and measures the
load and each interaction a reader does at the table (filter, clear, the column question and "show every row",
compact ⇄ detailed, compare, open a cell, scroll the table by its height) as CPU time of the page's main
thread: the DevTools Performance metric TaskDuration in thread time, which a busy machine does not inflate, from
before the action to two frames after it (its style, layout and paint included). It measures the page
before issue 39 in the same run, on the same machine: the same data rendered with the template of
`--before` (a commit; by default the last one before issue 39's page), and prints both side by
side (median of `--repeat` loads, with the range). The goals for 300 × 40 × 3: render under 3 s,
a file under 10 MB, a load under 1.5 s and every interaction under 0.3 s of main-thread CPU.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.core.case import Case, Expect, Param  # noqa: E402
from conformance.core.status import Status  # noqa: E402
from conformance.report import html  # noqa: E402
from conformance.report.model import build_model  # noqa: E402
from conformance.results.schema import CellResult, ResultFile, RunHeader  # noqa: E402

PLATFORMS = ["linux-x86_64", "darwin-arm64", "windows-amd64", "linux-arm64"]
BEFORE_ISSUE_39 = "280e7d428eb988af628bd2f65042007bd2a4fd27"
TEMPLATE = "conformance/report/templates/report.html.j2"
# Two frames after an action, then a task: its style, layout and paint have run by then.
SETTLE = (
    "const done = arguments[arguments.length - 1], t0 = performance.now();"
    "const settle = () => requestAnimationFrame(() => requestAnimationFrame(() => "
    "setTimeout(() => done(performance.now() - t0), 0)));"
)
# What a reader does, in order, as script run in the page (the same on the page before and after).
INTERACTIONS = [
    ("go to the table", "document.getElementById('table').scrollIntoView();"),  # then each step acts on it in view
    (
        "filter (type case1)",
        "const b = document.getElementById('f-text'); b.value = 'case1';"
        "b.dispatchEvent(new Event('input', {bubbles: true}));",
    ),
    (
        "clear the filter",
        "const b = document.getElementById('f-text'); b.value = '';"
        "b.dispatchEvent(new Event('input', {bubbles: true}));",
    ),
    ("column question", "document.querySelector('[data-colpick]').click();"),
    ("show every row", "document.getElementById('answer-clear').click();"),
    ("compact → detailed", "document.getElementById('v-compact').click();"),
    ("detailed → compact", "document.getElementById('v-compact').click();"),
    (
        "compare two columns",
        "const a = document.getElementById('cmp-a'); a.value = '0';"
        "a.dispatchEvent(new Event('change', {bubbles: true}));",
    ),
    ("open a cell", "document.querySelector('#m td.c').click();"),
    ("scroll the table a box", "const w = document.querySelector('.wrap'); w.scrollTop += w.clientHeight;"),
    ("nothing (the harness)", ""),
]


def synthetic_probe():
    """A stand-in probe."""
    return {"value": 1}


def synthetic(cases: int, versions: int, platforms: int) -> tuple[list[ResultFile], list[Case]]:
    """Result files and declared cases of the requested size."""
    declared = [
        Case(
            id=f"section{i % 10}.case{i}",
            section=f"§{i % 10}",
            heading=f"§{i % 10} Section {i % 10}",
            claim=f"Claim number {i}, one sentence long enough to look like a real one.",
            params=(Param("", (f"section{i % 10}.row{i}",), Expect({"value": 1, "name": "x"})),),
            probe=synthetic_probe,
        )
        for i in range(cases)
    ]
    files = []
    for v in range(versions):
        version = f"0.{4 + v // 10}.{v % 10}"
        for p in PLATFORMS[:platforms]:
            cells = []
            for i, case in enumerate(declared):
                kind = (i * 7 + v * 3) % 50
                if kind == 0:
                    cell = CellResult(
                        case.id,
                        "",
                        [f"row{i}"],
                        Status.CRASH,
                        expected={"value": 1, "name": "x"},
                        reason="the child died by SIGSEGV",
                        stderr_tail="Fatal Python error\n" * 20,
                        duration_s=0.4,
                    )
                elif kind < 3:
                    cell = CellResult(
                        case.id,
                        "",
                        [f"row{i}"],
                        Status.CONFORMS,
                        expected={"value": 1},
                        observation={"value": 1, "name": "y"},
                        printed_expected={"name": "x"},
                        printed_diff=[{"path": "name", "expected": "x", "observed": "y", "kind": "changed"}],
                        duration_s=0.1,
                    )
                elif kind < 6:
                    cell = CellResult(
                        case.id,
                        "",
                        [f"row{i}"],
                        Status.DIFFERS,
                        expected={"value": 1, "name": "x"},
                        observation={"value": 2, "name": "x"},
                        diff=[{"path": "value", "expected": 1, "observed": 2, "kind": "changed"}],
                        details={"message": f"observed {v}"},
                        duration_s=0.2,
                    )
                else:
                    cell = CellResult(
                        case.id,
                        "",
                        [f"row{i}"],
                        Status.CONFORMS,
                        expected={"value": 1, "name": "x"},
                        observation={"value": 1, "name": "x"},
                        duration_s=0.1,
                    )
                cells.append(cell)
            header = RunHeader(jax=version, platform=p, suite_version="bench", finished_at=f"2026-01-01T00:{v:02d}")
            files.append(ResultFile(header, cells, f"{version}-{p}.json"))
    return files, declared


def render_before(files: list[ResultFile], cases: list[Case], commit: str, out: Path) -> Path:
    """The same report rendered with the page template of `commit` (the page before a change), at `out`."""
    import jinja2

    source = subprocess.run(
        ["git", "show", f"{commit}:{TEMPLATE}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    model = build_model(files, cases, sorted({f.header.jax for f in files}))
    env = html._environment().overlay(loader=jinja2.DictLoader({"before": source}))
    out.write_text(env.get_template("before").render(**html.template_context(model, "bench")), encoding="utf-8")
    return out


def _browser():
    """Headless Chromium at 1400x900, through selenium."""
    import shutil

    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,900",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=shutil.which("chromedriver")), options=options
    )
    driver.set_script_timeout(300)
    return driver


def _task_seconds(driver) -> float:
    """The main thread's TaskDuration so far (thread time, once Performance is enabled with threadTicks)."""
    metrics = driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def measure_page(driver, page: Path) -> dict[str, tuple[float, float]]:
    """(main-thread CPU s, wall s) of loading `page` and of each interaction in `INTERACTIONS`, in order."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
    before = _task_seconds(driver)
    driver.get(page.as_uri())
    driver.execute_async_script(SETTLE + "settle();")
    wall = driver.execute_script(
        "const t = performance.getEntriesByType('navigation')[0];return (t.loadEventEnd - t.startTime) / 1000;"
    )
    figures = {"load": (_task_seconds(driver) - before, float(wall))}
    for name, action in INTERACTIONS:
        start = _task_seconds(driver)
        wall_ms = driver.execute_async_script(SETTLE + action + "settle();")
        figures[name] = (_task_seconds(driver) - start, wall_ms / 1000)
    driver.execute_cdp_cmd("Performance.disable", {})
    return figures


def browser_figures(pages: dict[str, Path], repeat: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """Each page's figures over `repeat` loads, the pages taken in turn so that a busy moment falls on both."""
    driver = _browser()
    found: dict[str, dict[str, list[tuple[float, float]]]] = {label: {} for label in pages}
    try:
        for _ in range(repeat):
            for label, page in pages.items():
                for name, value in measure_page(driver, page).items():
                    found[label].setdefault(name, []).append(value)
    finally:
        driver.quit()
    return found


def _summary(values: list[tuple[float, float]]) -> str:
    cpu = [v[0] for v in values]
    wall = statistics.median(v[1] for v in values)
    spread = f" ({min(cpu):.2f}–{max(cpu):.2f})" if len(cpu) > 1 else ""
    return f"{statistics.median(cpu):5.2f} s{spread}, wall {wall:.2f} s"


def print_figures(found: dict[str, dict[str, list[tuple[float, float]]]], repeat: int) -> None:
    """The side-by-side table: per interaction, main-thread CPU (median and range) and wall clock (median)."""
    labels = list(found)
    print(
        f"headless Chromium at 1400x900, main-thread CPU (TaskDuration, thread time), median of {repeat} loads"
        f" (range); wall clock median"
    )
    print(f"{'':24}" + "".join(f"{label:40}" for label in labels))
    for name in found[labels[0]]:
        print(f"{name:24}" + "".join(f"{_summary(found[label][name]):40}" for label in labels))


def main() -> int:
    """Render and print the numbers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--versions", type=int, default=40)
    parser.add_argument("--platforms", type=int, default=3)
    parser.add_argument(
        "--browser",
        action="store_true",
        help="also measure the load and each interaction in headless Chromium, before and after",
    )
    parser.add_argument("--repeat", type=int, default=3, help="loads of each page with --browser (default 3)")
    parser.add_argument(
        "--before",
        default=BEFORE_ISSUE_39,
        help="the commit whose page template is 'before' (default: the last before issue 39)",
    )
    args = parser.parse_args()
    files, cases = synthetic(args.cases, args.versions, args.platforms)
    releases = sorted({f.header.jax for f in files})
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        out = html.write_report(
            files, Path(folder) / "index.html", cases=cases, generated_at="bench", releases=releases
        )
        seconds = time.perf_counter() - started
        cells = args.cases * args.versions * args.platforms
        print(
            f"{args.cases} cases x {args.versions} versions x {args.platforms} platforms = {cells} cells: "
            f"rendered in {seconds:.2f} s, {out.stat().st_size / 1e6:.2f} MB"
        )
        if args.browser:
            before = render_before(files, cases, args.before, Path(folder) / "before.html")
            print(f"the page before ({args.before[:10]}): {before.stat().st_size / 1e6:.2f} MB")
            found = browser_figures({f"before ({args.before[:7]})": before, "after": out}, args.repeat)
            print_figures(found, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
