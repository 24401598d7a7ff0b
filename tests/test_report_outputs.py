"""The report's outputs to paste and to hand to other tools: the Markdown page, the compat JSON (shaped like MDN
browser-compat-data) and the wptreport JSON, each checked on synthetic results, on the golden files and on the
published report's data (rebuilt from reports/index.html). The Markdown is rendered with cmark-gfm, GitHub's own
renderer; the JSON outputs are validated against their schemas with jsonschema and with check-jsonschema."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import cmarkgfm
import jsonschema
import pytest

from conformance import cli
from conformance.core.case import load_cases
from conformance.report.compat import compat_data
from conformance.report.markdown import code, link_target, markdown_summary, text
from conformance.report.model import build_model
from conformance.report.notes import row_notes
from conformance.report.wptreport import fact_of, wptreport
from conformance.results.load import load_results
from tests.published_report import published_files
from tests.synthetic_results import cell, files
from tests.test_report import CASES, GOLDEN

SCHEMAS = Path(__file__).resolve().parent.parent / "conformance" / "report" / "schemas"
COMPAT_SCHEMA = SCHEMAS / "compat.schema.json"
WPT_SCHEMA = SCHEMAS / "wptreport.schema.json"
PLATFORM = "linux-x86_64"
MARKDOWN_BUDGET = 25 * 1024


def render(markdown: str) -> str:
    """HTML as GitHub renders the Markdown (cmark-gfm with its table, strikethrough and autolink extensions)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown)


def without_autolinks(rendered: str) -> str:
    """GitHub links a bare URL in any text (the text shown stays the URL): that link taken away, the text kept."""
    return re.sub(r'<a href="[^"]*">((?:https?://|www\.)[^<]*)</a>', r"\1", rendered)


def validator(schema_path: Path) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(schema_path: Path, data) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(schema_path).iter_errors(data)]


@pytest.fixture(scope="module")
def published():
    return build_model(published_files(), load_cases())


@pytest.fixture(scope="module")
def golden():
    return build_model(load_results(GOLDEN), CASES)


def model_of(history: dict[str, list[dict]]):
    """A model from `{jax version: [cell metadata]}` on one platform."""
    return build_model([files(v, PLATFORM, cells) for v, cells in history.items()], [])


# ------------------------------------------------------------------ Markdown: escaping

HOSTILE = ["<script>alert(1)</script>", "[vmap](https://example.com)", "![x](y.png)", "*bold* **strong**",
           "_emphasis_ and __strong__", "a | b || c", "`rm -rf` and ``two``", "~~struck~~ ~one~", "&amp; &#91; &lt;",
           "\\[already\\] \\", "debug_nans_vmap_miss and _lead and trail_", "line\nbreak\ttab", "see https://auto.link now",
           "1. not a list", "# not a heading", "x > y < z"]


@pytest.mark.parametrize("value", HOSTILE)
def test_text_renders_literally_in_a_paragraph_and_in_a_table_cell(value):
    flat = " ".join(value.split())
    paragraph = without_autolinks(render("Said: " + text(value)))
    assert html.unescape(re.sub(r"^<p>|</p>\n$", "", paragraph)) == "Said: " + flat
    assert "<a " not in paragraph and "<em>" not in paragraph and "<code>" not in paragraph
    table = without_autolinks(render(f"| a | b |\n|---|---|\n| {text(value)} | end |\n"))
    [first, second] = re.findall(r"<td>(.*?)</td>", table)
    assert html.unescape(first) == flat and second == "end"
    assert re.sub(r"\\(.)", r"\1", text(value)) == flat  # the raw text is the value plus backslashes, no entity


def test_underscores_inside_words_stay_unescaped_for_the_raw_reader():
    assert text("numerics.debug_nans_vmap_miss") == "numerics.debug_nans_vmap_miss"
    assert text("_lead trail_ a__b") == "\\_lead trail\\_ a\\_\\_b"


@pytest.mark.parametrize("value", ["numerics.debug_nans_vmap_miss[vmap]", "a`b", "`edge`", "x|y"])
def test_code_spans_render_their_text_in_and_outside_tables(value):
    assert html.unescape(render(code(value))) == f"<p><code>{value}</code></p>\n"
    row = render(f"| a |\n|---|\n| {code(value, in_table=True)} |\n")
    assert html.unescape(re.search(r"<td>(.*?)</td>", row).group(1)) == f"<code>{value}</code>"


