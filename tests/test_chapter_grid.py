"""The report's data of a chapter (`conformance.chapter.grid`) and the command's summary line, on statuses the
cell tests leave out: skipped blocks, listings and blocks that raised as their page states. No JAX, no process."""

from __future__ import annotations

import json
from dataclasses import replace

from conformance.chapter.command import summary_line
from conformance.chapter.grid import _observed, chapter_of, chapter_views, disagreements, probe_links, sections_of
from conformance.chapter.cells import block_cell, block_keys
from conformance.chapter.model import BlockStatus, Outcome
from conformance.chapter.read import chapter_from_text
from conformance.results.merge import MergedRun, merge_files
from conformance.core.status import Status
from conformance.results.schema import CellResult, ResultFile, RunHeader
from tests.test_chapter_cells import AFTER, ASSERTS, CHAPTER, FIRST, RAISES, cells_for, probe, result_file

AFTER_ID = AFTER.id

S = BlockStatus


def summaries(*by_version: tuple[str, tuple[BlockStatus, ...]]) -> list[tuple[str, int, int]]:
    """Each release's summary line with its counts of blocks run as written and of blocks judged."""
    files = [result_file(version, cells_for(version, *statuses).values()) for version, statuses in by_version]
    (view,) = chapter_views(merge_files(files), {})
    return [(s.text, s.ran, s.judged) for s in view.summaries]


def test_a_skipped_block_is_not_counted_as_judged_in_the_release_summary():
    """Issue 48: an edit counting skipped blocks as judged ("2 of 4 ... (1 skipped)") survived every test."""
    assert summaries(("0.4.38", (S.RAN, S.SKIPPED, S.RAN, S.ASSERT_FAILED))) == [
        ("0.4.38: 2 of 3 blocks run as written (1 skipped; 1 assert failed; 1 printed differently)", 2, 3)
    ]
    cells = cells_for("0.4.38", S.RAN, S.SKIPPED, S.RAN, S.ASSERT_FAILED)
    assert summary_line("0.4.38", cells, 2.0, "(x)").startswith(
        "jax 0.4.38: 2 of 3 blocks run as written (1 skipped; 1 assert failed;"
    )


def test_the_release_summary_counts_as_the_command_does_listings_apart_and_raised_as_documented_as_written():
    """Found under mutation (issue 48): the report's summary counted a listing as judged and a block that raised as
    its page states as not run as written ("1 of 4"), where the command said "2 of 3"."""
    statuses = (S.RAN, S.RAISED_AS_DOCUMENTED, S.LISTING, S.RAISED)
    assert summaries(("0.4.38", statuses)) == [
        (
            "0.4.38: 2 of 3 blocks run as written (1 listing not run; 1 raised, 1 raised as documented; 1 printed "
            "differently)",
            2,
            3,
        )
    ]
    assert summary_line("0.4.38", cells_for("0.4.38", *statuses), 1.0, "(x)").startswith(
        "jax 0.4.38: 2 of 3 blocks run as written (1 listing not run; 1 raised, 1 raised as documented;"
    )
    assert summaries(("0.4.38", (S.SKIPPED, S.LISTING, S.RAN, S.RAN))) == [
        ("0.4.38: 2 of 2 blocks run as written (1 skipped; 1 listing not run)", 2, 2)
    ]


def test_a_block_that_raises_as_its_page_states_runs_as_written_since_its_first_release():
    files = [
        result_file(v, cells_for(v, *statuses).values())
        for v, statuses in [
            ("0.4.38", (S.RAISED_AS_DOCUMENTED, S.DID_NOT_RAISE, S.RAN, S.RAN)),
            ("0.5.3", (S.RAISED_AS_DOCUMENTED, S.RAISED_AS_DOCUMENTED, S.RAISED_OTHERWISE, S.RAN)),
        ]
    ]
    (view,) = chapter_views(merge_files(files), {})
    assert [since.text for since in view.since.values()] == [
        "≤0.4.38 (every release measured)",
        "since 0.5.3",
        "not on the newest release",
        "≤0.4.38 (every release measured)",
    ]


