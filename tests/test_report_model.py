"""`report.model`, piece by piece: columns, table cells, rows, declared explanations, timelines, deprecations and
the model's own views, each on small synthetic inputs with the exact values the page shows."""

from __future__ import annotations

from conformance.core.case import Change as DeclaredChange
from conformance.core.status import Status
from conformance.report import model
from conformance.report.model import (
    NOT_RUN,
    CaseBlock,
    Column,
    Explanation,
    ParamRow,
    ReportModel,
    TableCell,
    Transition,
    VersionStep,
)
from conformance.results.schema import CellResult

import pytest


def _column(jax: str = "0.8.0", platform: str = "linux-x86_64", **extra) -> Column:
    return Column(
        jax, platform, "3.11", extra.pop("jaxlib", jax), "2.0", "fork", "0.2.0", 4, "s", "f", ["x.json"], **extra
    )


def _result(status: str = "conforms", observation=None, **extra) -> CellResult:
    return CellResult(
        "a.b",
        extra.pop("param", ""),
        ["a.b"],
        Status(status),
        observation={"ok": True} if observation is None else observation,
        **extra,
    )


# ---- Column -------------------------------------------------------------------------------------------------------


def test_column_label_series_and_jaxlib():
    assert _column().label == "0.8.0" and _column(build="wheel files").label == "0.8.0 (wheel files)"
    assert [_column(v).series for v in ("0.8.3", "0.12.0.1", "1", "2.0", "0.4.38rc1", "nightly")] == [
        "0.8",
        "0.12",
        "1.0",
        "2.0",
        "0.4",
        "nightly",
    ]
    assert not _column().jaxlib_differs and not _column(jaxlib="?").jaxlib_differs
    assert _column(jaxlib="0.7.9").jaxlib_differs


@pytest.mark.parametrize(
    "counts, percent, text",
    [
        ({"conforms": 2, "differs": 1, "skipped": 5, NOT_RUN: 4}, 200 / 3, "66.7%"),
        ({"conforms": 1, "crash": 1}, 50.0, "50%"),
        ({"conforms": 1, "differs": 7}, 12.5, "12.5%"),
        ({"conforms": 1, "differs": 9}, 10.0, "10%"),
        ({"conforms": 3}, 100.0, "100%"),
        ({"differs": 3}, 0.0, "0%"),
        ({"skipped": 2, NOT_RUN: 1}, None, "–"),
        ({}, None, "–"),
    ],
)
def test_column_conforming_share(counts, percent, text):
    column = _column(counts=counts)
    assert column.conforming_percent == (pytest.approx(percent) if percent is not None else None)
    assert column.conforming_text == text


def test_column_names_its_jax_for_a_command_line():
    assert _column().quoted_version == "0.8.0" and _column("0.8 x").quoted_version == "'0.8 x'"
    assert _column().run_target == "--jax 0.8.0" and _column("0.8 x").run_target == "--jax '0.8 x'"
    assert _column("0.12.0.1+corp.3").run_target == "--wheels WHEELS_DIR"


@pytest.mark.parametrize(
    "kind, target",
    [
        ("python", "--python PYTHON"),
        ("wheels", "--wheels WHEELS_DIR"),
        ("pair", "--pair 0.12.0.1:0.11.2"),
        ("source", "--python PYTHON"),
    ],
)
def test_a_build_of_a_release_version_is_reproduced_as_its_build_never_as_the_release(kind, target):
    """N19: a build of 0.12.0.1 (no local label) said `--jax 0.12.0.1` under "Reproduce this cell anywhere"."""
    from conformance.report.model import build_model
    from conformance.results.schema import result_file_from_json
    from tests.synthetic_results import cell, report

    data = report("0.12.0.1", "linux-x86_64", [cell("values.dtype", "", "conforms")], schema=3)
    data["jax_conformance"]["source"] = {"kind": kind, "jax": "0.12.0.1", "jaxlib": "0.11.2"}
    data["jax_conformance"]["jaxlib"] = "0.11.2"
    column = build_model([result_file_from_json(data, "x.json")], []).columns[0]
    assert column.run_target == target and "--jax" not in column.run_target


# ---- TableCell, ParamRow, CaseBlock ---------------------------------------------------------------------------------


def test_table_cell_css_bug_state_and_glyph():
    assert TableCell(NOT_RUN, NOT_RUN).css == "not-run" and TableCell("differs", "differs").css == "differs"
    assert not TableCell(NOT_RUN, NOT_RUN).printed_differs
    assert not TableCell("conforms", "conforms", _result()).printed_differs
    assert TableCell("conforms", "conforms", _result(printed_diff=[{"path": "m"}])).printed_differs
    words = {
        "bug still present": ("present", "●"),
        "bug absent": ("absent", "○"),
        "changed: maybe fixed": ("maybe-fixed", "○"),
        "conforms": ("", "✓"),
    }
    for word, (state, glyph) in words.items():
        cell = TableCell("differs" if word != "conforms" else "conforms", word)
        assert (cell.bug_state, cell.glyph) == (state, glyph)
    assert [TableCell(s, s).glyph for s in model.GLYPHS] == list(model.GLYPHS.values())
    assert TableCell("strange", "strange").glyph == "?"


def _row(statuses, case_id="a.b", param="p", known=False, changes=()) -> ParamRow:
    cells = [TableCell(s, s, None if s == NOT_RUN else _result(s)) for s in statuses]
    return ParamRow(
        case_id, param, "", [f"{case_id}.{param}"], known, cells, [known] * len(cells), declared_changes=tuple(changes)
    )