def test_the_html_link_is_a_working_link_even_with_spaces_and_parentheses():
    target = "https://ci.example/jobs/4 (nightly)/index.html"
    rendered = render(f"[report]({link_target(target)})")
    assert 'href="https://ci.example/jobs/4%20%28nightly%29/index.html"' in rendered


# ------------------------------------------------------------------ Markdown: the page


def test_golden_page_has_header_legend_overview_and_compact_tables(golden):
    page = markdown_summary(golden, generated_at="2026-11-30 08:00 UTC", html_link="https://x.example/r/")
    head = page.split("## Overview")[0]
    assert page.startswith("# JAX conformance report")
    assert "Generated 2026-11-30 08:00 UTC by jax-conformance 0.2.0" in head
    assert "2 JAX releases (0.4.38 to 0.12.0.1) on linux-x86_64" in head
    assert "[Open the interactive report](https://x.example/r/)" in head
    assert "| changed: maybe fixed | differs on a known-issue row" in page.split("## Legend")[1]
    assert "[legend](#legend)" in head and page.rstrip().split("\n## ")[-1].startswith("Legend")  # at the end
    overview = page.split("## Overview")[1].split("##")[0]
    assert "| jax | conforming | conforms | differs | unsupported | error | crash | not run |" in overview
    assert "timeout" not in overview  # a status no column has is left out
    assert "| 0.4.38 | 66.7% | 4 | 0 | 1 | 0 | 1 | 2 | 0 |" in overview
    assert "| 0.12.0.1 (documented) | 20% |" in overview
    assert "| `demo.known_bug` | 0.4.38 | 0.12.0.1 | changed: maybe fixed |" in page.split("## Known issues")[1]
    since = page.split("## Since which release")[1]
    assert "| `demo.changed[new]` | 0.4.38 | 0.12.0.1 | differs |" in since
    assert "| `demo.escaping` | never | 0.4.38 (unsupported), 0.12.0.1 | differs |" in since
    assert "demo.conforming" not in since  # a row that never changes is left out
    assert "## Every cell" not in page and "## What changed" not in page
    assert "&#" not in page and "<script>" not in page


def test_full_page_adds_what_changed_and_every_cell(golden):
    page = markdown_summary(golden, full=True, generated_at="2026-11-30 08:00 UTC")
    changes = page.split("## What changed between neighbouring releases")[1].split("## Every cell")[0]
    assert "- regressed: `demo.changed[new]` (conforms → differs)" in changes
    assert "| §0 Known issues | `demo.known_bug` (known issue) | bug still present | changed: maybe fixed |" in page


def test_printed_only_changes_are_counted_not_listed():
    model = model_of({"0.4.38": [cell("a.b", observation={"ok": True}, printed_expected={"w": "x"})],
                      "0.5.0": [cell("a.b", observation={"ok": True, "w": "y"}, printed_expected={"w": "x"},
                                     printed_diff=[{"path": "w", "expected": "x", "observed": "y"}])]})
    page = markdown_summary(model, full=True)
    assert "- printed output changed in 1 cell, status unchanged" in page and "`a.b` (conforms" not in page


def test_the_published_page_is_under_25_kb_and_renders_its_tables(published):
    page = markdown_summary(published, generated_at="2026-12-01 12:00 UTC")
    full = markdown_summary(published, full=True, generated_at="2026-12-01 12:00 UTC")
    size = len(page.encode("utf-8"))
    assert size < MARKDOWN_BUDGET, f"the published Markdown page is {size} bytes"
    assert len(full.encode("utf-8")) > MARKDOWN_BUDGET  # the cells table is what --markdown-full adds
    rendered = render(page)
    assert rendered.count("<table>") == 4  # legend, overview, known issues, since which release
    assert rendered.count("<tr>") > 27 + 40 and "<script" not in rendered
    assert "`numerics.debug_nans_vmap_miss[vmap]` | 0.8.0–0.12.0.1 | 0.4.38–0.7.2 | bug still present |" in page
    assert "## Where JAX 0.12.0.1 differs from the chapter" in page
    assert page.count("**Why:**") == len(published.discrepancies) > 0


def test_several_platforms_get_a_platform_column_and_their_own_spans():
    runs = [files("0.4.38", PLATFORM, [cell("a.b", status="differs")]), files("0.5.0", PLATFORM, [cell("a.b")]),
            files("0.4.38", "darwin-arm64", [cell("a.b")]), files("0.5.0", "darwin-arm64", [cell("a.b")])]
    model = build_model(runs, [])
    page = markdown_summary(model)
    assert "| jax | platform | conforming |" in page and "| 0.5.0 | darwin-arm64 | 100% |" in page
    assert "| `a.b` | linux-x86_64 | 0.5.0 | 0.4.38 | conforms |" in page.split("## Since which release")[1]
    data = compat_data(model)
    assert data["a"]["b"]["__compat"]["support"] == {
        "darwin-arm64": {"version_added": "≤0.4.38", "version_last": "0.5.0"},
        PLATFORM: {"version_added": "0.5.0", "version_last": "0.5.0"}}
    assert problems(COMPAT_SCHEMA, data) == []


