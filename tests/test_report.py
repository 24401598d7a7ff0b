"""The compatibility report: model, HTML, Markdown and JUnit, fed by the golden result files (no JAX needed)."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.core.case import Case, Expect, Param
from conformance.core.status import Status
from conformance.results.schema import SCHEMA_VERSION
from conformance.report.html import page_data, render_html, write_report
from conformance.report.junit import junit_xml
from conformance.report.markdown import markdown_summary
from conformance.report.model import NOT_RUN, UNKNOWN_SECTION, build_model, classify_change
from conformance.results.load import load_results
from conformance.results.schema import CellResult

GOLDEN = Path(__file__).parent / "golden"
OLD, NEW = "0.4.38", "0.12.0.1"
GENERATED_AT = "2026-11-30T08:00:00+00:00"


def probe_sum():
    """Golden probe: a sum."""
    return {"total": 6}


def probe_dtype(param):
    """Golden probe: a dtype."""
    return {"dtype": "float32"}


# As if declared in a case module of their own (whose source the report would embed).
probe_sum.__module__ = probe_dtype.__module__ = "golden_cases"


def make_case(case_id, heading, probe=probe_sum, params=("",), known_issue=False, notes=""):
    """A declared case as the decorator builds it, without registering it."""
    return Case(
        id=case_id,
        section=heading.split()[0],
        heading=heading,
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
def files():
    return load_results(GOLDEN)


@pytest.fixture(scope="module")
def model(files):
    return build_model(files, CASES)


@pytest.fixture(scope="module")
def page(model):
    return render_html(model, GENERATED_AT)


def row_of(model, cell_id):
    [row] = [r for r in model.param_rows if r.cell_id == cell_id]
    return row


def words(model, cell_id):
    return [c.word for c in row_of(model, cell_id).cells]


def data_block(page):
    found = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


# ---------------------------------------------------------------- the model


def test_columns_are_sorted_by_version_and_count_each_status(model):
    assert [c.jax for c in model.columns] == [OLD, NEW]
    old, new = model.columns
    assert {k: v for k, v in old.counts.items() if v} == {"conforms": 4, "crash": 1, "unsupported": 1, NOT_RUN: 2}
    assert {k: v for k, v in new.counts.items() if v} == {"conforms": 1, "differs": 3, "error": 1, NOT_RUN: 3}
    assert old.conforming_text == "66.7%" and new.conforming_text == "20%"


def test_known_issue_words_depend_on_the_direction(model, files):
    assert words(model, "demo.known_bug") == ["bug still present", "changed: maybe fixed"]
    older = copy.deepcopy(files)
    for f in older:
        if f.header.jax == NEW:
            f.header.jax = "0.11.0"
    assert words(build_model(older, CASES), "demo.known_bug") == ["bug still present", "bug absent"]


def test_a_known_issue_of_another_platform_uses_plain_words_and_is_never_called_fixed(files):
    elsewhere = [
        make_case("demo.known_bug", "§0 Known issues", known_issue=("darwin-arm64",)),
        *[c for c in CASES if c.id != "demo.known_bug"],
    ]
    model = build_model(files, elsewhere)
    assert words(model, "demo.known_bug") == ["conforms", "differs"]
    assert sorted(c.cell_id for c in model.steps[0].groups["regressed"]) == ["demo.changed[new]", "demo.known_bug"]
    assert "documented bug" not in {t.cell_id: t.text for t in model.timelines}["demo.known_bug"]


def test_missing_cells_are_not_run_and_undeclared_cases_get_their_own_section(model):
    assert words(model, "demo.segfault") == ["crash", NOT_RUN]
    assert words(model, "demo.raising") == [NOT_RUN, "error"]
    assert [s.heading for s in model.sections] == [
        "§0 Known issues",
        "§1 Basics",
        "§2 Dtypes",
        "§10 Crashes",
        UNKNOWN_SECTION,
    ]
    [unknown] = model.sections[-1].cases
    assert unknown.case_id == "legacy.removed_case" and unknown.params[0].rows == ["legacy.removed"]


def test_a_case_shows_its_claim_once_with_its_parameters_as_rows(model):
    [block] = [c for s in model.sections for c in s.cases if c.case_id == "demo.changed"]
    assert block.claim == "claim of demo.changed"
    assert [p.param for p in block.params] == ["old", "new"]
    assert words(model, "demo.changed[old]") == [NOT_RUN, NOT_RUN]


def test_the_file_that_finished_last_wins_a_cell_and_conflicts_are_kept(files):
    rerun = copy.deepcopy(next(f for f in files if f.header.jax == NEW))
    rerun.header.finished_at = "2999-01-01T00:00:00+00:00"
    rerun.source = "/somewhere/0.12.0.1-linux-x86_64-shard1of2.json"
    rerun.cells = [c for c in rerun.cells if c.case == "demo.raising"]
    rerun.cells[0].status = Status.CONFORMS
    model = build_model([*files, rerun], CASES)
    assert len(model.columns) == 2 and words(model, "demo.raising") == [NOT_RUN, "conforms"]
    assert [c.cell_id for c in model.conflicts] == ["demo.raising"]
    assert model.columns[1].sources == ["0.12.0.1-linux-x86_64.json", "0.12.0.1-linux-x86_64-shard1of2.json"]


def cell(status, observation=None, reason=""):
    return CellResult(case="m.c", param="", rows=[], status=status, observation=observation, reason=reason)


@pytest.mark.parametrize(
    "before, after, known, group",
    [
        (cell(Status.CONFORMS, 1), cell(Status.CONFORMS, 1), False, None),
        (cell(Status.DIFFERS, 1), cell(Status.CONFORMS, 2), False, "fixed"),
        (cell(Status.CONFORMS, 1), cell(Status.DIFFERS, 2), False, "regressed"),
        (cell(Status.CONFORMS, 1), cell(Status.CRASH), False, "regressed"),
        (cell(Status.CONFORMS, 1), cell(Status.DIFFERS, 2), True, "fixed"),
        (cell(Status.DIFFERS, 2), cell(Status.CONFORMS, 1), True, "regressed"),
        (cell(Status.UNSUPPORTED), cell(Status.DIFFERS, 1), False, "API added"),
        (cell(Status.CONFORMS, 1), cell(Status.DIFFERS, None, "removed: jax.x"), False, "API removed"),
        (cell(Status.DIFFERS, 1), cell(Status.DIFFERS, 2), False, "changed"),
    ],
)
def test_changes_are_grouped(before, after, known, group):
    assert classify_change(before, after, known) == group


def test_what_changed_between_adjacent_versions_and_since_when(model):
    [step] = model.steps
    assert (step.before, step.after) == (OLD, NEW)
    assert [c.cell_id for c in step.groups["regressed"]] == ["demo.changed[new]"]
    assert [c.cell_id for c in step.groups["fixed"]] == ["demo.known_bug"]
    assert [c.cell_id for c in step.groups["API added"]] == ["demo.escaping"]
    texts = {t.cell_id: t.text for t in model.timelines}
    assert texts["demo.known_bug"] == (
        f"present since {OLD} or earlier; goes away between {OLD} and {NEW} "
        f"(releases between them, if any, have no result here)"
    )
    assert texts["demo.conforming"] == f"behaves as documented since {OLD} or earlier"


def test_several_platforms_give_one_sub_column_each(files):
    mac = copy.deepcopy(files)
    for f in mac:
        f.header.platform = "darwin-arm64"
    model = build_model([*files, *mac], CASES)
    assert [(c.jax, c.platform) for c in model.columns] == [
        (OLD, "darwin-arm64"),
        (OLD, "linux-x86_64"),
        (NEW, "darwin-arm64"),
        (NEW, "linux-x86_64"),
    ]
    assert model.versions == [(OLD, [0, 1]), (NEW, [2, 3])]
    assert {s.platform for s in model.steps} == {"darwin-arm64", "linux-x86_64"}


# ---------------------------------------------------------------- the page


def test_page_is_self_contained_and_stamped(page, model):
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert re.findall(r"<script[^>]*\bsrc=", page) == []
    assert '<meta name="generator" content="jax-conformance ' in page
    assert f'"jax-conformance-schema" content="{SCHEMA_VERSION}"' in page
    assert "0.4.38-linux-x86_64.json" in page and GENERATED_AT in page


def test_page_has_no_local_paths(page):
    assert str(GOLDEN) not in page and "/root/" not in page and "/home/" not in page and "/tmp/" not in page


def test_every_observed_string_is_escaped(page):
    assert "<script>alert" not in page
    raw = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in raw and ">" not in raw
    assert "<script>alert(1)</script>" in json.dumps(data_block(page))


def test_data_block_holds_cell_details_once_and_the_markup_only_words(page, model):
    data = data_block(page)
    assert len(data["rows"]) == len(model.param_rows) and len(data["cells"][0]) == len(model.columns)
    segfault = data["rows"].index(next(r for r in data["rows"] if r["id"] == "demo.segfault"))
    crash = data["cells"][segfault][0]
    assert crash["s"] == "crash" and "SIGSEGV" in crash["r"]
    assert data["cases"][0]["source"].lstrip().startswith("def probe_")
    assert page.count("def probe_sum") == 5  # once per case that uses it, never once per cell
    # The table is drawn from the data block (only its visible part): the markup holds no cell, let alone its details.
    markup = page.split('id="data"')[0]
    assert 'id="tb"' in markup and 'class="c ' not in markup and "SIGSEGV" not in markup


def test_overview_has_counts_and_a_stacked_bar_per_column(page):
    assert page.count('<svg class="bar"') == 2
    assert "<title>4 conforms</title>" in page and "66.7%" in page


def test_filters_and_sections_are_there(page):
    for needle in ('name="st" value="conforms"', 'id="f-sec"', 'id="f-text"', 'id="f-changes"', "data-toggle="):
        assert needle in page


def test_reproduction_script_parts_are_embedded(page):
    data = data_block(page)
    assert "class Observation" in data["prelude"] and "def outcome_of" in data["prelude"]
    assert "from conformance" not in data["prelude"].split("from conformance.scripts")[0]


def test_markdown_summary_escapes_and_lists_changes(model):
    text = markdown_summary(model, full=True)
    assert text.startswith("# JAX conformance report")
    assert "| 0.4.38 | 66.7% | 4 | 0 | 1 | 0 | 1 | 2 | 0 |" in text
    assert "- regressed: `demo.changed[new]` (conforms → differs)" in text
    assert "| §0 Known issues | `demo.known_bug` (known issue) | bug still present | changed: maybe fixed |" in text
    assert "&#" not in text and "<script>" not in text
    since = text.split("## Since which release")[1].split("##")[0]
    assert "| `demo.changed[new]` | 0.4.38 | 0.12.0.1 | differs |" in since
    assert "demo.conforming" not in since  # a row that never changes is left out
    assert "| `demo.known_bug` | 0.4.38 | 0.12.0.1 |" in text.split("## Known issues")[1]


def test_junit_has_one_testcase_per_cell(model):
    root = ET.fromstring(junit_xml(model))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"jax {OLD} linux-x86_64", f"jax {NEW} linux-x86_64"]
    new = suites[1]
    assert new.get("tests") == "5" and new.get("failures") == "3" and new.get("errors") == "1"
    assert {c.get("name") for c in new.findall("testcase")} >= {"demo.changed[new]", "demo.raising"}


def test_write_report_is_atomic_and_creates_folders(tmp_path, files):
    out = write_report(
        files,
        tmp_path / "a" / "b" / "index.html",
        cases=CASES,
        generated_at=GENERATED_AT,
        outputs={"markdown": tmp_path / "a" / "index.md", "junit": tmp_path / "a" / "junit.xml"},
    )
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert (tmp_path / "a" / "index.md").exists() and (tmp_path / "a" / "junit.xml").exists()
    assert [p.name for p in out.parent.iterdir()] == ["index.html"]


def test_page_data_of_the_real_suite_has_every_module_once():
    from conformance.core.case import load_cases

    cases = load_cases()
    data = page_data(build_model([], cases))
    assert data["rows"] == [] and data["modules"] == {}


def test_the_committed_report_matches_the_code():
    from conformance import __version__
    from conformance.core.case import load_cases

    committed = Path(__file__).resolve().parents[1] / "reports" / "index.html"
    data = data_block(committed.read_text(encoding="utf-8"))
    assert data["suite"] == __version__, "reports/index.html is from another suite version: regenerate it"
    assert {c["id"] for c in data["cases"]} == {c.id for c in load_cases()}, (
        "reports/index.html shows another set of cases: regenerate it from a default-matrix run"
    )
    assert len({c["jax"] for c in data["columns"]}) >= 9


def test_a_column_says_how_its_cells_were_started():
    from conformance.report.model import launch_summary
    from conformance.results.schema import CellResult

    cells = [
        CellResult(case="a.b", param="", rows=["r"], status=Status.CONFORMS, launcher=name)
        for name in ("fork", "fork", "spawn", "")
    ]
    assert launch_summary("spawn (no cell to fork)", cells) == "2 fork, 1 spawn (last run: spawn (no cell to fork))"
    assert launch_summary("", []) == "?"


def test_screenshots_of_a_missing_page_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from screenshots import main  # benchmarks/screenshots.py: the command line lives outside the package

    assert main([str(tmp_path / "missing.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.html is not a file" in err


# ---------------------------------------------------------------- printed output and the chapter's discrepancies


def _tier_files():
    from tests.synthetic_results import cell, files as synthetic

    printed = {"message": "old wording"}
    wording = [{"path": "message", "expected": "old wording", "observed": "new wording", "kind": "changed"}]
    old = synthetic(
        OLD,
        "linux-x86_64",
        [
            cell(
                "demo.worded",
                "",
                "conforms",
                {"raised": "TypeError", "message": "old wording"},
                printed_expected=printed,
            ),
            cell(
                "demo.wrong_chapter",
                "",
                "differs",
                {"receives": "Array"},
                diff=[{"path": "receives", "expected": "ndarray", "observed": "Array", "kind": "changed"}],
            ),
        ],
    )
    new = synthetic(
        NEW,
        "linux-x86_64",
        [
            cell(
                "demo.worded",
                "",
                "conforms",
                {"raised": "TypeError", "message": "new wording"},
                printed_expected=printed,
                printed_diff=wording,
            ),
            cell(
                "demo.wrong_chapter",
                "",
                "differs",
                {"receives": "Array"},
                diff=[{"path": "receives", "expected": "ndarray", "observed": "Array", "kind": "changed"}],
            ),
        ],
    )
    cuda = synthetic(NEW, "linux-x86_64-cuda", [cell("demo.wrong_chapter", "", "differs", {"receives": "Array"})])
    cases = [
        make_case("demo.worded", "§4 Tracers"),
        Case(
            id="demo.wrong_chapter",
            section="§1",
            heading="§1 Values",
            claim="the callback receives NumPy arrays",
            params=(
                Param(
                    "",
                    ("row.wrong",),
                    Expect({}),
                    discrepancy="measured jax.Array on every release; jax/_src/debugging.py passes arrays through",
                ),
            ),
            probe=probe_sum,
        ),
    ]
    return [old, new, cuda], cases


def test_printed_output_marks_the_cell_keeps_its_status_and_is_a_change_of_its_own():
    model = build_model(*_tier_files())
    row = row_of(model, "demo.worded")
    assert [c.status for c in row.cells] == ["conforms", "conforms", NOT_RUN]
    assert [c.printed_differs for c in row.cells] == [False, True, False]
    assert [c.printed_differs for c in model.columns] == [0, 1, 0]
    [step] = [s for s in model.steps if s.platform == "linux-x86_64"]
    assert [c.cell_id for c in step.groups["printed output changed"]] == ["demo.worded"]
    assert step.groups["changed"] == []
    page = render_html(model, GENERATED_AT)
    assert 'id="f-printed"' in page  # the page draws the P mark from the cell's printed diff (test_browser_navigation)
    cell_data = data_block(page)["cells"][[r["id"] for r in data_block(page)["rows"]].index("demo.worded")][1]
    assert cell_data["pd"][0]["observed"] == "new wording" and cell_data["s"] == "conforms"
    summary = markdown_summary(model, full=True)
    assert "conforms (printed output differs)" in summary and "| printed output differs |" in summary
    junit = junit_xml(model)
    assert (
        'name="printed_output_differs" value="true"' in junit
        and "<failure" not in junit.split('name="demo.worded"')[2].split("</testcase>")[0]
    )


def test_a_row_that_differs_on_the_documented_release_is_listed_with_its_note_on_cpu_platforms_only():
    model = build_model(*_tier_files())
    assert [(d.cell_id, d.platform, d.jax) for d in model.discrepancies] == [
        ("demo.wrong_chapter", "linux-x86_64", NEW)
    ]
    assert "jax/_src/debugging.py" in model.discrepancies[0].note
    page = render_html(model, GENERATED_AT)
    section = page.split('id="discrepancies"')[1].split("<h2")[0]
    assert "the callback receives NumPy arrays" in section and "jax/_src/debugging.py" in section
    assert "demo.worded" not in section and "cuda" not in section
    assert "## Where JAX 0.12.0.1 differs from the chapter" in markdown_summary(model)
    assert "- `demo.wrong_chapter` on linux-x86_64" in markdown_summary(model)


def test_an_unexplained_discrepancy_says_so():
    files, cases = _tier_files()
    cases = [cases[0], make_case("demo.wrong_chapter", "§1 Values")]
    page = render_html(build_model(files, cases), GENERATED_AT)
    assert "No note yet: this discrepancy is unexplained." in page


def test_a_report_of_cells_this_suite_does_not_declare_takes_sections_and_claims_from_the_result_files():
    """issue 19 item 5: `report` without --cases still shows a team's cells under their section, with the claim."""
    from tests.synthetic_results import cell, files as synthetic

    team = synthetic(
        NEW,
        "linux-x86_64",
        [
            cell(
                "teamcases/nan_guard.after_vmap",
                "",
                "conforms",
                heading="Team §1 Our NaN guard",
                section="Team §1",
                claim="our guard catches NaNs after vmap",
            ),
            cell("elsewhere.unknown", "", "conforms"),
        ],
    )
    model = build_model([team], [])
    headings = {s.heading: [c.case_id for c in s.cases] for s in model.sections}
    assert headings["Team §1 Our NaN guard"] == ["teamcases/nan_guard.after_vmap"]
    assert headings[UNKNOWN_SECTION] == ["elsewhere.unknown"]
    [block] = [c for s in model.sections for c in s.cases if c.case_id == "teamcases/nan_guard.after_vmap"]
    assert block.claim == "our guard catches NaNs after vmap"


