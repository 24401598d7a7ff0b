"""The run history (issue 30, item 4): one entry per published run, the cells changed since the previous results
with their reason (a new release, a changed case, a changed result on an unchanged key: flagged), history.json
read, appended and written without ever losing the old file, `jax-conformance history`, and the report's "Since the
last run". Synthetic result files; no JAX needed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance import cli
from conformance.errors import ConformanceError
from conformance.results import history_file
from conformance.results.history import (
    CHANGED_CASE,
    KEY_NOT_RECORDED,
    NEW_CASE,
    NEW_RELEASE,
    REMOVED,
    UNCHANGED_KEY,
    entry_from_json,
    history_entry,
    summary_line,
)
from conformance.results.history_file import HistoryRequest, existing_history, history_text, parse_history, record_run
from conformance.results.load import load_results
from conformance.report.since import CellChanges, since_markdown, since_view
from tests.chromium import needs_chromium
from tests.synthetic_results import cell, write

PLATFORM = "linux-x86_64"
SCHEMA = Path(__file__).resolve().parent.parent / "conformance" / "report" / "schemas" / "history.schema.json"
PRINTED = [{"path": "message", "expected": "a", "observed": "b", "kind": "changed"}]


def cells(**statuses: str) -> list[dict]:
    """Cells `demo.<name>` with the given statuses, each with a key of its own name (`k-<name>`)."""
    return [cell(f"demo.{name}", status=status, key=f"k-{name}") for name, status in statuses.items()]


def folder(root: Path, name: str, runs: dict[str, list[dict]]) -> Path:
    """A results folder holding one file per JAX version."""
    for jax, found in runs.items():
        write(root / name, jax, PLATFORM, found)
    return root / name


BASE = {"0.4.38": cells(a="conforms", b="differs", c="unsupported")}


def entry_of(tmp_path, before: dict | None, after: dict, **kwargs):
    previous = load_results(folder(tmp_path, "before", before)) if before else None
    return history_entry(previous, load_results(folder(tmp_path, "after", after)), "2026-12-01", **kwargs)


def test_the_first_run_is_every_cell_new(tmp_path):
    entry = entry_of(tmp_path, None, {**BASE, "0.5.0": cells(a="conforms")}, commit="ABCDEF1234")
    assert entry.first_run and entry.commit == "abcdef1234" and entry.date == "2026-12-01"
    assert entry.releases == ["0.4.38", "0.5.0"] and entry.platforms == [PLATFORM] and entry.cells == 4
    assert entry.counts == {
        "conforms": 2,
        "differs": 1,
        "unsupported": 1,
        "error": 0,
        "crash": 0,
        "timeout": 0,
        "skipped": 0,
        "flaky": 0,
    }
    assert entry.changes[NEW_RELEASE] == 4 and entry.total_changes == 4 and entry.changed == []
    assert [(c.jax, c.cells) for c in entry.new_columns] == [("0.4.38", 3), ("0.5.0", 1)]
    assert entry.suite_version == "0.2.0"


def test_nothing_changed_is_zero_changes(tmp_path):
    entry = entry_of(tmp_path, BASE, BASE)
    assert not entry.first_run and entry.total_changes == 0 and entry.changed == [] and entry.keys_changed == 0
    assert entry.new_columns == [] and entry.removed_columns == [] and entry.cells == 3
    assert summary_line(entry) == "0 cells changed: 0 new release, 0 changed case, 0 changed on an unchanged key"


def test_a_new_release_counts_its_cells_and_lists_its_column(tmp_path):
    entry = entry_of(tmp_path, BASE, {**BASE, "0.13.0": cells(a="differs", b="conforms")})
    assert entry.changes[NEW_RELEASE] == 2 and entry.total_changes == 2 and entry.changed == []
    assert [(c.jax, c.platform, c.cells) for c in entry.new_columns] == [("0.13.0", PLATFORM, 2)]
    assert entry.releases == ["0.4.38", "0.13.0"]  # PEP 440 order, not text order


def test_a_changed_key_with_another_result_is_a_changed_case(tmp_path):
    after = {
        "0.4.38": [
            cell("demo.a", status="differs", key="k-a2"),
            cell("demo.b", status="differs", key="k-b2"),
            cell("demo.c", status="unsupported", key="k-c"),
        ]
    }
    entry = entry_of(tmp_path, BASE, after)
    assert [(c.cell, c.reason, c.before, c.after) for c in entry.changed] == [
        ("demo.a", CHANGED_CASE, "conforms", "differs")
    ]
    assert entry.changes[CHANGED_CASE] == 1 and entry.flagged == 0
    assert entry.keys_changed == 2  # demo.b ran again for its new key and kept its status: counted, not listed


def test_a_changed_result_on_an_unchanged_key_is_flagged(tmp_path):
    after = {
        "0.4.38": [
            cell("demo.a", status="differs", key="k-a"),
            cell("demo.b", status="differs", key="k-b", printed_diff=PRINTED),
            cell("demo.c", status="unsupported", key="k-c"),
        ]
    }
    entry = entry_of(tmp_path, BASE, after)
    assert [(c.cell, c.reason, c.flagged) for c in entry.changed] == [
        ("demo.a", UNCHANGED_KEY, True),
        ("demo.b", UNCHANGED_KEY, True),
    ]  # the printed mark alone counts too
    changed_b = entry.changed[1]
    assert (changed_b.before, changed_b.after, changed_b.printed_before, changed_b.printed_after) == (
        "differs",
        "differs",
        False,
        True,
    )
    assert entry.flagged == 2 and summary_line(entry).endswith("2 changed on an unchanged key — flagged")


def test_new_removed_and_keyless_cells_and_removed_columns(tmp_path):
    before = {**BASE, "0.5.0": cells(a="conforms"), "0.6.0": [cell("demo.old", status="conforms")]}
    after = {"0.4.38": cells(a="conforms", b="differs", d="conforms"), "0.6.0": [cell("demo.old", status="error")]}
    entry = entry_of(tmp_path, before, after)
    assert [(c.cell, c.jax, c.reason, c.before, c.after) for c in entry.changed] == [
        ("demo.old", "0.6.0", KEY_NOT_RECORDED, "conforms", "error"),
        ("demo.d", "0.4.38", NEW_CASE, None, "conforms"),
        ("demo.c", "0.4.38", REMOVED, "unsupported", None),
    ]
    assert [(c.jax, c.cells) for c in entry.removed_columns] == [("0.5.0", 1)]
    assert entry.changes[REMOVED] == 2 and entry.changes[NEW_CASE] == 1  # a removed column's cells count as removed


def test_the_listed_cells_are_capped_flagged_first_and_the_counts_stay_complete(tmp_path):
    before = {"0.4.38": cells(**{f"c{i}": "conforms" for i in range(5)})}
    after = {
        "0.4.38": [cell(f"demo.c{i}", status="differs", key=f"k-c{i}" if i == 4 else f"new-{i}") for i in range(5)]
    }
    entry = entry_of(tmp_path, before, after, max_listed=2)
    assert [c.cell for c in entry.changed] == ["demo.c4", "demo.c0"] and entry.changed[0].flagged
    assert entry.changed_left_out == 3 and entry.changes[CHANGED_CASE] == 4 and entry.flagged == 1


def test_a_commit_that_is_not_one_is_refused():
    with pytest.raises(ConformanceError, match="not a git commit"):
        history_entry(None, [], "2026-12-01", commit="main; rm -rf /")


# ------------------------------------------------------------------ history.json


def schema_problems(data) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]


def test_entries_round_trip_and_the_file_matches_its_schema(tmp_path):
    entry = entry_of(
        tmp_path,
        {**BASE, "0.5.0": cells(a="conforms")},
        {"0.4.38": cells(a="differs", b="differs", d="conforms"), "0.6.0": cells(a="conforms")},
    )
    text = history_text([entry, entry])
    assert parse_history(text) == [entry, entry] and entry_from_json(entry.to_json()) == entry
    data = json.loads(text)
    assert schema_problems(data) == []
    data["entries"][0]["changed"][0]["reason"] = "cosmic rays"
    assert schema_problems(data) != []  # the schema can fail
    with pytest.raises(history_file.HistoryFormatError, match="reason"):
        parse_history(json.dumps(data))


def request(tmp_path, previous: str | None, results: str, **kwargs) -> HistoryRequest:
    return HistoryRequest(
        tmp_path / previous if previous else None, tmp_path / results, tmp_path / "site" / "history.json", **kwargs
    )


def test_runs_append_one_entry_each_and_the_oldest_go_past_the_cap(tmp_path, monkeypatch):
    folder(tmp_path, "one", BASE)
    folder(tmp_path, "two", {**BASE, "0.5.0": cells(a="conforms")})
    monkeypatch.setattr(history_file, "MAX_ENTRIES", 2)
    first = record_run(request(tmp_path, "missing", "one", commit="a" * 40))
    assert first.entries == 1 and first.entry.first_run and any("starting a new one" in n for n in first.notices)
    record_run(request(tmp_path, "one", "two"))
    third = record_run(request(tmp_path, "two", "two"))
    kept = parse_history((tmp_path / "site" / "history.json").read_text(encoding="utf-8"))
    assert third.entries == 2 and [e.changes[NEW_RELEASE] for e in kept] == [1, 0]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '{"format": "something else", "entries": []}',
        '{"format": "jax-conformance-history", "version": 1, "entries": [{"date": 1}]}',
        "\udcff",
    ],
)
def test_an_unreadable_history_is_set_aside_never_lost(tmp_path, content):
    folder(tmp_path, "one", BASE)
    history = tmp_path / "site" / "history.json"
    history.parent.mkdir()
    history.write_bytes(content.encode("utf-8", "surrogateescape"))
    recorded = record_run(request(tmp_path, None, "one"))
    aside = [p for p in history.parent.iterdir() if p.name.startswith("history.json.unreadable-")]
    assert len(aside) == 1 and aside[0].read_bytes() == content.encode("utf-8", "surrogateescape")
    assert recorded.entries == 1 and len(parse_history(history.read_text(encoding="utf-8"))) == 1
    assert any(f"set aside as {aside[0].name}" in n for n in recorded.notices)


@pytest.mark.parametrize("cells_value", ["x", [1, 2], 1e400, None])
def test_a_column_with_a_bad_cell_count_is_a_bad_history_not_a_traceback(tmp_path, capsys, cells_value):
    folder(tmp_path, "one", BASE)
    record_run(request(tmp_path, None, "one"))
    history = tmp_path / "site" / "history.json"
    data = json.loads(history.read_text(encoding="utf-8"))
    data["entries"][0]["new_columns"][0]["cells"] = cells_value  # a history.json restored from the site
    history.write_text(json.dumps(data), encoding="utf-8")
    assert (
        cli.main(["report", str(tmp_path / "one"), "-o", str(tmp_path / "index.html"), "--history", str(history)]) == 2
    )
    assert "new_columns[0]" in capsys.readouterr().err
    bad = history.read_bytes()
    recorded = record_run(request(tmp_path, "one", "one"))
    aside = [p for p in history.parent.iterdir() if p.name.startswith("history.json.unreadable-")]
    assert len(aside) == 1 and aside[0].read_bytes() == bad and recorded.entries == 1


def test_a_history_from_a_newer_suite_is_refused_and_kept(tmp_path):
    history = tmp_path / "history.json"
    history.write_text('{"format": "jax-conformance-history", "version": 99, "entries": []}', encoding="utf-8")
    with pytest.raises(ConformanceError, match="newer"):
        existing_history(history)
    assert "99" in history.read_text(encoding="utf-8")


# ------------------------------------------------------------------ the command line


def test_the_history_command_prints_a_summary_and_exits_0(tmp_path, capsys):
    folder(tmp_path, "one", BASE)
    folder(
        tmp_path,
        "two",
        {
            "0.4.38": [cell("demo.a", status="differs", key="k-a"), *cells(b="differs", c="unsupported")],
            "0.5.0": cells(a="conforms"),
        },
    )
    history = tmp_path / "history.json"
    assert (
        cli.main(
            [
                "history",
                "--previous",
                str(tmp_path / "none"),
                "--results",
                str(tmp_path / "one"),
                "--history",
                str(history),
                "--commit",
                "abc1234",
                "--date",
                "2026-11-30",
            ]
        )
        == 0
    )
    assert "3 cells changed: 3 new release" in capsys.readouterr().out
    assert (
        cli.main(
            [
                "history",
                "--previous",
                str(tmp_path / "one"),
                "--results",
                str(tmp_path / "two"),
                "--history",
                str(history),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "2 cells changed: 1 new release, 0 changed case, 1 changed on an unchanged key — flagged" in out
    assert "flagged (same key, another result): demo.a on jax 0.4.38 linux-x86_64: conforms → differs" in out
    assert [e.date for e in parse_history(history.read_text(encoding="utf-8"))][0] == "2026-11-30"
    assert "ran again for a changed key" not in out  # no key changed
    folder(
        tmp_path,
        "three",
        {
            "0.4.38": [
                cell("demo.a", status="differs", key="k-a"),
                cell("demo.b", status="differs", key="edited"),
                *cells(c="unsupported"),
            ],
            "0.5.0": cells(a="conforms"),
        },
    )
    assert (
        cli.main(
            [
                "history",
                "--previous",
                str(tmp_path / "two"),
                "--results",
                str(tmp_path / "three"),
                "--history",
                str(history),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "0 cells changed: 0 new release, 0 changed case" in out and "1 cell(s) ran again for a changed key" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--results", "{tmp}/nowhere"], "no such folder"),
        (["--results", "{tmp}/one", "--commit", "not-a-sha"], "not a git commit"),
        (["--results", "{tmp}/one", "--history", "{tmp}"], "is a folder"),
        (["--results", "{tmp}/one", "--history", "{tmp}/one/0.4.38-linux-x86_64.json"], "named like a result file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    folder(tmp_path, "one", BASE)
    argv = [a.format(tmp=tmp_path) for a in argv]
    if "--history" not in argv:
        argv += ["--history", str(tmp_path / "history.json")]
    assert cli.main(["history", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------------ the report


def two_runs(tmp_path) -> tuple[Path, Path]:
    """A site folder with a history of two runs (the second flags demo.a) and the second run's results."""
    folder(tmp_path, "one", BASE)
    two = folder(
        tmp_path,
        "two",
        {
            "0.4.38": [
                cell("demo.a", status="differs", key="k-a"),
                cell("demo.b", status="conforms", key="k-b2"),
                *cells(c="unsupported"),
            ],
            "0.5.0": cells(a="conforms"),
        },
    )
    site = tmp_path / "site"
    record_run(HistoryRequest(None, tmp_path / "one", site / "history.json", "1111111", None))
    record_run(HistoryRequest(tmp_path / "one", two, site / "history.json", "2222222", None))
    return site, two