def test_param_row_ids_and_whether_it_changes():
    assert _row([]).cell_id == "a.b[p]" and _row([], param="").cell_id == "a.b"
    assert _row([], param="x y").quoted_id == "'a.b[x y]'" and _row([]).quoted_id == "'a.b[p]'"
    assert not _row(["conforms", NOT_RUN, "conforms"]).changes
    assert _row(["conforms", NOT_RUN, "differs"]).changes
    assert not _row([NOT_RUN, NOT_RUN]).changes and not _row(["differs"]).changes


def test_case_block_rows_and_known_issue():
    rows = [ParamRow("a.b", "x", "", ["r1", "r2"], False, []), ParamRow("a.b", "y", "", ["r2", "r3"], True, [])]
    block = CaseBlock("a.b", "§1", "claim", "", "", "", "", {}, None, rows)
    assert block.rows == ["r1", "r2", "r3"] and block.known_issue
    assert not CaseBlock("a.b", "§1", "claim", "", "", "", "", {}, None, rows[:1]).known_issue


# ---- declared explanations ------------------------------------------------------------------------------------------

SINCE = DeclaredChange("jit moved.", "CHANGELOG 0.8.0", since="0.8.0")
RANGE = DeclaredChange("the error was reworded.", "measured", versions="0.5.0..0.6.0")


def test_explanation_words():
    one = Explanation((SINCE,))
    assert (one.why, one.evidence, one.text) == (
        "jit moved.",
        "CHANGELOG 0.8.0",
        "jit moved. (evidence: CHANGELOG 0.8.0)",
    )
    two = Explanation((RANGE, SINCE))
    assert two.why == "After 0.5.0, by 0.6.0: the error was reworded. In 0.8.0: jit moved."
    assert two.evidence == "measured; CHANGELOG 0.8.0"


@pytest.mark.parametrize(
    "before, after, found",
    [
        ("0.7.2", "0.8.0", [SINCE]),
        ("0.8.0", "0.7.2", [SINCE]),
        ("0.8.0", "0.9.0", []),
        ("0.7.0", "0.7.2", []),
        ("0.8.0", "0.8.0", []),
        ("0.7.2", "0.8.0rc1", []),
        ("0.5.5", "0.5.5", []),
        ("0.5.0", "0.5.1", [RANGE]),
        ("0.4.0", "0.5.0", []),
        ("0.6.0", "0.6.1", []),
        ("0.5.9", "0.6.0", [RANGE]),
        ("0.4.0", "0.9.0", [RANGE, SINCE]),
        ("0.4.0", "0.5.1", [RANGE]),
    ],
)
def test_explain_change_finds_the_changes_between(before, after, found):
    explanation = model.explain_change([SINCE, RANGE], before, after)
    assert (list(explanation.changes) if explanation else []) == found
    assert _row([], changes=[SINCE, RANGE]).why(before, after) == explanation


def test_explain_change_compares_versions_not_text():
    ten = DeclaredChange("w", "e", since="0.10.0")
    assert model.explain_change([ten], "0.9.0", "0.10.0").changes == (ten,)
    assert model.explain_change([ten], "0.10.0", "0.9.0").changes == (ten,)
    assert model.explain_change([ten], "0.10.0", "0.11.0") is None


def test_explain_change_with_an_open_range_end():
    upto = DeclaredChange("w", "e", versions="..0.6.0")
    assert model.explain_change([upto], "0.1.0", "0.6.0").changes == (upto,)
    assert model.explain_change([upto], "0.6.0", "0.7.0") is None


def test_version_step_total_and_transition_text():
    step = VersionStep("p", "0.7.2", "0.8.0", {"fixed": [1, 2], "changed": [3], "regressed": []})
    assert step.total == 3
    plain = Transition("a.b", "p", "0.7.2", "0.8.0", "differs", "conforms", None)
    assert plain.text == "0.7.2 → 0.8.0: differs → conforms: unexplained (no declared Change)"
    explained = Transition("a.b", "p", "0.7.2", "0.8.0", "differs", "conforms", Explanation((SINCE,)))
    assert explained.text == "0.7.2 → 0.8.0: differs → conforms: jit moved. (evidence: CHANGELOG 0.8.0)"


# ---- the model's views --------------------------------------------------------------------------------------------


def test_report_model_views():
    columns = [_column("0.7.2", "p2"), _column("0.7.2", "p1"), _column("0.8.0", "p1"), _column("0.8.1", "p1")]
    rows = [_row(["conforms"] * 4), _row(["differs"] * 4, case_id="a.c")]
    sections = [
        model.SectionBlock("§1", [CaseBlock("a.b", "§1", "", "", "", "", "", {}, None, rows[:1])]),
        model.SectionBlock("§2", [CaseBlock("a.c", "§2", "", "", "", "", "", {}, None, rows[1:])]),
    ]
    explained = Transition("a.b", "p1", "0.7.2", "0.8.0", "differs", "conforms", Explanation((SINCE,)))
    unexplained = Transition("a.c", "p1", "0.8.0", "0.8.1", "differs", "crash", None)
    report = ReportModel(columns, sections, [], [], [], transitions=[explained, unexplained])
    assert report.unexplained == [unexplained]
    assert report.versions == [("0.7.2", [0, 1]), ("0.8.0", [2]), ("0.8.1", [3])]
    assert report.platforms == ["p1", "p2"]
    assert report.series == [("0.7", [0, 1]), ("0.8", [2, 3])]
    assert report.param_rows == rows
    assert not report.compact