def test_a_block_that_raised_otherwise_or_did_not_raise_disagrees_with_probes_that_conform():
    old = cells_for("0.4.38", S.RAISED_AS_DOCUMENTED, S.RAISED_OTHERWISE, S.DID_NOT_RAISE, S.RAN)
    new = cells_for("0.5.3", S.RAN, S.RAISED_OTHERWISE, S.RAN, S.RAN)
    files = [
        result_file(
            "0.4.38",
            [*old.values(), probe("numerics.a", "§3.1", Status.DIFFERS), probe("numerics.c", "§3.2", Status.CONFORMS)],
        ),
        result_file("0.5.3", [*new.values(), probe("numerics.a", "§3.1", Status.CONFORMS)]),
    ]
    (view,) = chapter_views(merge_files(files), {}, documented=CHAPTER.name)
    # raised as documented is run as written (against a probe that differs); raised_otherwise beside a probe that
    # differs points the same way, so it is no disagreement there
    assert [(d.block, d.version, d.block_status, d.probes_say) for d in view.disagreements] == [
        (FIRST.id, "0.4.38", "raised_as_documented", "every probe differs"),
        (ASSERTS.id, "0.5.3", "raised_otherwise", "every probe conforms"),
        (RAISES.id, "0.4.38", "did_not_raise", "every probe conforms"),
    ]


def test_a_disagreement_says_both_sides_in_one_line_and_a_probe_what_it_observed():
    old = cells_for("0.4.38", S.RAN, S.ASSERT_FAILED, S.RAN, S.RAN)
    unsupported = CellResult(
        case="numerics.u",
        param="",
        rows=["numerics.x"],
        status=Status.UNSUPPORTED,
        section="§3.2",
        reason="no such API " + "x" * 500,
    )
    files = [
        result_file(
            "0.4.38",
            [
                *old.values(),
                probe("numerics.a", "§3.1", Status.CONFORMS),
                probe("numerics.c", "§3.2", Status.DIFFERS),
                unsupported,
                probe("numerics.e", "§3.2", Status.ERROR),
            ],
        )
    ]
    (view,) = chapter_views(merge_files(files), {}, documented=CHAPTER.name)
    first, second, third = view.disagreements
    assert first.text == (
        f"On 0.4.38, block {ASSERTS.id} assert failed (line 1: assert old_release is False), while "
        f"every probe conforms of its subsection: numerics.a conforms (every fact it asserts holds)."
    )
    assert [p.cell_id for p in second.probes] == ["numerics.c", "numerics.u"]  # the error is not judged
    assert second.probes[0].observed == "caught is false where the chapter says true"
    assert second.probes[1].observed == ("no such API " + "x" * 500)[:300]  # a reason, cut
    assert (
        second.text.startswith("On 0.4.38, block s3_2_")
        and (
            "ran as written, while every probe differs of its "
            "subsection: numerics.c differs (caught is false where the chapter says true); numerics.u unsupported (no "
            "such API x"
        )
        in second.text
    )
    assert third.block == AFTER_ID and third.block_status == "ran"
    plain = CellResult(case="numerics.p", param="", rows=[], status=Status.DIFFERS, observation={"v": 1})
    assert _observed(plain) == "{'v': 1}"


def test_the_subsections_a_probes_section_covers():
    assert sections_of("§X1") == {"X1"} and sections_of("§ 3.1 ") == {"3.1"}
    assert sections_of("§Ex3–3") == {"Ex3"} and sections_of("§Ex2-Ex4") == {"Ex2", "Ex3", "Ex4"}
    assert sections_of("§1–51") == {str(n) for n in range(1, 52)}
    assert sections_of("§1–52") == {"1–52"} and sections_of("§4–3") == {"4–3"}
    assert sections_of("") == set() and sections_of("§") == set()


def test_probe_links_read_the_project_row_list_by_default_and_only_the_grids_platform():
    cells = cells_for("0.4.38", S.RAN, S.RAN, S.RAN, S.RAN)
    mac = ResultFile(
        RunHeader(jax="0.4.38", platform="darwin-arm64", finished_at="x"),
        [probe("numerics.m", "§3.1", Status.DIFFERS)],
        source="mac.json",
    )
    runs = merge_files([mac, result_file("0.4.38", [*cells.values(), probe("numerics.a", "§3.1", Status.CONFORMS)])])
    assert [run.platform for run in runs] == ["darwin-arm64", "linux-x86_64"]  # another platform first
    (view,) = [v for v in chapter_views(runs, {}, documented=CHAPTER.name) if v.grid.platform == "linux-x86_64"]
    links, back = probe_links(view.grid, runs)
    assert [(link.cell_id, link.rows, link.statuses) for link in links[FIRST.id]] == [
        ("numerics.a", ("numerics.x",), {"0.4.38": "conforms"})
    ]
    assert back == {"numerics.x": (FIRST.id, ASSERTS.id)}


