"""The report's outputs to paste and to hand to other tools: the Markdown page, the compat JSON (shaped like MDN
browser-compat-data) and the wptreport JSON, each checked on synthetic results, on the golden files and on the
published report's data (rebuilt from reports/index.html). The Markdown is rendered with cmark-gfm, GitHub's own
renderer; the JSON outputs are validated against their schemas with jsonschema and with check-jsonschema. The
wptreports themselves (one per run, wpt.fyi's rules) are tested in tests/test_wptreport.py."""

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
from conformance.report.markdown import code, link_target, markdown_summary, text
from conformance.report.model import build_model
from conformance.results.load import load_results
from tests.published_report import published_files
from tests.synthetic_results import cell, files
from tests.test_report import CASES, GOLDEN
from tests.wptfyi_rules import report_problems

SCHEMAS = Path(__file__).resolve().parent.parent / "conformance" / "report" / "schemas"
COMPAT_SCHEMA = SCHEMAS / "compat.schema.json"
WPT_SCHEMA = SCHEMAS / "wptreport.schema.json"
PLATFORM = "linux-x86_64"
# A page one pastes: half of GitHub's 65,536-character limit on a comment, so a team's own words fit beside it.
# (25 KiB until the Performance summary; the page with every section and site links is about 26 KiB.)
MARKDOWN_BUDGET = 32 * 1024


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

HOSTILE = [
    "<script>alert(1)</script>",
    "[vmap](https://example.com)",
    "![x](y.png)",
    "*bold* **strong**",
    "_emphasis_ and __strong__",
    "a | b || c",
    "`rm -rf` and ``two``",
    "~~struck~~ ~one~",
    "&amp; &#91; &lt;",
    "\\[already\\] \\",
    "debug_nans_vmap_miss and _lead and trail_",
    "line\nbreak\ttab",
    "see https://auto.link now",
    "1. not a list",
    "# not a heading",
    "x > y < z",
]


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
    model = model_of(
        {
            "0.4.38": [cell("a.b", observation={"ok": True}, printed_expected={"w": "x"})],
            "0.5.0": [
                cell(
                    "a.b",
                    observation={"ok": True, "w": "y"},
                    printed_expected={"w": "x"},
                    printed_diff=[{"path": "w", "expected": "x", "observed": "y"}],
                )
            ],
        }
    )
    page = markdown_summary(model, full=True)
    assert "- printed output changed in 1 cell, status unchanged" in page and "`a.b` (conforms" not in page


def test_the_published_page_is_under_its_budget_and_renders_its_tables(published):
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
    runs = [
        files("0.4.38", PLATFORM, [cell("a.b", status="differs")]),
        files("0.5.0", PLATFORM, [cell("a.b")]),
        files("0.4.38", "darwin-arm64", [cell("a.b")]),
        files("0.5.0", "darwin-arm64", [cell("a.b")]),
    ]
    model = build_model(runs, [])
    page = markdown_summary(model)
    assert "| jax | platform | conforming |" in page and "| 0.5.0 | darwin-arm64 | 100% |" in page
    assert "| `a.b` | linux-x86_64 | 0.5.0 | 0.4.38 | conforms |" in page.split("## Since which release")[1]


# ------------------------------------------------------------------ the command line


def test_report_writes_every_output_and_check_jsonschema_accepts_them(tmp_path, capsys):
    out = tmp_path / "site"
    argv = [
        "report",
        str(GOLDEN),
        "-o",
        str(out / "index.html"),
        "--markdown",
        str(out / "index.md"),
        "--markdown-full",
        "--html-link",
        "https://reports.example/jax/",
        "--compat-json",
        str(out / "compat.json"),
        "--wptreport",
        str(out / "wpt"),
    ]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "compat json: " in printed and "wptreport: " in printed
    page = (out / "index.md").read_text(encoding="utf-8")
    assert "## Every cell" in page and "(https://reports.example/jax/)" in page
    wptreports = sorted((out / "wpt").iterdir())
    assert [p.name for p in wptreports] == [
        "wptreport-0.12.0.1-linux-x86_64.json",
        "wptreport-0.4.38-linux-x86_64.json",
    ]  # one per run
    for schema, paths in ((COMPAT_SCHEMA, [out / "compat.json"]), (WPT_SCHEMA, wptreports)):
        checked = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema), *map(str, paths)],
            capture_output=True,
            text=True,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    assert all(report_problems(path.read_bytes()) == [] for path in wptreports)


def test_report_refuses_an_extra_output_over_a_result_file(tmp_path, capsys):
    result = sorted(GOLDEN.glob("*.json"))[0]
    assert cli.main(["report", str(GOLDEN), "-o", str(tmp_path / "i.html"), "--compat-json", str(result)]) == 2
    assert "is a result file" in capsys.readouterr().err


@pytest.mark.parametrize(
    "where, said",
    [
        ("a file", "is a file; name a folder (one file per run is written into it)"),
        ("a .json name", "is named like a file; it takes a folder"),
        ("the results", "holds result files; write the output to another folder"),
        ("the page's path", "both name"),
    ],
)
def test_report_refuses_a_wptreport_folder_that_cannot_be_one_in_one_line(tmp_path, capsys, where, said):
    (tmp_path / "old.json").write_text("{}", encoding="utf-8")
    folder = {
        "a file": tmp_path / "old.json",
        "a .json name": tmp_path / "wptreport.json",
        "the results": GOLDEN,
        "the page's path": tmp_path / "i.html",
    }[where]
    assert cli.main(["report", str(GOLDEN), "-o", str(tmp_path / "i.html"), "--wptreport", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "--wptreport" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "i.html").exists() and (tmp_path / "old.json").read_text(encoding="utf-8") == "{}"


# ------------------------------------------------------------------ Markdown: notes with code


@pytest.mark.parametrize(
    "value, shown",
    [
        ("calls `callback(*args)` on line 101", "<p>calls <code>callback(*args)</code> on line 101</p>\n"),
        ("a `<script>` tag and ``", "<p>a `&lt;script&gt;` tag and ``</p>\n"),
        ("one ` alone and *stars*", "<p>one ` alone and *stars*</p>\n"),
    ],
)
def test_prose_marks_code_spans_and_never_holds_a_tag(value, shown):
    from conformance.report.markdown import prose

    raw = prose(value)
    assert render(raw) == shown
    assert not re.search(r"(?<!\\)<", raw)  # every `<` of the raw text escaped


def test_markdown_options_without_a_markdown_page_are_refused_in_one_line(tmp_path, capsys):
    assert cli.main(["report", str(GOLDEN), "-o", str(tmp_path / "i.html"), "--markdown-full"]) == 2
    err = capsys.readouterr().err.strip()
    assert "add --markdown PATH" in err and len(err.splitlines()) == 1 and not (tmp_path / "i.html").exists()