def test_the_report_shows_since_the_last_run_with_reasons(tmp_path):
    site, two = two_runs(tmp_path)
    assert (
        cli.main(
            [
                "report",
                str(two),
                "-o",
                str(site / "index.html"),
                "--markdown",
                str(site / "index.md"),
                "--history",
                str(site / "history.json"),
            ]
        )
        == 0
    )
    page = (site / "index.html").read_text(encoding="utf-8")
    since = page[page.index('id="since"') : page.index('id="overview"')]
    assert page.index('id="since"') < page.index('id="overview"')  # at the top
    assert 'class="flag"' in since and "1 cell changed on an unchanged key" in since and "<code>demo.a</code>" in since
    assert "1 changed case" in since and "<code>demo.b</code>" in since and "jax 0.5.0</strong>" in since
    assert "2026" in since and "(1111111)" in since and 'href="./history.json"' in since  # the previous run, linked
    markdown = (site / "index.md").read_text(encoding="utf-8")
    assert markdown.index("## Since the last run") < markdown.index("## Overview")
    assert "changed on an unchanged key (flagged)" in markdown and "demo.b on jax 0.4.38" in markdown


def test_a_change_on_several_releases_is_one_line_and_the_cap_is_said(tmp_path):
    before = {v: cells(a="conforms", b="conforms") for v in ("0.4.38", "0.5.0", "0.6.0", "0.7.0", "0.8.0")}
    after = {v: [cell("demo.a", status="differs", key="edited"), *cells(b="conforms")] for v in before}
    entry = entry_of(tmp_path, before, after, max_listed=3)
    view = since_view([entry])
    (group,) = view.groups
    assert (group.reason, group.total, group.listed) == (CHANGED_CASE, 5, 3)
    assert [c.text() for c in group.cells] == ["demo.a on jax 0.4.38, 0.5.0, 0.6.0 · linux-x86_64: conforms → differs"]
    lines = since_markdown(view)
    assert (
        "- … and 2 more changed cells (the HTML page lists 200 per run at most, history.json counts every one)"
    ) in lines
    many = CellChanges(
        "demo.a", PLATFORM, "", "conforms", "differs", False, False, ["0.4.38", "0.5.0", "0.6.0", "0.7.0", "0.8.0"]
    )
    assert many.versions_text == "0.4.38 … 0.8.0 (5 releases)"