def test_what_changed_names_the_exact_release_when_every_release_between_has_a_result(files):
    """issue 20: "appears in 0.8.0 (0.7.2 is the last release without it)"; a range only where a release between
    them has no result, and then it says which."""
    from conformance.report.model import change_point

    releases = ["0.7.2", "0.8.0", "0.8.1"]
    assert change_point("0.7.2", "0.8.0", releases, "without it") == "in 0.8.0 (0.7.2 is the last release without it)"
    assert change_point("0.7.2", "0.8.1", releases, "without it") == "between 0.7.2 and 0.8.1 (0.8.0 has no result)"
    exact = build_model(files, CASES, releases=[OLD, NEW])
    texts = {t.cell_id: t.text for t in exact.timelines}
    assert (
        texts["demo.known_bug"] == f"present since {OLD} or earlier; goes away in {NEW} ({OLD} is the last "
        f"release with it)"
    )
    gap = build_model(files, CASES, releases=[OLD, "0.8.0", NEW])
    assert {t.cell_id: t.text for t in gap.timelines}["demo.known_bug"].endswith("(0.8.0 has no result)")


def test_every_declared_case_s_reproduction_script_loads_with_nothing_but_the_standard_library(tmp_path):
    """A reproduction script (the report's, and bisect --issue's) is the case module behind stand-ins for the case
    API: every name a case module imports from it must exist there (`Change` was missing: every script raised
    NameError before reaching its probe). Loaded without jax and without this suite on the path; the probe is not
    called (that needs jax), only everything up to it."""
    import subprocess
    import sys

    from conformance.core.case import load_cases
    from conformance.report.repro import reproduction_script

    modules = {}
    for case in load_cases():
        modules.setdefault(case.id.split(".")[0], case)
    assert len(modules) >= 10
    for name, case in modules.items():
        script = tmp_path / f"{name}.py"
        script.write_text(reproduction_script(case, case.params[0].name if case.params else "", "0.12.0.1"))
        loaded = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                "import runpy, sys; runpy.run_path(sys.argv[1], run_name='loaded_only')",
                str(script),
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert loaded.returncode == 0, f"{name}: {loaded.stderr[-800:]}"