@pytest.mark.parametrize("versions, compact", [(12, False), (13, True)])
def test_the_table_is_compact_from_13_versions(versions, compact):
    columns = [_column(f"0.{i}.0", p) for i in range(versions) for p in ("p1", "p2")]
    assert ReportModel(columns, [], [], [], []).compact is compact


# ---- runs and where they came from --------------------------------------------------------------------------------


def test_launch_summary():
    cells = [_result(launcher="spawn"), _result(launcher="fork"), _result(launcher=""), _result(launcher="fork")]
    assert model.launch_summary("fork", cells) == "2 fork, 1 spawn (last run: fork)"
    assert model.launch_summary("", cells[:2]) == "1 fork, 1 spawn (last run: ?)"
    assert model.launch_summary("spawn", [_result()]) == "spawn"
    assert model.launch_summary("", []) == "?"


@pytest.mark.parametrize(
    "source, text",
    [
        ({}, "the package index"),
        ({"kind": None}, "the package index"),
        (
            {"kind": "index", "index_url": "https://user:pw@mirror.corp:8443/pypi/simple"},
            "the package index mirror.corp:8443",
        ),
        ({"kind": "index", "index_url": "mirror.corp/simple"}, "the package index mirror.corp"),
        (
            {"kind": "index", "index_url": "https://u:p@ss@mirror.corp/simple?next=https://other.org/x"},
            "the package index mirror.corp",
        ),
        ({"kind": "index", "index_url": ""}, "the package index"),
        ({"kind": "python", "python": "/home/a/bin/python"}, "an existing interpreter (not built by the suite)"),
        (
            {
                "kind": "wheels",
                "wheels": [
                    {"name": "jax.whl", "sha256": "0123456789abcdef0123"},
                    "junk",
                    {"name": "jaxlib.whl", "sha256": "fedcba9876543210"},
                ],
            },
            "wheel files jax.whl (sha256 0123456789ab), jaxlib.whl (sha256 fedcba987654)",
        ),
        ({"kind": "wheels", "wheels": None}, "wheel files (none recorded)"),
        ({"kind": "wheels"}, "wheel files (none recorded)"),
    ],
)
def test_origin_text(source, text):
    assert model.origin_text(source) == text


def test_chapter_covers_cpu_platforms_only():
    assert model.chapter_covers("linux-x86_64") and model.chapter_covers("darwin-arm64")
    assert not any(model.chapter_covers(p) for p in ("linux-x86_64-cuda", "linux-x86_64-rocm", "linux-x86_64-tpu"))
    assert model.chapter_covers("linux-cuda-x86_64")


@pytest.mark.parametrize(
    "version, final",
    [
        ("0.8.0", True),
        ("0.12.0.1", True),
        ("nightly", True),
        ("0.12.0.1+corp.3", False),
        ("0.13.0rc1", False),
        ("0.13.0.dev20261201", False),
        ("0.8.0.post1", False),
    ],
)
def test_is_final_release(version, final):
    assert model._is_final_release(version) is final


def test_version_key_orders_pep440_then_unparsable_by_text():
    versions = ["zeta", "0.8.0", "0.8.0+corp.1", "0.8.0rc1", "alpha", "0.7.2", "0.8.0.dev1"]
    assert sorted(versions, key=model.version_key) == [
        "0.7.2",
        "0.8.0.dev1",
        "0.8.0rc1",
        "0.8.0",
        "0.8.0+corp.1",
        "alpha",
        "zeta",
    ]


# ---- table cells' words, deprecations --------------------------------------------------------------------------


def test_word_of_a_cell():
    assert model._word(None, False, "0.8.0") == TableCell(NOT_RUN, NOT_RUN)
    crash = _result("crash", observation_verdict="conforms")
    assert model._word(crash, False, "0.8.0") == TableCell("crash", "crash (observation conforms)", crash)
    timeout = _result("timeout", observation_verdict="differs")
    assert model._word(timeout, False, "0.8.0").word == "timeout (observation differs)"
    assert model._word(_result("timeout"), False, "0.8.0").word == "timeout"
    assert model._word(_result("differs", observation_verdict="differs"), False, "0.8.0").word == "differs"
    assert model._word(_result("conforms"), True, "0.8.0").word == "bug still present"
    assert model._word(_result("differs"), True, "0.8.0").word == "bug absent"
    assert model._word(_result("differs"), True, "0.13.0").word == "changed: maybe fixed"
    assert model._word(_result("differs"), False, "0.8.0").word == "differs"


def _warned(*warnings):
    return _result(warnings=[dict(w) for w in warnings])


W_ID = {"category": "DeprecationWarning", "message": "x is deprecated", "module": "jax.x", "deprecation": "jax-x"}
W_MOD = {"category": "FutureWarning", "message": "y changes", "module": "jax.y", "deprecation": ""}
W_BARE = {"category": "", "message": "", "module": "jax.z", "deprecation": ""}