def test_without_history_the_report_has_no_such_section(tmp_path):
    _, two = two_runs(tmp_path)
    assert (
        cli.main(["report", str(two), "-o", str(tmp_path / "index.html"), "--markdown", str(tmp_path / "index.md")])
        == 0
    )
    assert 'id="since"' not in (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "Since the last run" not in (tmp_path / "index.md").read_text(encoding="utf-8")


def test_the_report_names_an_unreadable_history_in_one_line(tmp_path, capsys):
    _, two = two_runs(tmp_path)
    (tmp_path / "bad.json").write_text("[]", encoding="utf-8")
    for history in ("bad.json", "missing.json"):
        assert (
            cli.main(["report", str(two), "-o", str(tmp_path / "index.html"), "--history", str(tmp_path / history)])
            == 2
        )
        err = capsys.readouterr().err
        assert history in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "bad.json").read_text(encoding="utf-8") == "[]"  # the report never moves a history
    site = tmp_path / "site"
    kept = (site / "history.json").read_text(encoding="utf-8")
    assert (
        cli.main(
            [
                "report",
                str(two),
                "-o",
                str(site / "index.html"),
                "--markdown",
                str(site / "history.json"),
                "--history",
                str(site / "history.json"),
            ]
        )
        == 2
    )
    assert "which this command reads" in capsys.readouterr().err
    assert (site / "history.json").read_text(encoding="utf-8") == kept