# ------------------------------------------------------------------ compat JSON


def entry(data, row_id):
    node = data
    for part in row_id.split("."):
        node = node[part]
    return node["__compat"]


def test_support_comes_and_goes_as_an_array_newest_first():
    statuses = {"0.4.38": "differs", "0.5.0": "conforms", "0.6.0": "conforms", "0.7.0": "differs",
                "0.8.0": "conforms"}
    model = model_of({v: [cell("a.b", status=s, notes="")] for v, s in statuses.items()})
    data = compat_data(model, "2026-12-01T00:00:00+00:00")
    assert problems(COMPAT_SCHEMA, data) == []
    support = entry(data, "a.b")["support"][PLATFORM]
    assert support == [{"version_added": "0.8.0", "version_last": "0.8.0"},
                       {"version_added": "0.5.0", "version_removed": "0.7.0", "version_last": "0.6.0"}]
    assert data["__meta"]["releases"] == {PLATFORM: list(statuses)}


def test_conforming_from_the_oldest_measured_release_is_a_ranged_version_and_never_is_false():
    model = model_of({"0.4.38": [cell("a.b"), cell("a.c", status="differs")],
                      "0.5.0": [cell("a.b"), cell("a.c", status="unsupported")]})
    data = compat_data(model)
    assert entry(data, "a.b")["support"][PLATFORM] == {"version_added": "≤0.4.38", "version_last": "0.5.0"}
    assert entry(data, "a.c")["support"][PLATFORM] == {"version_added": False}
    assert problems(COMPAT_SCHEMA, data) == []


def test_a_row_checked_by_several_cells_is_partial_where_only_some_conform():
    both = {"rows": ["a.shared"]}
    model = model_of({"0.4.38": [cell("a.p", "x", **both), cell("a.p", "y", status="differs", **both)],
                      "0.5.0": [cell("a.p", "x", **both), cell("a.p", "y", **both)]})
    data = compat_data(model)
    compat = entry(data, "a.shared")
    assert compat["cells"] == ["a.p[x]", "a.p[y]"]
    [newer, older] = compat["support"][PLATFORM]
    assert newer == {"version_added": "0.5.0", "version_last": "0.5.0"}
    assert older["partial_implementation"] is True and older["version_removed"] == "0.5.0"
    assert "a.p[x]" in older["notes"] and "a.p[y]" not in older["notes"]
    assert problems(COMPAT_SCHEMA, data) == []


def test_a_known_issue_row_has_its_state_per_release_and_its_why_in_notes():
    bug = {"known_issue": True, "discrepancy": "measured: the bug is gone in 0.5.0"}
    model = model_of({"0.4.38": [cell("n.vm", "vmap", **bug)],
                      "0.5.0": [cell("n.vm", "vmap", status="differs", **bug)]})
    data = compat_data(model)
    compat = entry(data, "n.vm.vmap")
    assert compat["known_issue"] == {PLATFORM: {"0.4.38": "bug still present", "0.5.0": "bug absent"}}
    assert compat["support"][PLATFORM] == {"version_added": "≤0.4.38", "version_removed": "0.5.0",
                                           "version_last": "0.4.38", "notes": "measured: the bug is gone in 0.5.0"}
    block = model.sections[0].cases[0]
    assert row_notes(block, block.params[0]) == ["measured: the bug is gone in 0.5.0"]


def test_a_release_without_a_result_is_left_out_of_the_spans():
    model = model_of({"0.4.38": [cell("a.b", status="differs"), cell("a.c")], "0.5.0": [cell("a.c")],
                      "0.6.0": [cell("a.b"), cell("a.c")]})
    data = compat_data(model)
    assert entry(data, "a.b")["support"][PLATFORM] == {"version_added": "0.6.0", "version_last": "0.6.0"}
    assert "| `a.b` | 0.6.0 | 0.4.38 | conforms |" in markdown_summary(model)