def test_what_a_probe_observed_names_each_fact_short_and_says_how_many_more():
    """Found under mutation (issue 48): a disagreement's probe side was checked only on one boolean fact."""
    long_list = list(range(40))
    diff = [
        {"path": "message", "expected": "ñame 'x'", "observed": "other " * 20, "kind": "changed"},
        {"path": "shape", "expected": [2, 3], "observed": long_list},
        {"path": "gone", "kind": "missing"},
        {"path": "new", "kind": "unexpected"},
        {"path": "more"},
    ]
    cell = CellResult(case="numerics.d", param="", rows=[], status=Status.DIFFERS, diff=diff)
    text = _observed(cell)
    message, shape, gone = text.split("; ")
    assert message == ("message is " + repr("other " * 20)[:79] + "… where the chapter says \"ñame 'x'\"")
    assert shape == "shape is " + json.dumps(long_list)[:79] + "… where the chapter says [2, 3]"
    assert gone == "gone is missing and 2 more"
    exact = CellResult(
        case="numerics.d",
        param="",
        rows=[],
        status=Status.DIFFERS,
        diff=[
            {"path": "a", "expected": "ü", "observed": "x" * 78},
            {"path": "b", "kind": "unexpected"},
            {"path": "c", "expected": {"k": "é"}, "observed": 1 + 2j},
        ],
    )
    assert _observed(exact) == (
        f"a is '{'x' * 78}' where the chapter says 'ü'; b is not documented; "
        'c is "(1+2j)" where the chapter says {"k": "é"}'
    )
    over = CellResult(
        case="numerics.d",
        param="",
        rows=[],
        status=Status.DIFFERS,
        diff=[{"path": "a", "expected": 0, "observed": "y" * 79}],
    )
    assert _observed(over) == "a is '" + "y" * 78 + "… where the chapter says 0"


def _views(files, rows=None, documented=CHAPTER.name):
    return chapter_views(merge_files(files), {} if rows is None else rows, documented=documented)


def test_cells_without_the_chapter_detail_are_found_by_their_heading_or_their_case_id():
    """Found under mutation (issue 48): cells of an older suite name their chapter only in the heading or the id."""
    cells = list(cells_for("0.4.38", S.RAN, S.RAN, S.RAN, S.RAN).values())
    no_name = [replace(c, details={k: v for k, v in c.details.items() if k not in ("chapter", "title")}) for c in cells]
    assert [chapter_of(c) for c in no_name] == ["000_seedlike"] * 4
    plain = [replace(c, heading="Blocks") for c in no_name]
    assert [chapter_of(c) for c in plain] == ["ch000_seedlike"] * 4
    (view,) = _views([result_file("0.4.38", plain)], documented="ch000_seedlike")
    assert view.grid.chapter == "ch000_seedlike" and len(view.grid.rows) == 4
    assert (view.grid.title, view.grid.origin) == ("", "")  # no cell records one


def test_grid_rows_keep_each_blocks_place_and_missing_details_read_as_empty():
    cells = list(cells_for("0.4.38", S.RAN, S.RAN, S.RAN, S.RAN).values())
    bare = [replace(cells[0], details={"index": 0}), replace(cells[1], details=None)]
    (view,) = _views([result_file("0.4.38", [probe("numerics.a", "§3.1", Status.CONFORMS), *cells[2:], *bare])])
    rows = view.grid.rows
    # two blocks with no place: by their ids (ASSERTS's sorts first)
    assert [(r.index, r.cell_id) for r in rows] == [
        (0, cells[1].cell_id),
        (0, cells[0].cell_id),
        (3, cells[2].cell_id),
        (4, cells[3].cell_id),
    ]
    for row in rows[:2]:
        assert (row.heading, row.section, row.first_code, row.hash, row.line) == ("", "", "", "", 0)
    assert view.grid.title == "3.1 NaNs"
    assert view.grid.chapter == "000_seedlike"  # found by its heading


