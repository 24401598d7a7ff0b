"""Issue 56: the page's "Everything that changes from A to B" answered in 3 steps or fewer at 1400x900 and on a
390x844 phone, its choice in the URL, a release chosen newer than the other read backwards; and the Performance
section by keyboard (a focusable scrolling region whose header row and workload column stay in view), with
axe-core finding no violation in every state of both.

Uses `tests.synthetic_report` (five releases with cells, censuses and workload samples). Needs Chromium, its driver
and axe-core, as `tests/test_browser_questions.py` (a missing one skips outside CI, fails in CI).
"""

from __future__ import annotations

import os

import pytest

from tests import synthetic_report
from tests.chromium import require_chromium
from tests.test_browser_questions import axe_source, fresh

require_chromium()

pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


# `page` and `browser`: tests/conftest.py's (the synthetic report; each of DEVICES)


def tier(driver, key: str) -> tuple[str, str]:
    """A tier's heading and its list's text."""
    return driver.find_element(By.ID, f"up-{key}-h").text, driver.find_element(By.ID, f"up-{key}").text


def axe(driver) -> list:
    source = axe_source()
    if source is None:
        if os.environ.get("CI"):
            raise RuntimeError("axe-core is needed in CI: npm install --prefix .ci axe-core")
        pytest.skip("axe-core is not installed (npm install --prefix .ci axe-core, or set AXE_CORE_JS)")
    driver.execute_script(source)
    driver.set_script_timeout(60)
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "[v.id, v.impact, v.help, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));"
    )


def test_everything_that_changes_from_a_to_b_in_three_steps(browser, page):
    steps = fresh(browser, page)
    steps.click(browser.find_element(By.CSS_SELECTOR, "nav.toc a[href='#upgrade']"))
    steps.choose("up-a", "0.7.2")  # B is the newest release unless chosen: a third step to spare
    assert steps.count <= 3
    assert browser.find_element(By.ID, "up-b").get_attribute("value") == "0.12.0.1"
    heading, listed = tier(browser, "beh")
    assert heading == "Behaviours (3)" and "demo.regressed" in listed and "unexplained" in listed
    assert "The miss first appears in 0.8.0" in listed  # each with the why its case declares
    heading, listed = tier(browser, "perf")
    assert heading == "Performance (3)"
    assert "regressed perf.dispatch_loop run_s: ×1.26" in listed  # a drift of steps each inside ×1.25, judged
    assert "fails perf.gone on 0.12.0.1" in listed and "changed perf.buffer temp_bytes: new from 0" in listed
    heading, listed = tier(browser, "names")
    assert heading == "Public names (2)" and "removed jax.tree_map: removed in 0.8.0; use jax.tree.map" in listed
    assert "deprecated jax.demo_api: deprecated in 0.11.2; use jax.demo" in listed
    summary = browser.find_element(By.ID, "up-sum").text
    assert summary.startswith("0.7.2 → 0.12.0.1: 3 behaviours, 2 public names, 3 workload verdicts change")
    assert "from=0.7.2" in browser.current_url and "to=0.12.0.1" in browser.current_url
    element = browser.find_element(By.ID, "up-beh-h")
    assert browser.execute_script("return arguments[0].getBoundingClientRect().right <= window.innerWidth", element)


def test_the_link_reproduces_the_review_and_names_count_in_their_heading(browser, page):
    fresh(browser, page + "#from=0.7.2&to=0.8.0")
    heading, listed = tier(browser, "names")
    assert heading == "Public names (1)" and "removed jax.tree_map: removed in 0.8.0; use jax.tree.map" in listed
    assert tier(browser, "beh")[0] == "Behaviours (2)"
    fresh(browser, page + "#from=0.12.0.1&to=0.7.2")  # backwards: the same verdicts, read from B's side
    assert "improved perf.dispatch_loop run_s: ×0.79" in tier(browser, "perf")[1]


def test_a_choice_of_one_release_twice_or_none_says_so(browser, page):
    fresh(browser, page + "#from=0.8.0&to=0.8.0")
    assert "two different releases" in browser.find_element(By.ID, "up-sum").text
    assert tier(browser, "beh") == ("Behaviours", "")  # no count where nothing was compared
    fresh(browser, page)
    assert "Choose the release you use now" in browser.find_element(By.ID, "up-sum").text


def test_with_too_many_releases_to_test_every_pair_the_page_shows_the_ratio_of_medians(browser, tmp_path, monkeypatch):
    from conformance.report import upgradeview

    monkeypatch.setattr(upgradeview, "MAX_JUDGED", 0)  # as on a page of 27 releases
    page = synthetic_report.write(tmp_path / "index.html").as_uri()
    fresh(browser, page + "#from=0.4.38&to=0.12.0.1")
    heading, listed = tier(browser, "perf")
    assert heading == "Performance (3)" and "slower perf.dispatch_loop run_s: ×1.36" in listed
    assert "not a rank-test verdict" in listed and "fails perf.gone on 0.12.0.1" in listed
    fresh(browser, page + "#from=0.11.2&to=0.12.0.1")  # one step of the drift stays inside the band: not listed
    assert "dispatch_loop" not in tier(browser, "perf")[1]
    assert axe(browser) == []