def test_the_compat_schema_refuses_what_bcd_would():
    data = compat_data(model_of({"0.4.38": [cell("a.b")]}))
    assert problems(COMPAT_SCHEMA, data) == []
    for path, bad in ((("a", "b", "__compat", "support", PLATFORM, "version_added"), "soon"),
                      (("a", "b", "__compat", "support", PLATFORM, "notes"), ["only one"]),
                      (("a", "b", "__compat", "support", PLATFORM, "partial_implementation"), False),
                      (("a", "b", "__compat", "colour"), "red")):
        broken = json.loads(json.dumps(data))
        node = broken
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = bad
        assert problems(COMPAT_SCHEMA, broken), path


def test_the_published_compat_json_validates_and_has_one_entry_per_chapter_row(published):
    data = compat_data(published, "2026-12-01T12:00:00+00:00")
    assert problems(COMPAT_SCHEMA, data) == []
    rows = {r for row in published.param_rows for r in row.rows}
    found = []

    def walk(node, path):
        for key, value in node.items():
            if key == "__compat":
                found.append(".".join(path))
            elif not key.startswith("__"):
                walk(value, path + [key])

    walk(data, [])
    assert sorted(found) == sorted(rows) and len(rows) > 180
    vmap = entry(data, "numerics.debug_nans.vmap_miss.vmap")
    assert vmap["known_issue"][PLATFORM]["0.12.0.1"] == "bug still present"
    assert vmap["known_issue"][PLATFORM]["0.4.38"] == "bug absent"
    assert vmap["support"][PLATFORM]["version_added"] == "0.8.0"
    assert entry(data, "numerics.debug_nans.trigger.vmap_tracing")["cells"] == [
        "numerics.debug_nans_trigger[make_jaxpr_vmap]", "numerics.debug_nans_trigger[jit_vmap]"]


# ------------------------------------------------------------------ wptreport


def test_fact_of_a_diff_path():
    assert [fact_of(p) for p in ("dtype", "a.b", "types[0]", "<api>", "")] == ["dtype", "a", "types", "<api>", ""]


def test_one_run_is_a_plain_report_with_its_facts_as_subtests():
    model = model_of({"0.5.0": [
        cell("a.ok", expected={"x": 1, "y": 2}, observation={"x": 1, "y": 2}),
        cell("a.bad", status="differs", expected={"x": 1, "y": 2}, observation={"x": 1, "y": 3},
             diff=[{"path": "y", "expected": 2, "observed": 3}]),
        cell("a.gone", status="unsupported", reason="not yet there: jax.thing"),
        cell("a.boom", status="crash", reason="signal 11")]})
    report = wptreport(model)
    assert problems(WPT_SCHEMA, report) == []
    assert report["run_info"]["product"] == "jax" and report["run_info"]["jax"] == "0.5.0"
    assert report["subsuites"] == {}
    by_test = {r["test"]: r for r in report["results"]}
    assert by_test["/a.ok"]["status"] == "OK" and [s["status"] for s in by_test["/a.ok"]["subtests"]] == ["PASS"] * 2
    bad = by_test["/a.bad"]
    assert bad["status"] == "OK" and [(s["name"], s["status"]) for s in bad["subtests"]] == [("x", "PASS"),
                                                                                             ("y", "FAIL")]
    assert bad["subtests"][1]["message"] == "y: expected 2, observed 3"
    assert by_test["/a.gone"]["status"] == "PRECONDITION_FAILED" and by_test["/a.gone"]["subtests"] == []
    assert by_test["/a.boom"]["status"] == "CRASH" and "signal 11" in by_test["/a.boom"]["message"]


def test_several_runs_are_subsuites_each_with_its_run_info():
    model = model_of({"0.4.38": [cell("a.b")], "0.5.0": [cell("a.b", status="differs")]})
    report = wptreport(model)
    assert problems(WPT_SCHEMA, report) == []
    assert set(report["subsuites"]) == {"jax-0.4.38-linux-x86_64", "jax-0.5.0-linux-x86_64"}
    assert report["subsuites"]["jax-0.5.0-linux-x86_64"]["browser_version"] == "0.5.0"
    assert "jax" not in report["run_info"] and report["run_info"]["platform"] == PLATFORM
    assert [(r["subsuite"], r["subtests"][0]["status"]) for r in report["results"]] == [
        ("jax-0.4.38-linux-x86_64", "PASS"), ("jax-0.5.0-linux-x86_64", "FAIL")]