def test_deprecated_apis_name_each_api_once_with_its_first_release_per_platform():
    columns = [
        _column("0.8.0", "p1"),
        _column("0.7.2", "p1"),
        _column("0.9.0", "p2"),
        _column("0.6.0", "p1"),
        _column("0.9.5", "p1"),
    ]

    def row(case_id, results):
        return ParamRow(case_id, "", "", [], False, [TableCell("conforms", "conforms", r) for r in results])

    rows = [
        row("a.one", [_warned(W_ID), _warned(W_ID, W_MOD), _warned(W_ID), _warned(), _warned(W_ID, {})]),
        row("a.two", [_warned(W_ID), None, _warned(W_BARE), _warned(W_MOD), _warned(W_MOD)]),
    ]
    found = model.deprecated_apis(columns, rows)
    assert [(d.api, d.category, d.message, d.first_warns, d.cells) for d in found] == [
        ("jax-x", "DeprecationWarning", "x is deprecated", {"p1": "0.7.2", "p2": "0.9.0"}, ["a.one", "a.two"]),
        ("jax.y: FutureWarning", "FutureWarning", "y changes", {"p1": "0.6.0"}, ["a.one", "a.two"]),
        ("jax.z: ?", "", "", {"p2": "0.9.0"}, ["a.two"]),
        ("?: ?", "", "", {"p1": "0.9.5"}, ["a.one"]),  # a warning that recorded nothing
    ]
    assert model.deprecated_apis(columns, []) == []


# ---- timelines ------------------------------------------------------------------------------------------------------

P1 = ["0.7.2", "0.8.0", "0.8.1", "0.9.0"]
RELEASES = P1
GAP = ["0.7.2", "0.7.5", "0.8.0", "0.8.1", "0.8.2", "0.9.0"]


def _timeline_columns():
    columns = [_column(v, "p1") for v in P1] + [_column("0.8.0", "p2")]
    columns[1].jax_git_hash = "b" * 40
    return columns


def _timeline(statuses, known=False, releases=None, platform="p1", results=None):
    """The timeline of a row whose p1 cells have `statuses` ("-" for no result); its p2 cell always conforms."""
    results = results or [None if s == "-" else _result(s) for s in statuses]
    results = results + [_result("conforms")]
    cells = [TableCell(r.status.value if r else NOT_RUN, "", r) for r in results]
    row = ParamRow("a.b", "p", "", [], known, cells, [known] * 4 + [False])
    return model._timeline(row, _timeline_columns(), platform, releases)


@pytest.mark.parametrize(
    "statuses, releases, text",
    [
        (["differs"] * 4, RELEASES, "does not behave as documented in any tested version (0.7.2–0.9.0)"),
        (["conforms"] * 4, RELEASES, "behaves as documented since 0.7.2 or earlier"),
        (["-", "conforms", "conforms", "-"], RELEASES, "behaves as documented since 0.8.0 or earlier"),
        (
            ["differs", "conforms", "conforms", "conforms"],
            RELEASES,
            "behaves as documented from 0.8.0 (0.7.2 is the last release that does not)",
        ),
        (
            ["differs", "conforms", "conforms", "conforms"],
            None,
            "starts to behave as documented between 0.7.2 and 0.8.0 (releases between them, if "
            "any, have no result here)",
        ),
        (
            ["differs", "conforms", "conforms", "conforms"],
            GAP,
            "starts to behave as documented between 0.7.2 and 0.8.0 (0.7.5 has no result)",
        ),
        (
            ["differs", "differs", "-", "conforms"],
            GAP,
            "starts to behave as documented between 0.8.0 and 0.9.0 (0.8.1, 0.8.2 have no result)",
        ),
        (
            ["differs", "conforms", "conforms", "crash"],
            RELEASES,
            "behaves as documented from 0.8.0 (0.7.2 is the last release that does not); not in 0.9.0 (crash)",
        ),
        (
            ["conforms", "differs", "differs", "differs"],
            RELEASES,
            "behaves as documented since 0.7.2 or earlier; not in 0.9.0 (differs)",
        ),
    ],
)
def test_timeline_of_an_intended_row(statuses, releases, text):
    found = _timeline(statuses, releases=releases)
    assert (found.cell_id, found.platform, found.known_issue, found.text, found.compare_url) == (
        "a.b[p]",
        "p1",
        False,
        text,
        "",
    )


@pytest.mark.parametrize(
    "statuses, releases, text, compare",
    [
        (["differs"] * 4, RELEASES, "the documented bug does not show in 0.7.2–0.9.0", ""),
        (["conforms"] * 4, RELEASES, "present since 0.7.2 or earlier; still present in 0.9.0", ""),
        (
            ["differs", "conforms", "conforms", "differs"],
            RELEASES,
            "appears in 0.8.0 (0.7.2 is the last release without it); goes away in 0.9.0 (0.8.1 "
            "is the last release with it)",
            "https://github.com/jax-ml/jax/compare/jax-v0.7.2..." + "b" * 40,
        ),
        (
            ["differs", "conforms", "conforms", "conforms"],
            None,
            "appears between 0.7.2 and 0.8.0 (releases between them, if any, have no result "
            "here); still present in 0.9.0",
            "",
        ),
        (
            ["differs", "conforms", "conforms", "conforms"],
            GAP,
            "appears between 0.7.2 and 0.8.0 (0.7.5 has no result); still present in 0.9.0",
            "",
        ),
        (
            ["differs", "differs", "conforms", "-"],
            RELEASES,
            "appears in 0.8.1 (0.8.0 is the last release without it); still present in 0.8.1",
            "https://github.com/jax-ml/jax/compare/" + "b" * 40 + "...jax-v0.8.1",
        ),
        (
            ["conforms", "differs", "conforms", "differs"],
            RELEASES,
            "present since 0.7.2 or earlier; goes away in 0.8.0 (0.7.2 is the last release with it)",
            "",
        ),
    ],
)
def test_timeline_of_a_known_issue(statuses, releases, text, compare):
    found = _timeline(statuses, known=True, releases=releases)
    assert (found.cell_id, found.platform, found.known_issue, found.text, found.compare_url) == (
        "a.b[p]",
        "p1",
        True,
        text,
        compare,
    )