def test_the_performance_table_scrolls_by_keyboard_with_its_heads_in_view(browser, page):
    fresh(browser, page)
    box = browser.find_element(By.CSS_SELECTOR, ".perfwrap")
    assert box.get_attribute("tabindex") == "0" and box.get_attribute("role") == "region"
    browser.execute_script("arguments[0].scrollIntoView()", box)
    box.send_keys(Keys.END)  # focus it as Tab does, then End: the last release comes into view
    browser.execute_script("arguments[0].focus(); arguments[0].scrollLeft = 0;", box)
    for _ in range(40):
        box.send_keys(Keys.ARROW_RIGHT)
    box.send_keys(Keys.ARROW_DOWN)
    at = browser.execute_script(
        "const box = arguments[0], b = box.getBoundingClientRect(), last = box.querySelector('thead th:last-child')"
        ".getBoundingClientRect(), name = box.querySelector('tbody th').getBoundingClientRect(), head = box"
        ".querySelector('thead th').getBoundingClientRect();"
        "return [box.scrollWidth > box.clientWidth, box.scrollLeft, last.right <= b.right + 1, "
        "Math.abs(name.left - b.left) < 2, Math.abs(head.top - b.top) < 2];",
        box,
    )
    overflows, left, last_shown, name_stuck, head_stuck = at
    assert last_shown and head_stuck
    if overflows:  # on the phone: the keys scrolled it, and the workload column stayed
        assert left > 0 and name_stuck


def test_axe_finds_no_violation_in_every_state_of_the_review_and_performance(browser, page):
    found = {}
    fresh(browser, page)
    found["nothing chosen"] = axe(browser)
    fresh(browser, page + "#from=0.4.38&to=0.12.0.1")
    found["chosen"] = axe(browser)
    for details in browser.find_elements(By.CSS_SELECTOR, "#upgrade details"):
        browser.execute_script("arguments[0].open = true", details)
    found["every list open"] = axe(browser)
    fresh(browser, page + "#from=0.8.0&to=0.8.0")
    found["the same release twice"] = axe(browser)
    box = browser.find_element(By.CSS_SELECTOR, ".perfwrap")
    browser.execute_script("arguments[0].focus(); arguments[0].scrollLeft = arguments[0].scrollWidth;", box)
    found["performance scrolled"] = axe(browser)
    assert all(v == [] for v in found.values()), found


def test_a_release_with_no_probe_cell_says_its_behaviours_are_not_on_this_page(browser, tmp_path):
    from conformance.report.render import render_results
    from tests import synthetic_downstream as sd
    from tests import synthetic_results as synth

    suite = sd.demo_suite()  # 0.12.0.1 holds only the suite's tests: a column without a probe cell
    sd.write_files(tmp_path / "r", {"0.8.0": [synth.cell("demo.case")] + suite["0.8.0"], "0.12.0.1": suite["0.12.0.1"]})
    out = tmp_path / "index.html"
    render_results(tmp_path / "r", out, releases=["0.8.0"])
    fresh(browser, out.as_uri() + "#from=0.8.0&to=0.12.0.1")
    heading, listed = tier(browser, "beh")
    assert heading == "Behaviours (not on this page)" and "no probe cell of 0.12.0.1" in listed
    summary = browser.find_element(By.ID, "up-sum").text
    assert "behaviours, public names, performance not on this page." in summary
    assert (
        "downstream finding" in summary and "(not on this page)" not in tier(browser, "ds")[0]
    )  # its suite ran on both


# ---- one answer for A -> B: the page's tiers count what `jax-conformance upgrade` counts, from the same inputs


@pytest.fixture(scope="module")
def review_page(tmp_path_factory) -> str:
    """The synthetic report with what the review must count as the CLI does (`synthetic_report.review_inputs`)."""
    return synthetic_report.write(tmp_path_factory.mktemp("review") / "index.html", review=True).as_uri()


def cli_counts(a: str, b: str) -> dict:
    """Each tier's count from A to B as `jax-conformance upgrade` gives it: `decide.upgrade_tiers`' functions over
    the same cells, censuses and suite runs the page renders (None: the suite was not run on a side)."""
    from conformance.api.diff import diff_chain
    from conformance.decide.diff import diff_sets, result_set
    from conformance.decide.upgrade_tiers import behaviour_tiers, downstream_review_tier, names_tier
    from conformance.downstream.cells import judged, node_of
    from conformance.downstream.judge import judge
    from conformance.results.versions import version_order
    from tests import synthetic_downstream as sd
    from tests import synthetic_results as synth

    inputs = synthetic_report.review_inputs()
    diff = diff_sets(result_set([inputs["probes"][a]], a), result_set([inputs["probes"][b]], b))
    behaviours = behaviour_tiers(diff, lambda case, param: "", lambda case: False, False)[0]
    low, high = sorted((version_order(a), version_order(b)))
    chain = sorted(
        (c for c in inputs["censuses"] if low <= version_order(c.jax) <= high),
        key=lambda c: version_order(c.jax),
        reverse=version_order(a) > version_order(b),
    )  # A, the censuses between, B: as `api.session.run_api_diff` chains them
    names = names_tier(diff_chain(chain))
    suite = inputs["suite"]
    downstream = None
    if a in suite and b in suite:
        tests = {v: {node_of(c): judged(c) for c in synth.files(v, "linux-x86_64", suite[v]).cells} for v in (a, b)}
        judged_pair = [(sd.LABEL, a, b, judge(sd.LABEL, tests[a], tests[b]))]
        downstream = len(downstream_review_tier(judged_pair).findings)
    return {"beh": len(behaviours.findings), "names": len(names.findings), "ds": downstream}