def test_odd_run_data_still_gives_a_valid_report():
    [run] = [files("0.5.0", PLATFORM, [cell("a.b", duration_s=-1.0, expected={"<b>\u2028": 1},
                                             observation={"<b>\u2028": 1})])]
    run.header.started_at, run.header.finished_at = "1960-01-01T00:00:00+00:00", "not a date"
    report = wptreport(build_model([run], []))
    assert problems(WPT_SCHEMA, report) == []
    assert "time_start" not in report and report["results"][0]["duration"] == 0
    assert report["results"][0]["subtests"][0]["name"] == "<b>\u2028"


def test_the_wptreport_schema_refuses_a_malformed_report():
    report = wptreport(model_of({"0.5.0": [cell("a.b")]}))
    for change in (lambda r: r["results"][0].update(test="a.b"), lambda r: r["results"][0].update(status="GOOD"),
                   lambda r: r["run_info"].pop("browser_version"), lambda r: r["run_info"].pop("revision"),
                   lambda r: r["results"][0]["subtests"][0].update(status="OK"), lambda r: r.pop("results")):
        broken = json.loads(json.dumps(report))
        change(broken)
        assert problems(WPT_SCHEMA, broken)


def test_the_published_wptreport_validates(published):
    report = wptreport(published)
    assert problems(WPT_SCHEMA, report) == []
    measured = sum(c.result is not None for row in published.param_rows for c in row.cells)
    assert len(report["subsuites"]) == len(published.columns) >= 27 and len(report["results"]) == measured
    assert report["time_start"] < report["time_end"]
    failing = {r["test"] for r in report["results"] if r["subsuite"] == "jax-0.12.0.1-linux-x86_64"
               and any(s["status"] == "FAIL" for s in r["subtests"])}
    assert failing == {"/" + d.cell_id for d in published.discrepancies} and len(failing) >= 4


# ------------------------------------------------------------------ the command line


def test_report_writes_every_output_and_check_jsonschema_accepts_them(tmp_path, capsys):
    out = tmp_path / "site"
    argv = ["report", str(GOLDEN), "-o", str(out / "index.html"), "--markdown", str(out / "index.md"),
            "--markdown-full", "--html-link", "https://reports.example/jax/", "--compat-json",
            str(out / "compat.json"), "--wptreport", str(out / "wptreport.json")]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "compat json: " in printed and "wptreport: " in printed
    page = (out / "index.md").read_text(encoding="utf-8")
    assert "## Every cell" in page and "(https://reports.example/jax/)" in page
    for schema, name in ((COMPAT_SCHEMA, "compat.json"), (WPT_SCHEMA, "wptreport.json")):
        checked = subprocess.run([sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema),
                                  str(out / name)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_report_refuses_an_extra_output_over_a_result_file(tmp_path, capsys):
    result = sorted(GOLDEN.glob("*.json"))[0]
    assert cli.main(["report", str(GOLDEN), "-o", str(tmp_path / "i.html"), "--wptreport", str(result)]) == 2
    assert "is a result file" in capsys.readouterr().err


# ------------------------------------------------------------------ Markdown: notes with code


@pytest.mark.parametrize("value, shown", [
    ("calls `callback(*args)` on line 101", "<p>calls <code>callback(*args)</code> on line 101</p>\n"),
    ("a `<script>` tag and ``", "<p>a `&lt;script&gt;` tag and ``</p>\n"),
    ("one ` alone and *stars*", "<p>one ` alone and *stars*</p>\n"),
])
def test_prose_marks_code_spans_and_never_holds_a_tag(value, shown):
    from conformance.report.markdown import prose

    raw = prose(value)
    assert render(raw) == shown
    assert not re.search(r"(?<!\\)<", raw)  # every `<` of the raw text escaped


def test_markdown_options_without_a_markdown_page_are_refused_in_one_line(tmp_path, capsys):
    assert cli.main(["report", str(GOLDEN), "-o", str(tmp_path / "i.html"), "--markdown-full"]) == 2
    err = capsys.readouterr().err.strip()
    assert "add --markdown PATH" in err and len(err.splitlines()) == 1 and not (tmp_path / "i.html").exists()


def test_a_rows_declared_status_changes_lead_its_notes():
    import dataclasses

    from conformance.core.case import Change

    model = model_of({"0.4.38": [cell("n.vm", "vmap", discrepancy="measured: gone in 0.5.0")]})
    block = model.sections[0].cases[0]
    declared = (Change(why="the check moved into pjit", evidence="jax/_src/pjit.py: _check", since="0.5.0"),)
    row = dataclasses.replace(block.params[0], declared_changes=declared)
    assert row_notes(block, row) == ["In 0.5.0: the check moved into pjit (evidence: jax/_src/pjit.py: _check)",
                                     "measured: gone in 0.5.0"]