def test_a_timeline_needs_a_result_on_its_platform():
    assert _timeline(["conforms"] * 4, platform="p3") is None
    assert _timeline(["-"] * 4) is None
    assert _timeline(["-"] * 4, platform="p2").text == "behaves as documented since 0.8.0 or earlier"


def _printed(status, message, marked=False, observation=None):
    return _result(
        status,
        {"m": message, "v": 1} if observation is None else observation,
        printed_expected={"m": "old"},
        printed_diff=[{"path": "m"}] if marked else [],
    )


def test_timeline_says_when_the_printed_output_changed_under_the_same_status():
    results = [
        _printed("conforms", "old"),
        _printed("conforms", "old"),
        _printed("conforms", "new"),
        _printed("conforms", "new"),
    ]
    assert _timeline(None, results=results, releases=RELEASES).text == (
        "behaves as documented since 0.7.2 or earlier; printed output changed in 0.8.1 (0.8.0 is the last release "
        "before it)"
    )
    # a change of the printed mark alone counts; one that comes with a status change does not
    marked = [
        _printed("differs", "old"),
        _printed("conforms", "new", True),
        _printed("conforms", "new"),
        _printed("conforms", "new"),
    ]
    assert _timeline(None, results=marked, releases=None).text == (
        "starts to behave as documented between 0.7.2 and 0.8.0 (releases between them, if any, have no result "
        "here); printed output changed between 0.8.0 and 0.8.1 (releases between them, if any, have no result here)"
    )
    asserted = [
        _printed("conforms", "old", observation={"m": "old", "v": 1}),
        _printed("conforms", "old", observation={"m": "old", "v": 2}),
    ] + results[2:]
    assert _timeline(None, results=asserted, releases=RELEASES, known=True).text == (
        "present since 0.7.2 or earlier; still present in 0.9.0; printed output changed in 0.8.1 (0.8.0 is the "
        "last release before it)"
    )
    second = [_printed("conforms", "old"), _printed("conforms", "new")] + results[2:]
    assert _timeline(None, results=second, releases=RELEASES).text == (
        "behaves as documented since 0.7.2 or earlier; printed output changed in 0.8.0 (0.7.2 is the last release "
        "before it)"
    )
    plain = [
        _result("conforms", "text"),
        _result("conforms", "other"),
        _result("conforms", "other"),
        _result("conforms", "other"),
    ]
    assert _timeline(None, results=plain).text == "behaves as documented since 0.7.2 or earlier"


def test_change_point():
    assert model.change_point("0.7.2", "0.8.0", None, "x") == (
        "between 0.7.2 and 0.8.0 (releases between them, if any, have no result here)"
    )
    assert model.change_point("0.7.2", "0.8.0", [], "that does not") == (
        "in 0.8.0 (0.7.2 is the last release that does not)"
    )
    assert model.change_point("0.7.2", "0.9.0", ["0.9.0", "0.8.1", "0.7.2", "0.8.0", "0.6.0", "1.0.0"], "x") == (
        "between 0.7.2 and 0.9.0 (0.8.0, 0.8.1 have no result)"
    )
    assert model._releases_between("0.7.2", "0.8.1", ["0.8.1", "0.8.0", "0.7.2", "0.7.10"]) == ["0.7.10", "0.8.0"]
    assert model._releases_between("0.8.0", "0.11.0", ["0.10.0", "0.9.0", "0.11.0"]) == ["0.9.0", "0.10.0"]


def test_appears_compare_url_uses_the_jax_commits_or_tags():
    before = _column("0.7.2", jax_git_hash="a" * 40)
    assert model.appears_compare_url(before, _column("0.8.0")) == (
        "https://github.com/jax-ml/jax/compare/" + "a" * 40 + "...jax-v0.8.0"
    )


# ---- the whole model from result files ------------------------------------------------------------------------------


def _probe(param):
    """A probe."""
    return {}


def _file(jax, platform, cells, name, **header):
    from conformance.results.schema import result_file_from_json
    from tests.synthetic_results import report

    data = report(jax, platform, cells, schema=4)
    data["jax_conformance"].update(header)
    return result_file_from_json(data, name)