@needs_chromium
@pytest.mark.parametrize("phone", [False, True], ids=["1400px", "390px"])
def test_the_section_reads_in_chromium_without_widening_a_phone(tmp_path, phone):
    pytest.importorskip("selenium")
    from selenium.webdriver.common.by import By

    from conformance.report.screenshots import _browser

    site, two = two_runs(tmp_path)
    assert cli.main(["report", str(two), "-o", str(site / "index.html"), "--history", str(site / "history.json")]) == 0
    browser = _browser(phone)
    try:
        browser.get((site / "index.html").as_uri())
        flag = browser.find_element(By.ID, "since-flagged")
        assert flag.is_displayed() and "demo.a" in flag.text
        width = browser.execute_script("return window.innerWidth")
        assert width == (390 if phone else 1400)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        assert flag.rect["x"] + flag.rect["width"] <= width
        if phone:
            return
        violations = axe_violations(browser)
        if violations is None:
            pytest.skip(
                "axe-core is not installed (npm install --prefix .ci axe-core, or set AXE_CORE_JS): the "
                "layout was checked, the accessibility was not"
            )
        assert violations == []
    finally:
        browser.quit()


def axe_violations(browser) -> list | None:
    """axe-core's violations on the page (None without axe-core; in CI its absence fails, as in the page's tests)."""
    import os

    from tests.test_browser_questions import axe_source

    source = axe_source()
    if source is None:
        if os.environ.get("CI"):
            raise RuntimeError("axe-core is needed in CI: npm install --prefix .ci axe-core")
        return None
    browser.execute_script(source)
    browser.set_script_timeout(60)
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1]; axe.run(document, {resultTypes: ['violations']}).then("
        "(r) => done(r.violations.map((v) => [v.id, v.help, v.nodes.slice(0, 3).map((n) => n.target.join(' '))])));"
    )


def test_a_history_file_named_like_a_url_is_linked_as_a_relative_file(tmp_path):
    """A08: `report --history FILE` linked the file by its raw path, so a file named `javascript:…` became a link
    whose script ran on click. Each part is quoted and the link starts `./`: always a file beside the page."""
    from conformance.report.render import history_href

    site, two = two_runs(tmp_path)
    hostile = site / "javascript:alert(document.domain)"
    hostile.write_bytes((site / "history.json").read_bytes())
    assert cli.main(["report", str(two), "-o", str(site / "index.html"), "--history", str(hostile)]) == 0
    page = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="javascript:' not in page and 'href="./javascript%3Aalert%28document.domain%29"' in page
    assert history_href(site / "a b" / "h#1.json", site / "index.html") == "./a%20b/h%231.json"
    assert history_href(tmp_path / "elsewhere.json", site / "index.html") == ""
