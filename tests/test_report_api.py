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
    data = {"format": FORMAT, "format_version": FORMAT_VERSION, "jax": jax, "platform": PLATFORM,
            "python": "3.13.0", "modules": modules, "names": names}
    (folder / "api").mkdir(parents=True, exist_ok=True)
    (folder / "api" / f"{jax}-{PLATFORM}.json").write_text(json.dumps(data), encoding="utf-8")


FN = {"kind": "function", "state": "present", "signature": "(f, tree)", "params": [["f", "positional_or_keyword", None]]}


@pytest.fixture
def results(tmp_path) -> Path:
    folder = tmp_path / "results"
    for version in ("0.5.3", "0.6.0", "0.6.1"):
        write(folder, version, PLATFORM, [cell("values.dtype", "", "conforms")])
    census_file(folder, "0.5.3", {"jax.tree_map": {**FN, "state": "deprecated",
                                                   "message": "jax.tree_map is deprecated: use jax.tree.map"}})
    census_file(folder, "0.6.0", {"jax.tree_map": {"kind": None, "state": "removed",
                                                   "message": "jax.tree_map was removed in JAX v0.6.0"}})
    census_file(folder, "0.6.1", {"jax.tree_map": {"kind": None, "state": "removed", "message": "removed"},
                                  "jax.shard_map": FN})
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
        "version_added": "≤0.5.3", "version_removed": "0.6.0", "version_last": "0.5.3"}
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

    page = tmp_path / "index.html"
    assert cli.main(["report", str(results), "-o", str(page)]) == 0
    browser = start_chromium()
    try:
        browser.get(page.as_uri())
        browser.find_element(By.CSS_SELECTOR, 'a[href="#api"]').click()
        box = browser.find_element(By.ID, "api-q")
        box.send_keys("tree_map")
        out = browser.find_element(By.ID, "api-out").text
        assert "jax.tree_map: usable since 0.5.3 or earlier; deprecated since 0.5.3 or earlier; removed in 0.6.0 " \
               "(last in 0.5.3)" in out
        box.clear()
        box.send_keys("shard_map")
        assert browser.find_element(By.ID, "api-out").text == \
            "jax.shard_map: usable since 0.6.1; still there in the newest release"
        box.clear()
        box.send_keys("no_such_name")
        assert "No public name matches “no_such_name”" in browser.find_element(By.ID, "api-out").text
        release = browser.find_element(By.CSS_SELECTOR, 'details[data-api="0"]')
        release.find_element(By.TAG_NAME, "summary").click()
        assert "Removed (1)\njax.tree_map" in release.text
    finally:
        browser.quit()