def _model_inputs():
    from conformance.core.case import Case, Expect, Param
    from tests.synthetic_results import cell

    wheels = {"kind": "wheels", "wheels": [{"name": "jax.whl", "sha256": "c" * 64}]}
    ten = [
        cell("demo.ten", "a", "conforms", known_issue=True),
        cell(
            "demo.ten",
            "b",
            "differs",
            warnings=[{"category": "DeprecationWarning", "message": "m", "module": "jax.q", "deprecation": "jax-q"}],
        ),
    ]
    team = [
        cell("team/x.y", "q", "differs", known_issue=True, rows=["team.q"], discrepancy="measured q"),
        cell("team/x.y", "p", "conforms", rows=["team.p"], discrepancy="", heading="Team §1 Ours", claim="ours"),
    ]
    newer = _file(
        "0.8.1",
        "linux-x86_64",
        [
            cell("demo.ten", "a", "differs", known_issue=True),
            cell("demo.ten", "b", "conforms"),
            cell("demo.two", printed_diff=[{"path": "m"}]),
            cell("other.z"),
        ],
        "0.8.1.json",
        jaxlib="0.8.0",
        suite_version="0.3.0",
    )
    files = [
        newer,  # before the older release's files: the columns are sorted by version, not by file
        _file(
            "0.8.0",
            "linux-x86_64",
            ten[:1],
            "runs\\0.8.0-linux-shard2.json",
            python="3.11",
            launcher="fork",
            started_at="2026-01-01T00:00:01",
            finished_at="2026-01-01T00:10:00",
            source=wheels,
            jax_git_hash="a" * 40,
            jaxlib_git_hash="b" * 40,
            suite_version="",
            numpy="2.1",
        ),
        _file(
            "0.8.0",
            "linux-x86_64",
            ten[1:] + team,
            "runs/old/0.8.0-linux-shard1.json",
            python="3.10",
            started_at="2026-01-01T00:00:02",
            finished_at="2026-01-01T00:05:00",
            source=wheels,
        ),
        _file("0.8.0", "darwin-arm64", [cell("demo.ten", "a", "conforms"), cell("demo.two", status="crash")], "d.json"),
        _file("0.9.0rc1", "linux-x86_64", [cell("demo.two", status="differs")], "rc.json"),
    ]
    cases = [
        Case(
            id="demo.absent",
            section="§1",
            heading="§1 Basics",
            claim="never run",
            params=(Param("", ("row.absent",), Expect({})),),
            probe=_probe,
        ),
        Case(
            id="demo.ten",
            section="§10",
            heading="§10 Late",
            claim="ten",
            notes="n",
            env={"X": "1"},
            stdin="in",
            params=(
                Param("a", ("row.a",), Expect({}), ("linux-*",), label="A label", discrepancy="why a"),
                Param("b", ("row.b", "row.a"), Expect({}), changes=[DeclaredChange("b moved.", "m", since="0.8.1")]),
            ),
            probe=_probe,
        ),
        Case(
            id="demo.two",
            section="§2",
            heading="§2 Early",
            claim="two",
            params=(Param("", ("row.two",), Expect({})),),
            probe=_probe,
        ),
    ]
    return files, cases


def test_build_model_columns():
    built = model.build_model(*_model_inputs())
    columns = [
        (
            c.jax,
            c.platform,
            c.python,
            c.jaxlib,
            c.numpy,
            c.launcher,
            c.suite_version,
            c.schema_version,
            c.started_at,
            c.finished_at,
            c.sources,
            c.origin,
            c.build,
            c.jax_git_hash,
            c.jaxlib_git_hash,
            c.newest_in_series,
            c.series,
        )
        for c in built.columns
    ]
    assert columns == [
        (
            "0.8.0",
            "darwin-arm64",
            "?",
            "?",
            "?",
            "?",
            "0.2.0",
            4,
            "",
            "2026-11-29T10:00:00+00:00",
            ["d.json"],
            "the package index",
            "",
            "",
            "",
            False,
            "0.8",
        ),
        (
            "0.8.0",
            "linux-x86_64",
            "3.11",
            "?",
            "2.1",
            "fork",
            "?",
            4,
            "2026-01-01T00:00:01",
            "2026-01-01T00:10:00",
            ["0.8.0-linux-shard1.json", "0.8.0-linux-shard2.json"],
            "wheel files jax.whl (sha256 cccccccccccc)",
            "wheel files",
            "a" * 40,
            "b" * 40,
            False,
            "0.8",
        ),
        (
            "0.8.1",
            "linux-x86_64",
            "?",
            "0.8.0",
            "?",
            "?",
            "0.3.0",
            4,
            "",
            "2026-11-29T10:00:00+00:00",
            ["0.8.1.json"],
            "the package index",
            "",
            "",
            "",
            True,
            "0.8",
        ),
        (
            "0.9.0rc1",
            "linux-x86_64",
            "?",
            "?",
            "?",
            "?",
            "0.2.0",
            4,
            "",
            "2026-11-29T10:00:00+00:00",
            ["rc.json"],
            "the package index",
            "",
            "",
            "",
            True,
            "0.9",
        ),
    ]
    assert [c.counts for c in built.columns][1] == {
        **{s.value: 0 for s in Status},
        NOT_RUN: 2,
        "conforms": 2,
        "differs": 2,
    }
    assert [c.counts[NOT_RUN] for c in built.columns] == [4, 2, 2, 5]
    assert [c.conditions for c in built.columns] == ["", "", "", ""]
    assert [c.printed_differs for c in built.columns] == [0, 0, 1, 0]


def test_a_column_carries_the_miscompile_cases_cpu_conditions():
    from tests.synthetic_results import cell

    cells = [
        cell("demo.ten", "a", "conforms", details={"closure_hlo_ynn_fusions": 0}),
        cell("program.closure_constant_miscompile", "", "differs", details={"closure_hlo_ynn_fusions": 2}),
    ]
    result_file = _file("0.8.0", "darwin-arm64", cells, "d.json")
    column = model._column([result_file], {c.cell_id: c for c in result_file.cells})
    assert column.conditions == "YNNPACK fusions in the closure's program: 2"