PAIRS = [
    ("0.7.2", "0.12.0.1"),
    ("0.8.0", "0.12.0.1"),
    ("0.11.2", "0.12.0.1"),
    ("0.4.38", "0.12.0.1"),
    ("0.8.0", "0.11.2"),
    ("0.4.38", "0.7.2"),
]


@pytest.mark.parametrize("a,b", PAIRS)
def test_each_tier_counts_what_the_cli_counts_for_the_same_pair(browser, review_page, a, b):
    fresh(browser, review_page + f"#from={a}&to={b}")
    expected = cli_counts(a, b)
    for key, title in (("beh", "Behaviours"), ("names", "Public names"), ("ds", "Downstream suites")):
        heading = tier(browser, key)[0]
        count = expected[key]
        assert heading == (f"{title} ({count})" if count is not None else f"{title} (not on this page)"), (key, a, b)
    summary = browser.find_element(By.ID, "up-sum").text
    said = {"beh": "behaviour", "names": "public name", "ds": "downstream finding"}
    for key, word in said.items():
        if expected[key] is not None:
            assert f"{expected[key]} {word}" in summary


def test_a_printed_change_with_the_mark_on_both_sides_is_a_behaviour_that_changes(browser, review_page):
    fresh(browser, review_page + "#from=0.11.2&to=0.12.0.1")
    heading, listed = tier(browser, "beh")
    assert "printed output demo.reworded: conforms P → conforms P" in listed  # y -> z, P on both sides
    fresh(browser, review_page + "#from=0.7.2&to=0.8.0")
    assert "demo.reworded" not in tier(browser, "beh")[1]  # printed the same (y) on both: no change
    fresh(browser, review_page + "#from=0.8.0&to=0.11.2")  # printed the same, a deprecation warning on B alone
    assert "printed output demo.reworded: conforms P → conforms P" in tier(browser, "beh")[1]
    fresh(browser, review_page + "#from=0.4.38&to=0.7.2")  # printed the same, the mark P on B alone
    assert "printed output demo.reworded: conforms → conforms P" in tier(browser, "beh")[1]


def test_a_name_deprecated_then_removed_in_the_range_counts_once(browser, review_page):
    fresh(browser, review_page + "#from=0.7.2&to=0.12.0.1")
    heading, listed = tier(browser, "names")
    assert listed.count("jax.old_api") == 1 and "removed jax.old_api: removed in 0.11.2; use jax.new_api" in listed
    assert heading == "Public names (3)"


def test_the_downstream_tier_lists_each_suite_by_signature_and_names_a_suite_not_run(browser, review_page):
    fresh(browser, review_page + "#from=0.8.0&to=0.12.0.1")
    heading, listed = tier(browser, "ds")
    assert "tests regressed demo==1.0: AttributeError" in listed and "e.g. demo/_src/a_test.py::test_0" in listed
    assert "from 'jax' @ demo/_src/c_test.py:<module> (in demo)" in listed  # a signature is text, never markup
    fresh(browser, review_page + "#from=0.11.2&to=0.12.0.1")  # what breaks first, then what is fixed, the notes
    heading, listed = tier(browser, "ds")
    assert heading == "Downstream suites (2)" and "demo==1.0: 1 appeared, 1 vanished" in listed
    assert -1 < listed.index("1 test regressed") < listed.index("1 test fixed")
    fresh(browser, review_page + "#from=0.12.0.1&to=0.8.0")  # backwards: read from B's side, the regressions fixed
    heading, listed = tier(browser, "ds")
    assert heading == "Downstream suites (2)" and "tests fixed" in listed and "regressed" not in listed
    fresh(browser, review_page + "#from=0.4.38&to=0.12.0.1")  # the suite has no run on 0.4.38: named, never 0
    heading, listed = tier(browser, "ds")
    assert heading == "Downstream suites (not on this page)" and "demo==1.0: not run on 0.4.38 on this page" in listed
    summary = browser.find_element(By.ID, "up-sum").text
    assert "downstream suites not on this page" in summary and "0 downstream" not in summary
    assert axe(browser) == []
    fresh(browser, review_page + "#from=0.8.0&to=0.12.0.1")
    for details in browser.find_elements(By.CSS_SELECTOR, "#upgrade details"):
        browser.execute_script("arguments[0].open = true", details)
    assert axe(browser) == []