def test_the_grids_columns_are_in_release_order_a_build_labelled_and_an_unknown_status_said_as_it_is():
    old = result_file("0.4.38", cells_for("0.4.38", S.RAN, S.RAN, S.RAN, S.RAN).values())
    newer = list(cells_for("0.5.3", S.RAN, S.RAN, S.RAN, S.RAN).values())
    newer[0] = replace(newer[0], observation={"block": "some_newer_status"}, status=Status.DIFFERS)
    runs = merge_files([old, result_file("0.5.3", newer)])
    built = MergedRun("0.5.3", "linux-x86_64", runs[1].files, runs[1].cells, [], build="wheels-1a2b3c4d5e")
    (view,) = chapter_views([built, runs[0]], {})
    assert view.grid.versions == ("0.4.38", "0.5.3 (wheels-1a2b3c4d5e)")
    (plain,) = chapter_views([runs[1], runs[0]], {})
    assert plain.grid.versions == ("0.4.38", "0.5.3")
    assert view.summaries[0].skipped == 0  # no block skipped on it
    assert view.summaries[1].text == "0.5.3 (wheels-1a2b3c4d5e): 3 of 4 blocks run as written (1 differs)"


def test_disagreements_read_the_row_list_given_or_the_projects_and_look_at_every_release_of_a_block():
    first = list(cells_for("0.4.38", S.SKIPPED, S.RAN, S.RAN, S.RAN).values())
    first[1] = replace(first[1], observation={"block": "some_newer_status"}, status=Status.DIFFERS)
    by_row = CellResult(case="numerics.r", param="", rows=["numerics.zz"], status=Status.CONFORMS, section="")
    files = [
        result_file("0.4.38", [*first, probe("numerics.a", "§3.1", Status.ERROR)]),
        result_file(
            "0.5.0",
            [*cells_for("0.5.0", S.RAN, S.RAN, S.RAN, S.RAN).values(), probe("numerics.a", "§3.1", Status.CONFORMS)],
        ),  # they agree
        result_file("0.5.3", [*cells_for("0.5.3", S.ASSERT_FAILED, S.ASSERT_FAILED, S.RAN, S.RAN).values(), by_row]),
    ]
    runs = merge_files(files)
    (view,) = chapter_views(runs, {"numerics.zz": "3.1"}, documented=CHAPTER.name)
    assert [(d.block, d.version) for d in view.disagreements] == [(FIRST.id, "0.5.3"), (ASSERTS.id, "0.5.3")]
    assert disagreements(view.grid, runs) == ()  # the project's row list has no row numerics.zz


def test_a_grid_row_and_cell_hold_what_the_blocks_cell_records_and_a_summary_its_counts():
    cells = cells_for("0.4.38", S.RAN, S.SKIPPED, S.RAN, S.ASSERT_FAILED)
    (view,) = _views([result_file("0.4.38", cells.values())])
    row = view.grid.rows[0]
    assert (row.block, row.index, row.line, row.heading, row.section, row.first_code, row.hash) == (
        FIRST.id,
        1,
        4,
        "3.1 NaNs",
        "3.1",
        "import jax",
        FIRST.hash,
    )
    cell = row.cells["0.4.38"]
    assert cell.cell is cells[FIRST.id] and cell.printed_lines == ("-ok", "+OK") and cell.printed_differs
    (summary,) = view.summaries
    assert (summary.ran, summary.judged, summary.skipped, summary.printed_differs, summary.total) == (2, 3, 1, 1, 4)
    assert [r.index for r in view.grid.rows] == [1, 2, 3, 4]


def test_the_documented_chapter_comes_first_and_the_others_keep_the_order_the_runs_hold_them():
    other = chapter_from_text("zz_other", "/x/zz_other.md", "markdown", "## 1.1 A\n\n```python\nx = 1\n```\n")
    keys = block_keys(other, {}, 120.0, "env", "runner")
    extra = [block_cell(other, b, Outcome(S.RAN), "0.4.38", keys[b.id]) for b in other.blocks]
    alpha = chapter_from_text("aa_other", "/x/aa_other.md", "markdown", "## 1.1 A\n\n```python\ny = 1\n```\n")
    keys = block_keys(alpha, {}, 120.0, "env", "runner")
    extra += [block_cell(alpha, b, Outcome(S.RAN), "0.4.38", keys[b.id]) for b in alpha.blocks]
    files = [result_file("0.4.38", [*extra, *cells_for("0.4.38", S.RAN, S.RAN, S.RAN, S.RAN).values()])]
    assert [v.grid.chapter for v in _views(files, documented="zz_other")] == ["zz_other", "aa_other", "000_seedlike"]