def test_build_model_sections_cases_and_rows():
    built = model.build_model(*_model_inputs())
    # chapter order (§2 before §10; a team's heading by its text), the undeclared cases without a heading last
    assert [s.heading for s in built.sections] == ["Team §1 Ours", "§2 Early", "§10 Late", model.UNKNOWN_SECTION]
    blocks = [
        (b.case_id, b.section, b.claim, b.notes, b.module, b.probe, b.env, b.stdin, bool(b.source))
        for s in built.sections
        for b in s.cases
    ]
    assert blocks == [
        ("team/x.y", "Team §1 Ours", "ours", "", "", "", {}, None, False),
        ("demo.two", "§2 Early", "two", "", __name__, "_probe", {}, None, True),
        ("demo.ten", "§10 Late", "ten", "n", __name__, "_probe", {"X": "1"}, "in", True),
        ("other.z", model.UNKNOWN_SECTION, "", "", "", "", {}, None, False),
    ]
    assert [b.source for s in built.sections for b in s.cases][::3] == ["", ""]
    rows = [
        (r.cell_id, r.label, r.rows, r.known_issue, r.known_at, r.discrepancy, [c.word for c in r.cells])
        for r in built.param_rows
    ]
    assert rows == [
        ("team/x.y[p]", "", ["team.p"], False, [False] * 4, "", [NOT_RUN, "conforms", NOT_RUN, NOT_RUN]),
        (
            "team/x.y[q]",
            "",
            ["team.q"],
            True,
            [False, True, False, False],
            "measured q",
            [NOT_RUN, "bug absent", NOT_RUN, NOT_RUN],
        ),
        ("demo.two", "", ["row.two"], False, [False] * 4, "", ["crash", NOT_RUN, "conforms", "differs"]),
        (
            "demo.ten[a]",
            "A label",
            ["row.a"],
            True,
            [False, True, True, True],
            "why a",
            ["conforms", "bug still present", "bug absent", NOT_RUN],
        ),
        ("demo.ten[b]", "", ["row.b", "row.a"], False, [False] * 4, "", [NOT_RUN, "differs", "conforms", NOT_RUN]),
        ("other.z", "", ["other.z"], False, [False] * 4, "", [NOT_RUN, NOT_RUN, "conforms", NOT_RUN]),
    ]
    assert [r.declared_changes for r in built.param_rows][4] == (DeclaredChange("b moved.", "m", since="0.8.1"),)


def test_build_model_changes_transitions_and_timelines():
    built = model.build_model(*_model_inputs(), releases=["0.8.0", "0.8.1", "0.9.0rc1"])
    steps = [
        (
            s.platform,
            s.before,
            s.after,
            {
                g: [
                    (c.cell_id, c.before, c.after, c.detail, c.status_changed, c.why.text if c.why else None) for c in v
                ]
                for g, v in s.groups.items()
                if v
            },
        )
        for s in built.steps
    ]
    assert steps == [
        (
            "linux-x86_64",
            "0.8.0",
            "0.8.1",
            {
                "fixed": [
                    ("demo.ten[a]", "bug still present", "bug absent", "", True, None),
                    ("demo.ten[b]", "differs", "conforms", "", True, "b moved. (evidence: m)"),
                ]
            },
        ),
        ("linux-x86_64", "0.8.1", "0.9.0rc1", {"regressed": [("demo.two", "conforms", "differs", "", True, None)]}),
    ]
    transitions = [
        (t.cell_id, t.platform, t.before, t.after, t.before_status, t.after_status, t.why.text if t.why else None)
        for t in built.transitions
    ]
    assert transitions == [
        ("demo.two", "linux-x86_64", "0.8.1", "0.9.0rc1", "conforms", "differs", None),
        ("demo.ten[a]", "linux-x86_64", "0.8.0", "0.8.1", "conforms", "differs", None),
        ("demo.ten[b]", "linux-x86_64", "0.8.0", "0.8.1", "differs", "conforms", "b moved. (evidence: m)"),
    ]
    texts = {(t.cell_id, t.platform): t.text for t in built.timelines}
    assert texts[("demo.ten[b]", "linux-x86_64")] == (
        "behaves as documented from 0.8.1 (0.8.0 is the last release that does not)"
    )
    assert [(t.cell_id, t.platform) for t in built.timelines][:3] == [
        ("team/x.y[p]", "linux-x86_64"),
        ("team/x.y[q]", "linux-x86_64"),
        ("demo.two", "darwin-arm64"),
    ]
    assert [(d.api, d.first_warns, d.cells) for d in built.deprecations] == [
        ("jax-q", {"linux-x86_64": "0.8.0"}, ["demo.ten[b]"])
    ]
    assert built.conflicts == [] and built.discrepancies == []


def test_steps_say_when_only_the_observation_changed():
    columns = [_column("0.8.0"), _column("0.8.1")]
    cells = [
        TableCell("differs", "differs", _result("differs", {"v": 1})),
        TableCell("differs", "differs", _result("differs", {"v": 2})),
    ]
    in_081 = DeclaredChange("w.", "e", since="0.8.1")
    row = ParamRow("a.b", "", "", [], False, cells, [False, False], declared_changes=(in_081,))
    [step] = model._steps(columns, [row])
    [change] = step.groups["changed"]
    assert (change.detail, change.status_changed, change.why) == ("observation changed", False, None)
    # a status change is explained only by a change between its two versions
    later = ParamRow(
        "a.b",
        "",
        "",
        [],
        False,
        [TableCell("differs", "differs", _result("differs")), TableCell("conforms", "conforms", _result())],
        [False, False],
        declared_changes=(DeclaredChange("w.", "e", since="0.9.0"),),
    )
    [change] = model._steps(columns, [later])[0].groups["fixed"]
    assert (change.detail, change.status_changed, change.why) == ("", True, None)
    [transition] = model._transitions(columns, [later])
    assert transition.why is None
    known = ParamRow(
        "a.b",
        "",
        "",
        [],
        True,
        [TableCell("conforms", "", _result("conforms")), TableCell("differs", "", _result("differs"))],
        [False, True],
    )
    assert [g for g, v in model._steps(columns, [known])[0].groups.items() if v] == ["fixed"]


