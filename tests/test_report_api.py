"""Issue 38 in the report: the censuses stored beside the results (`results/api/`) give the page its section "Every
public name, every release" (per release the names added, removed and deprecated; a search by name) and the compat
JSON its `api` entries, computed, never written by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance import cli
from conformance.api.census import FORMAT, FORMAT_VERSION
from tests.chromium import needs_chromium, start_chromium
from tests.synthetic_results import cell, write

PLATFORM = "linux-x86_64"


def census_file(folder: Path, jax: str, names: dict) -> None:
    """A census file as `api census` stores it (the fields `conformance.api.model.census_from` reads)."""
    names = {"jax": {"kind": "module", "state": "present"}, **names}
    modules = {n: {"status": "ok"} for n, e in names.items() if e.get("kind") == "module"}
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "jax": jax,
        "platform": PLATFORM,
        "python": "3.13.0",
        "modules": modules,
        "names": names,
    }
    (folder / "api").mkdir(parents=True, exist_ok=True)
    (folder / "api" / f"{jax}-{PLATFORM}.json").write_text(json.dumps(data), encoding="utf-8")


FN = {
    "kind": "function",
    "state": "present",
    "signature": "(f, tree)",
    "params": [["f", "positional_or_keyword", None]],
}


@pytest.fixture
def results(tmp_path) -> Path:
    folder = tmp_path / "results"
    for version in ("0.5.3", "0.6.0", "0.6.1"):
        write(folder, version, PLATFORM, [cell("values.dtype", "", "conforms")])
    census_file(
        folder,
        "0.5.3",
        {"jax.tree_map": {**FN, "state": "deprecated", "message": "jax.tree_map is deprecated: use jax.tree.map"}},
    )
    census_file(
        folder,
        "0.6.0",
        {"jax.tree_map": {"kind": None, "state": "removed", "message": "jax.tree_map was removed in JAX v0.6.0"}},
    )
    census_file(
        folder, "0.6.1", {"jax.tree_map": {"kind": None, "state": "removed", "message": "removed"}, "jax.shard_map": FN}
    )
    return folder


def test_the_report_has_the_api_section_and_the_compat_json_its_api_entries(results, tmp_path, capsys):
    page, compat = tmp_path / "site" / "index.html", tmp_path / "site" / "compat.json"
    assert cli.main(["report", str(results), "-o", str(page), "--compat-json", str(compat)]) == 0
    text = page.read_text(encoding="utf-8")
    assert 'id="api"' in text and '<a href="#api">Every public name</a>' in text
    assert "<strong>0.6.0</strong>: 0 added · 1 removed · 0 deprecated" in text
    assert "<strong>0.6.1</strong>: 1 added · 0 removed · 0 deprecated" in text
    block = json.loads(text.split('<script type="application/json" id="api-data">', 1)[1].split("</script>", 1)[0])
    assert block["names"]["jax.tree_map"] == [["≤0.5.3", "≤0.5.3", "0.6.0", "0.5.3"]]
    assert block["names"]["jax.shard_map"] == [["0.6.1", "", "", "0.6.1"]]
    data = json.loads(compat.read_text(encoding="utf-8"))
    assert data["api"]["jax"]["tree_map"]["__compat"]["support"][PLATFORM] == {
        "version_added": "≤0.5.3",
        "version_removed": "0.6.0",
        "version_last": "0.5.3",
    }
    assert data["api"]["jax"]["tree_map"]["__compat"]["status"]["deprecated"] is True


def test_without_censuses_the_report_has_no_api_section_and_an_unreadable_census_is_named(results, tmp_path, capsys):
    bare = tmp_path / "bare"
    shutil.copytree(results, bare, ignore=shutil.ignore_patterns("api"))
    page = tmp_path / "bare.html"
    assert cli.main(["report", str(bare), "-o", str(page)]) == 0
    assert 'id="api"' not in page.read_text(encoding="utf-8")
    (results / "api" / f"0.7.0-{PLATFORM}.json").write_text("{not json", encoding="utf-8")
    assert cli.main(["report", str(results), "-o", str(tmp_path / "again.html")]) == 1
    err = capsys.readouterr().err
    assert f"skipped unreadable census {results / 'api' / f'0.7.0-{PLATFORM}.json'}: not a readable census" in err
    assert 'id="api"' in (tmp_path / "again.html").read_text(encoding="utf-8")


@needs_chromium
def test_a_name_is_found_with_its_history_and_a_miss_says_so(results, tmp_path):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = tmp_path / "index.html"
    assert cli.main(["report", str(results), "-o", str(page)]) == 0
    browser = start_chromium()
    try:
        browser.get(page.as_uri())
        browser.find_element(By.CSS_SELECTOR, 'a[href="#api"]').click()
        box = browser.find_element(By.ID, "api-q")
        box.send_keys("tree_map")
        out = browser.find_element(By.ID, "api-out").text
        assert (
            "jax.tree_map: usable since 0.5.3 or earlier; deprecated since 0.5.3 or earlier; removed in 0.6.0 "
            "(last in 0.5.3)" in out
        )
        box.clear()
        box.send_keys("shard_map")
        assert (
            browser.find_element(By.ID, "api-out").text
            == "jax.shard_map: usable since 0.6.1; still there in the newest release"
        )
        box.clear()
        box.send_keys("no_such_name")
        assert "No public name matches “no_such_name”" in browser.find_element(By.ID, "api-out").text
        release = browser.find_element(By.CSS_SELECTOR, 'details[data-api="0"]')
        release.find_element(By.TAG_NAME, "summary").click()
        # The list is filled on the `toggle` event, which the browser fires after the click returns: wait for it (it
        # failed once in CI when read at once).
        WebDriverWait(browser, 10).until(lambda _: "Removed (1)" in release.text)
        assert "Removed (1)\njax.tree_map" in release.text
    finally:
        browser.quit()


def test_removed_between_two_releases_lists_each_name_with_its_replacement_and_release():
    from conformance.api.model import census_from
    from conformance.report.apiview import api_view, removed_between

    def census(jax, names):
        names = {"jax": {"kind": "module", "state": "present"}, **names}
        return census_from(
            {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "jax": jax,
                "platform": PLATFORM,
                "python": "3.13.0",
                "modules": {"jax": {"status": "ok"}},
                "names": names,
            }
        )

    vec = {**FN, "params": [["f", "positional_or_keyword", None], ["vectorized", "keyword_only", "Deprecated"]]}
    chain = [
        census(
            "0.5.3",
            {
                "jax.tree_map": {
                    **FN,
                    "state": "deprecated",
                    "replacement": "jax.tree.map",
                    "message": "jax.tree_map is deprecated: use jax.tree.map",
                },
                "jax.old": FN,
                "jax.pure_callback": {
                    **vec,
                    "keywords": {"vectorized": {"state": "deprecated", "effect": "warns", "message": "deprecated"}},
                },
            },
        ),
        census(
            "0.6.0",
            {
                "jax.tree_map": {"kind": None, "state": "removed", "message": "removed"},
                "jax.old": FN,
                "jax.pure_callback": {
                    **vec,
                    "keywords": {
                        "vectorized": {
                            "state": "removed",
                            "effect": "raises ValueError",
                            "message": "Use 'vmap_method' instead.",
                        }
                    },
                },
            },
        ),
        census(
            "0.12.0.1",
            {"jax.tree_map": {"kind": None, "state": "removed", "message": "removed"}, "jax.pure_callback": FN},
        ),
    ]
    view = api_view(chain)
    assert removed_between(view, "0.5.3", "0.12.0.1") == [
        {"name": "jax.old", "platform": PLATFORM, "removed": "0.12.0.1", "replacement": ""},
        {
            "name": "jax.pure_callback(vectorized=)",
            "platform": PLATFORM,
            "removed": "0.6.0",
            "replacement": "raises ValueError: Use 'vmap_method' instead.",
        },
        {"name": "jax.tree_map", "platform": PLATFORM, "removed": "0.6.0", "replacement": "jax.tree.map"},
    ]
    assert [r["name"] for r in removed_between(view, "0.6.0", "0.12.0.1")] == ["jax.old"]
    later = api_view([chain[0], census("0.5.4", chain[0].names), *chain[1:]])  # usable on 0.5.3 and after it
    assert "jax.pure_callback(vectorized=)" in [r["name"] for r in removed_between(later, "0.5.3", "0.12.0.1")]


LONG = "jax.experimental.pallas.mosaic_gpu.a_rather_long_public_name_that_would_spill_over_its_column"


@needs_chromium
@pytest.mark.parametrize("width", [1400, 390])
def test_removed_between_two_releases_is_answered_in_two_steps_and_lists_never_overlap(results, tmp_path, width):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    census_file(
        results,
        "0.5.3",
        {
            "jax.tree_map": {
                **FN,
                "state": "deprecated",
                "replacement": "jax.tree.map",
                "message": "jax.tree_map is deprecated: use jax.tree.map",
            },
            "jax.numpy": {"kind": "module", "state": "present"},
            "jax.numpy.fix": FN,
            **{f"{LONG}{i}": FN for i in range(12)},
        },
    )
    page = tmp_path / "index.html"
    assert cli.main(["report", str(results), "-o", str(page)]) == 0
    browser = start_chromium(width, 900)
    try:
        browser.get(page.as_uri())
        browser.find_element(By.CSS_SELECTOR, 'a[href="#api"]').click()
        Select(browser.find_element(By.ID, "api-from")).select_by_visible_text("0.5.3")  # step 1
        Select(browser.find_element(By.ID, "api-to")).select_by_visible_text("0.6.1")  # step 2
        out = browser.find_element(By.ID, "api-between").text
        assert "jax.tree_map: removed in 0.6.0; use jax.tree.map" in out and "jax.numpy.fix: removed in 0.6.0" in out
        assert f"{LONG}0: removed in 0.6.0 (JAX names no replacement)" in out.replace("\n", "")
        box = browser.find_element(By.ID, "api-q")
        box.send_keys("jnp.fix")
        assert (
            "jax.numpy.fix: usable since 0.5.3 or earlier; removed in 0.6.0"
            in browser.find_element(By.ID, "api-out").text
        )
        release = browser.find_element(By.CSS_SELECTOR, 'details[data-api="0"]')
        release.find_element(By.TAG_NAME, "summary").click()
        WebDriverWait(browser, 10).until(lambda _: release.find_elements(By.CSS_SELECTOR, ".apilist li"))  # on `toggle`
        boxes = browser.execute_script(
            "return Array.from(document.querySelectorAll('#api li')).filter((li) => li.offsetParent)"
            ".map((li) => { const r = li.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })"
        )
        assert len(boxes) > 12
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                overlap = min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
                assert not overlap, (a, b)
        spill = browser.execute_script(
            "const s = document.getElementById('api'); return [s.scrollWidth, s.clientWidth]"
        )
        assert spill[0] <= spill[1] + 1  # nothing in the section spills sideways
        browser.save_screenshot(str(tmp_path / f"api-{width}.png"))
    finally:
        browser.quit()
