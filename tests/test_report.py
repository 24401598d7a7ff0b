"""Tests of the HTML report and Markdown summary, fed by the golden result files in tests/golden/ (no JAX needed)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from markupsafe import escape

import conformance
from conformance.core.case import Case, Expect, Param
from conformance.report.html import (
    NOT_RUN,
    UNKNOWN_SECTION,
    build_table,
    markdown_summary,
    render_html,
    rerun_command,
    write_report,
)
from conformance.results.load import ResultsError, load_results
from conformance.results.schema import result_file_from_json
from conformance.core.status import MEANING, Status

GOLDEN = Path(__file__).parent / "golden"
OLD, NEW = "0.4.38", "0.12.0.1"
GENERATED_AT = "2026-11-30T08:00:00+00:00"


def probe_sum():
    """Golden probe: a sum."""
    return {"total": 6, "calls": 1}


def probe_dtype(param):
    """Golden probe: a dtype."""
    return {"dtype": "float32", "shape": [3]}


def make_case(case_id, section, probe=probe_sum, params=("",), known_issue=False, notes=""):
    """A declared case like the `case` decorator builds, without registering it."""
    return Case(
        id=case_id,
        section=section.split()[0],
        heading=section,
        claim=f"claim of {case_id}",
        params=tuple(Param(p, (f"row.{case_id}.{p or 'all'}",), Expect({}), known_issue) for p in params),
        probe=probe,
        notes=notes,
    )


CASES = [
    make_case("demo.conforming", "§1 Basics", notes="summed <twice>"),
    make_case("demo.changed", "§2 Dtypes", probe=probe_dtype, params=("old", "new")),
    make_case("demo.known_bug", "§0 Known issues", known_issue=True),
    make_case("demo.segfault", "§10 Crashes"),
    make_case("demo.escaping", "§2 Dtypes"),
    make_case("demo.raising", "§1 Basics"),
]


@pytest.fixture(scope="module")
def runs():
    return load_results(GOLDEN)


@pytest.fixture(scope="module")
def table(runs):
    return build_table(runs, CASES)


@pytest.fixture(scope="module")
def html(table):
    return render_html(table, GENERATED_AT)


def row_of(table, cell_id):
    """The row of `cell_id` in `table`."""
    [row] = [row for row in table.rows if row.cell_id == cell_id]
    return row


def words(table, cell_id):
    """The words shown for `cell_id`, column by column."""
    return [cell.word for cell in row_of(table, cell_id).cells]


# ---------------------------------------------------------------- loading


def test_directory_means_every_json_file(runs):
    assert sorted(Path(r.source).name for r in runs) == ["0.12.0.1-linux-x86_64.json", "0.4.38-linux-x86_64.json"]
    assert {r.header.jax for r in runs} == {OLD, NEW}


def test_bad_json_is_a_one_line_error_naming_the_file(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"tests": [\n', encoding="utf-8")
    with pytest.raises(ResultsError) as info:
        load_results([bad])
    message = str(info.value)
    assert "\n" not in message
    assert str(bad) in message
    assert "not JSON" in message


def test_missing_header_is_a_one_line_error_naming_the_file(tmp_path):
    plain = tmp_path / "plain-pytest.json"
    plain.write_text(json.dumps({"tests": [], "summary": {}}), encoding="utf-8")
    with pytest.raises(ResultsError) as info:
        load_results(plain)
    message = str(info.value)
    assert "\n" not in message
    assert str(plain) in message
    assert "jax_conformance" in message


def test_newer_schema_is_refused(tmp_path):
    report = json.loads((GOLDEN / "0.4.38-linux-x86_64.json").read_text(encoding="utf-8"))
    report["jax_conformance"]["schema_version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(ResultsError, match=r"newer.json: `jax_conformance.schema_version` is 99, newer than the 2"):
        load_results(newer)


def test_unknown_status_is_refused(tmp_path):
    report = json.loads((GOLDEN / "0.4.38-linux-x86_64.json").read_text(encoding="utf-8"))
    report["tests"][0]["metadata"]["status"] = "sort-of"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(ResultsError, match=r"odd.json: `tests\[0\].metadata.status` is 'sort-of', not one of"):
        load_results(odd)


def test_missing_file_and_empty_directory(tmp_path):
    with pytest.raises(ResultsError, match="nothere.json: no such file"):
        load_results(tmp_path / "nothere.json")
    with pytest.raises(ResultsError, match="holds no result files"):
        load_results(tmp_path)


def test_results_error_is_a_value_error():
    assert issubclass(ResultsError, ValueError)


# ---------------------------------------------------------------- the table


def test_columns_are_sorted_by_version_not_text(table):
    # As text "0.12.0.1" < "0.4.38", and the files load in that order.
    assert [c.jax for c in table.columns] == [OLD, NEW]


def test_counts_and_percentage_per_column(table):
    old, new = table.columns
    assert {k: v for k, v in old.counts.items() if v} == {"conforms": 4, "crash": 1, "unsupported": 1, NOT_RUN: 1}
    assert {k: v for k, v in new.counts.items() if v} == {"conforms": 1, "differs": 3, "error": 1, NOT_RUN: 2}
    assert list(old.counts) == [s.value for s in Status] + [NOT_RUN]
    assert old.conforming_text == "66.7%"
    assert new.conforming_text == "20%"


def test_known_issue_rows_use_known_issue_wording(table):
    row = row_of(table, "demo.known_bug")
    assert row.known_issue
    assert words(table, "demo.known_bug") == ["bug still present", "changed: maybe fixed"]
    assert words(table, "demo.changed[new]") == ["conforms", "differs"]


def test_cell_not_a_known_issue_on_its_platform_uses_plain_words(runs):
    edited = copy.deepcopy(runs)
    for run in edited:
        for cell in run.cells:
            if cell.case == "demo.known_bug":
                cell.known_issue = False
    assert words(build_table(edited, CASES), "demo.known_bug") == ["conforms", "differs"]


def test_missing_cell_is_not_run(table):
    assert words(table, "demo.segfault") == ["crash", NOT_RUN]
    assert words(table, "demo.raising") == [NOT_RUN, "error"]
    assert row_of(table, "demo.segfault").cells[1].status is None


def test_sections_in_chapter_order_with_unknown_last(table):
    assert [s.title for s in table.sections] == [
        "§0 Known issues", "§1 Basics", "§2 Dtypes", "§10 Crashes", UNKNOWN_SECTION]
    assert [r.cell_id for r in table.sections[1].rows] == ["demo.conforming", "demo.raising"]
    [unknown] = table.sections[-1].rows
    assert unknown.cell_id == "legacy.removed_case"
    assert unknown.rows == ("legacy.removed",)
    assert unknown.claim == ""


def test_row_carries_the_declaration(table):
    row = row_of(table, "demo.changed[new]")
    assert row.claim == "claim of demo.changed"
    assert row.rows == ("row.demo.changed.new",)
    assert "def probe_dtype(param):" in row.source


def test_cell_carries_the_reproduction(table):
    cell = row_of(table, "demo.segfault").cells[0]
    assert cell.command == ("PYTHONPATH=/work/main /envs/jax-0.4.38/bin/python -m conformance.child "
                            "demo.segfault --out observation.json")
    assert cell.rerun == "jax-conformance run --jax 0.4.38 -k demo.segfault"
    assert "Segmentation fault" in cell.stderr_tail


def test_default_cases_still_show_unknown_ids():
    table = build_table(load_results(GOLDEN))  # the suite's own cases: none of the golden ids
    assert [s.title for s in table.sections] == [UNKNOWN_SECTION]
    assert len(table.rows) == 7


def test_later_file_for_the_same_run_wins_a_cell(runs):
    rerun = copy.deepcopy(next(r for r in runs if r.header.jax == NEW))
    rerun.header.finished_at = "2026-12-01T00:00:00+00:00"
    rerun.cells = [c for c in rerun.cells if c.case == "demo.raising"]
    rerun.cells[0].status = Status.CONFORMS
    table = build_table([*runs, rerun], CASES)
    assert len(table.columns) == 2
    assert words(table, "demo.raising") == [NOT_RUN, "conforms"]
    assert words(table, "demo.changed[new]") == ["conforms", "differs"]


def test_test_without_metadata_is_an_error_cell(runs):
    broken = json.loads((GOLDEN / "0.4.38-linux-x86_64.json").read_text(encoding="utf-8"))
    broken["tests"] = [{"nodeid": "conformance/cases/demo.py::changed[old]", "outcome": "failed",
                        "call": {"outcome": "failed", "crash": {"message": "RuntimeError: pool died"}}}]
    table = build_table([result_file_from_json(broken, "broken.json")], CASES)
    cell = row_of(table, "demo.changed[old]").cells[0]
    assert cell.status is Status.ERROR
    assert "RuntimeError: pool died" in cell.reason


# ---------------------------------------------------------------- HTML


def test_html_has_version_columns_in_version_order(html):
    assert html.index("jax 0.4.38") < html.index("jax 0.12.0.1")
    assert "numpy</dt><dd>1.26.4" in html and "numpy</dt><dd>2.5.5" in html


def test_html_shows_counts_and_percentage(html):
    for text in ("4 conforms", "1 crash", "1 unsupported", "3 differs", "1 error", f"2 {NOT_RUN}",
                 "66.7% conforming", "20% conforming"):
        assert text in html, text


def test_html_escapes_observations_and_has_no_script(html):
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html  # stdout tail
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html  # details
    assert "summed &lt;twice&gt;" in html  # notes
    assert "<script" not in html.lower()


def test_html_is_self_contained(html):
    lowered = html.lower()
    for external in ("<link", "@import", "src=", "http://", "https://", "url("):
        assert external not in lowered, external
    assert "<style>" in html


def test_html_cells_show_words_and_colours(html):
    assert re.search(r'<td class="cell st-differs">\s*<details><summary>changed: maybe fixed', html)
    assert re.search(r'<td class="cell st-conforms">\s*<details><summary>bug still present', html)
    assert re.search(r'<td class="cell st-not-run"[^>]*>not run</td>', html)
    css = html[html.index("<style>"):html.index("</style>")]
    for status in Status:
        assert f".st-{status.value} " in css, status


def test_html_opens_a_cell_to_its_evidence(html):
    assert "<code>dtype</code></td><td><code>&#34;float32&#34;</code></td><td><code>&#34;bfloat16&#34;</code>" in html
    assert "Fatal Python error: Segmentation fault" in html
    assert "TypeError: unsupported operand" in html
    assert "/envs/jax-0.12.0.1/bin/python -m conformance.child demo.changed new --out observation.json" in html
    assert str(escape(rerun_command(NEW, "demo.changed[new]"))) in html
    assert "-k &#39;demo.changed[new]&#39;" in html
    assert "def probe_sum():" in html


def test_html_legend_and_stamp(html):
    for status in Status:
        assert str(escape(MEANING[status])) in html, status
    assert "bug still present</span> (for <em>conforms</em>)" in html
    assert "changed: maybe fixed</span> (for <em>differs</em>)" in html
    assert f"jax-conformance {conformance.__version__} · generated {GENERATED_AT}" in html


def test_html_section_headings(html):
    headings = re.findall(r'<tr class="section"><th colspan="3" scope="rowgroup">(.*?)</th>', html)
    assert headings == ["§0 Known issues", "§1 Basics", "§2 Dtypes", "§10 Crashes", UNKNOWN_SECTION]


# ---------------------------------------------------------------- Markdown and writing


def test_markdown_summary(table):
    lines = markdown_summary(table).splitlines()
    assert lines[0] == "| Section | Cell | jax 0.4.38 (linux-x86_64) | jax 0.12.0.1 (linux-x86_64) |"
    assert lines[1] == "|---|---|---|---|"
    assert lines[2] == "| §0 Known issues | demo.known_bug (known issue) | bug still present | changed: maybe fixed |"
    assert "| §10 Crashes | demo.segfault | crash | not run |" in lines
    assert "| §2 Dtypes | demo.changed[new] | conforms | differs |" in lines
    assert lines[-1] == "| | % conforming | 66.7% | 20% |"
    assert len(lines) == 2 + 7 + 1


def test_write_report_is_atomic_and_creates_folders(tmp_path, html):
    out = tmp_path / "site" / "nested" / "report.html"
    assert write_report(GOLDEN, out, cases=CASES, generated_at=GENERATED_AT) == out
    assert out.read_text(encoding="utf-8") == html
    out.write_text("old", encoding="utf-8")
    write_report(load_results(GOLDEN), out, cases=CASES, generated_at=GENERATED_AT)
    assert out.read_text(encoding="utf-8") == html
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]


def test_write_report_leaves_nothing_behind_on_error(tmp_path):
    out = tmp_path / "report.html"
    with pytest.raises(ResultsError):
        write_report([tmp_path / "missing.json"], out)
    assert list(tmp_path.iterdir()) == []


def test_probe_source_is_written_once_per_row_and_linked_from_cells(table, html):
    rows_of_case = [row for row in table.rows if row.case_id == "demo.changed"]
    assert html.count("def probe_dtype(param):") == len(rows_of_case) >= 1
    assert 'id="src-demo.changed[new]"' in html and 'href="#src-demo.changed[new]"' in html