def test_discrepancies_on_the_documented_release():
    columns = [
        _column("0.12.0.1"),
        _column("0.12.0.1", "linux-x86_64-cuda"),
        _column("0.12.0.1+corp.1"),
        _column("0.8.0"),
    ]
    differs = _result("differs")
    row = ParamRow("a.b", "", "", ["r"], False, [TableCell("differs", "differs", differs)] * 4, discrepancy="note")
    conforming = ParamRow("a.c", "", "", ["r"], False, [TableCell("conforms", "conforms", _result())] * 4)
    found = model._discrepancies(columns, [row, conforming], {"a.b": "the claim"})
    assert [(d.cell_id, d.rows, d.claim, d.platform, d.jax, d.result, d.note) for d in found] == [
        ("a.b", ["r"], "the claim", "linux-x86_64", "0.12.0.1", differs, "note")
    ]
    assert model._discrepancies(columns, [row], {})[0].claim == ""


@pytest.mark.parametrize(
    "before, after, known, group",
    [
        (
            _result(observation={"m": 1, "v": 1}, printed_expected={"m": 0}),
            _result(observation={"m": 2, "v": 1}),
            False,
            "printed output changed",
        ),
        (
            _result(observation={"m": 1, "v": 1}),
            _result(observation={"m": 2, "v": 1}, printed_expected={"m": 0}),
            False,
            "printed output changed",
        ),
        (
            _result(observation={"m": 1}, printed_expected={"m": 0}),
            _result(observation={"m": 1}, printed_expected={"m": 0}, printed_diff=[{"path": "m"}]),
            False,
            "printed output changed",
        ),
        (_result("error"), _result("crash"), False, "changed"),
        (_result("differs", {"v": 1}), _result("differs", {"v": 2}), True, "changed"),
        (_result("conforms", {"v": 1}), _result("conforms", {"v": 2}), True, "changed"),
        (_result("crash"), _result("conforms"), True, "changed"),
        (_result("differs"), _result("flaky"), True, "changed"),
    ],
)
def test_classify_change_more(before, after, known, group):
    assert model.classify_change(before, after, known) == group


@pytest.mark.parametrize(
    "before, after, known, group",
    [
        (_result("unsupported"), _result("differs"), False, "API added"),
        (_result("conforms"), _result("unsupported"), False, "API removed"),
        (_result("conforms"), _result("differs", reason="removed: jax.x"), False, "API removed"),
        (_result("conforms"), _result("differs", reason="Removed: jax.x"), False, "regressed"),
        (_result("conforms"), _result("crash", reason="removed: jax.x"), False, "regressed"),
        (_result("differs"), _result("conforms"), True, "regressed"),
    ],
)
def test_classify_change_api_and_regressions(before, after, known, group):
    assert model.classify_change(before, after, known) == group


def test_a_printed_output_change_has_no_detail():
    columns = [_column("0.8.0"), _column("0.8.1")]
    cells = [
        TableCell("conforms", "conforms", _result(observation={"m": 1}, printed_expected={"m": 0})),
        TableCell("conforms", "conforms", _result(observation={"m": 2}, printed_expected={"m": 0})),
    ]
    [change] = model._steps(columns, [ParamRow("a.b", "", "", [], False, cells, [False, False])])[0].groups[
        "printed output changed"
    ]
    assert (change.detail, change.status_changed) == ("", False)


def test_build_model_lists_the_chapters_discrepancies_with_the_claim():
    from tests.synthetic_results import cell

    files, cases = _model_inputs()
    documented = _file("0.12.0.1", "linux-x86_64", [cell("demo.two", status="differs")], "doc.json")
    built = model.build_model([documented], cases)
    assert [(d.cell_id, d.claim, d.platform, d.jax) for d in built.discrepancies] == [
        ("demo.two", "two", "linux-x86_64", "0.12.0.1")
    ]


def test_a_column_merged_with_a_file_that_recorded_no_time_keeps_the_others_times():
    """The published page: a release's probe run (started and finished) and its downstream suite's file (neither)
    make one column; its run line and its wptreport's `time_start` must come from the run, never from the
    empty time, and an end is never lost to a file that has none."""
    from conformance.report.model import build_model
    from conformance.results.load import result_file_from_json
    from tests.synthetic_results import cell, report

    run = report("0.8.3", "p", [cell("a.b", "p")], finished="2026-12-06T09:15:25+00:00")
    run["jax_conformance"]["started_at"] = "2026-12-06T09:05:48+00:00"
    suite = report("0.8.3", "p", [cell("downstream/s.t")], finished="")
    suite["jax_conformance"]["started_at"] = ""
    files = [result_file_from_json(run, "results/0.8.3-p.json"), result_file_from_json(suite, "ds/0.8.3-p.json")]
    for ordered in (files, files[::-1]):
        column = build_model(ordered, []).columns[0]
        assert (column.started_at, column.finished_at) == ("2026-12-06T09:05:48+00:00", "2026-12-06T09:15:25+00:00")
    alone = build_model(files[1:], []).columns[0]
    assert (alone.started_at, alone.finished_at) == ("", "")
