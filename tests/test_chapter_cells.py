"""Blocks as cells (issue 37): their ids, statuses and keys in result files, the store's merge, the public JSON, and
the report's data (the grid, the per-release summary, since when a block runs, the links to probes and the "probe
and chapter disagree" list). No JAX, no process."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conformance.chapter.cells import block_cell, block_keys, block_status, case_id, chapter_ident, is_block_cell
from conformance.chapter.command import summary_line
from conformance.chapter.grid import chapter_views, sections_of, without_blocks
from conformance.chapter.model import BlockStatus, Outcome
from conformance.chapter.publicjson import chapter_json, dumps
from conformance.chapter.read import chapter_from_text
from conformance.chapter.store import store_blocks
from conformance.core.casefolders import name_refusal
from conformance.core.status import Status
from conformance.errors import ConformanceError
from conformance.results.load import load_result_file
from conformance.results.merge import merge_files, retired_cells
from conformance.results.schema import CellResult, ResultFile, RunHeader, result_file_from_json

CHAPTER = chapter_from_text(
    "000_seedlike",
    "/somewhere/000_seedlike.md",
    "markdown",
    """\
## 3.1 NaNs

```python
import jax
# Prints:
# ok
```

```python
assert old_release is False
```

## 3.2 Checkify

```python
checked = run_checkify()
```

```python
print(checked)
```
""",
)
FIRST, ASSERTS, RAISES, AFTER = CHAPTER.blocks


def outcomes(*statuses: BlockStatus) -> dict[str, Outcome]:
    found = {}
    for block, status in zip(CHAPTER.blocks, statuses):
        failed = status is BlockStatus.ASSERT_FAILED
        extra = (
            {"assert_line": 1, "assert_text": "assert old_release is False"}
            if failed
            else {"exception": "RuntimeError", "message": "boom"}
            if status is BlockStatus.RAISED
            else {"exception": "NameError", "name": "checked", "because": RAISES.id}
            if status is BlockStatus.AFTER_FAILURE
            else {}
        )
        printed = (
            {"printed_differs": True, "printed_diff": ("-ok", "+OK")}
            if block is FIRST and status is BlockStatus.RAN
            else {}
        )
        found[block.id] = Outcome(status, stdout="ok\n", **extra, **printed)
    return found


def cells_for(version: str, *statuses: BlockStatus) -> dict[str, CellResult]:
    keys = block_keys(CHAPTER, {}, 120.0, f"env-{version}", "runner")
    return {
        b.id: block_cell(CHAPTER, b, o, version, keys[b.id])
        for b, o in zip(CHAPTER.blocks, outcomes(*statuses).values())
    }


def probe(case: str, section: str, status: Status, rows: tuple[str, ...] = ("numerics.x",)) -> CellResult:
    return CellResult(
        case=case,
        param="",
        rows=list(rows),
        status=status,
        section=section,
        diff=[{"path": "caught", "expected": True, "observed": False}] if status is Status.DIFFERS else [],
    )


def result_file(version: str, cells) -> ResultFile:
    return ResultFile(
        RunHeader(jax=version, platform="linux-x86_64", finished_at=version), list(cells), source=f"{version}.json"
    )


def test_block_cells_are_namespaced_valid_result_cells_with_their_own_status_in_the_observation():
    cells = cells_for(
        "0.12.0.1", BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAISED, BlockStatus.AFTER_FAILURE
    )
    assert chapter_ident("000_seedlike") == "ch000_seedlike" and chapter_ident("small") == "small"
    assert [c.case for c in cells.values()] == [case_id(CHAPTER, b) for b in CHAPTER.blocks]
    assert cells[FIRST.id].case == f"chapter/ch000_seedlike.{FIRST.id}"
    assert [c.status for c in cells.values()] == [Status.CONFORMS, Status.DIFFERS, Status.DIFFERS, Status.ERROR]
    assert [block_status(c) for c in cells.values()] == [
        BlockStatus.RAN,
        BlockStatus.ASSERT_FAILED,
        BlockStatus.RAISED,
        BlockStatus.AFTER_FAILURE,
    ]
    assert cells[ASSERTS.id].observation == {"block": "assert_failed", "assert": "line 1: assert old_release is False"}
    assert cells[ASSERTS.id].diff == [
        {"path": "block", "expected": "ran", "observed": "assert_failed", "kind": "changed"}
    ]
    assert cells[FIRST.id].printed_differs and cells[FIRST.id].printed_expected == {"stdout": ["ok"]}
    assert cells[FIRST.id].heading == "The chapter as written: 000_seedlike" and cells[FIRST.id].section == "§3.1"
    for cell in cells.values():  # what a reader of result files accepts, unchanged
        assert CellResult.from_json(json.loads(json.dumps(cell.to_json()))) == cell
        assert is_block_cell(cell)


def test_an_edited_block_changes_its_own_key_and_every_later_one_and_nothing_before_it():
    before = block_keys(CHAPTER, {}, 120.0, "env", "runner")
    edited = chapter_from_text(
        "000_seedlike",
        "x.md",
        "markdown",
        "## 3.1 NaNs\n\n```python\nimport jax\n# Prints:\n"
        "# ok\n```\n\n```python\nassert old_release is True\n```\n\n## 3.2 Checkify\n\n"
        "```python\nchecked = run_checkify()\n```\n\n```python\nprint(checked)\n```\n",
    )
    after = block_keys(edited, {}, 120.0, "env", "runner")
    assert edited.blocks[1].id != ASSERTS.id  # a new hash: a new block
    assert after[FIRST.id] == before[FIRST.id]
    assert after[RAISES.id] != before[RAISES.id] and after[AFTER.id] != before[AFTER.id]
    assert block_keys(CHAPTER, {RAISES.id: "skip"}, 120.0, "env", "runner")[AFTER.id] != before[AFTER.id]
    assert block_keys(CHAPTER, {}, 120.0, "other env", "runner")[FIRST.id] != before[FIRST.id]


def test_blocks_merge_into_the_probes_result_file_and_a_probe_runs_merge_keeps_them(tmp_path):
    probes = {
        "jax_conformance": RunHeader(
            jax="0.12.0.1", platform="linux-x86_64", environment_digest="d", launcher="fork"
        ).to_json(),
        "tests": [
            {
                "nodeid": "conformance/cases/numerics.py::p",
                "outcome": "passed",
                "metadata": probe("numerics.p", "§3.1", Status.CONFORMS).to_json(),
            }
        ],
    }
    (tmp_path / "0.12.0.1-linux-x86_64.json").write_text(json.dumps(probes), encoding="utf-8")
    cells = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN)
    header = RunHeader(jax="0.12.0.1", platform="linux-x86_64", environment_digest="d", launcher="chapter").to_json()
    stored = store_blocks(tmp_path, CHAPTER, cells, header)
    loaded = load_result_file(stored.path)
    assert {c.case for c in loaded.cells} == {"numerics.p"} | {c.case for c in cells.values()}
    assert loaded.header.launcher == "fork"  # the same environment: the probes' header is kept
    # a later chapter run without one of its blocks drops that block's cell, and never a probe's
    fewer = dict(list(cells.items())[:3])
    store_blocks(tmp_path, CHAPTER, fewer, header)
    assert {c.case for c in load_result_file(stored.path).cells} == {"numerics.p"} | {c.case for c in fewer.values()}
    # a probe run's merge (built-in cases, or a case folder) never retires a block as a case it no longer declares
    assert not retired_cells(["numerics.p"])(case_id(CHAPTER, FIRST))
    assert not retired_cells([], "chapter")(case_id(CHAPTER, FIRST))
    assert "namespace of chapters' blocks" in name_refusal("chapter")


def test_the_public_json_has_the_issues_shape_with_versions_in_pep440_order():
    by_version = {
        "0.12.0.1": cells_for(
            "0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAISED, BlockStatus.AFTER_FAILURE
        ),
        "0.4.38": cells_for("0.4.38", BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAN, BlockStatus.RAN),
    }
    document = json.loads(dumps(chapter_json(CHAPTER, by_version, "linux-x86_64")))
    assert document["chapter"] == "000_seedlike" and document["versions"] == ["0.4.38", "0.12.0.1"]
    first = document["blocks"][1]
    assert {"id", "heading", "line", "hash", "status", "detail"} <= set(first)
    assert first["status"] == {"0.4.38": "assert_failed", "0.12.0.1": "ran"}
    assert first["detail"]["0.4.38"] == "line 1: assert old_release is False" and first["detail"]["0.12.0.1"] == ""
    assert document["blocks"][3]["detail"]["0.12.0.1"].startswith("NameError: name 'checked' is not defined")
    assert summary_line("0.12.0.1", by_version["0.12.0.1"], 1.0, "(x)") == (
        "jax 0.12.0.1: 2 of 4 blocks run as written (1 raised, 1 after an earlier failure; 1 printed differently) "
        "(x) in 1.0s"
    )


def test_the_report_data_grid_summaries_since_links_and_disagreements():
    old = cells_for("0.4.38", BlockStatus.RAN, BlockStatus.ASSERT_FAILED, BlockStatus.RAN, BlockStatus.RAN)
    new = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAISED, BlockStatus.AFTER_FAILURE)
    files = [
        result_file(
            "0.4.38",
            [
                *old.values(),
                probe("numerics.a", "§3.1", Status.CONFORMS),
                probe("numerics.c", "§3.2", Status.DIFFERS, ("numerics.c",)),
            ],
        ),
        result_file(
            "0.12.0.1",
            [
                *new.values(),
                probe("numerics.a", "§3.1", Status.CONFORMS),
                probe("numerics.c", "§3.2", Status.CONFORMS, ("numerics.c",)),
            ],
        ),
    ]
    (view,) = chapter_views(merge_files(files), {}, documented=CHAPTER.name)
    grid = view.grid
    assert grid.chapter == "000_seedlike" and grid.versions == ("0.4.38", "0.12.0.1")
    assert [row.block for row in grid.rows] == [b.id for b in CHAPTER.blocks]
    assert grid.rows[1].cells["0.4.38"].status == "assert_failed" and grid.rows[1].first_code.startswith("assert")
    assert grid.rows[1].cells["0.4.38"].detail == "line 1: assert old_release is False"
    assert grid.rows[0].cells["0.12.0.1"].printed_lines == ("-ok", "+OK")
    # counts in words that add up to the blocks (issue 47: "89 of 90 ... (1 skipped)" read as if the skipped block
    # were the missing one)
    assert [s.text for s in view.summaries] == [
        "0.4.38: 3 of 4 blocks run as written (1 assert failed; 1 printed differently)",
        "0.12.0.1: 2 of 4 blocks run as written (1 raised, 1 after an earlier failure; 1 printed differently)",
    ]
    assert [view.since[b.id].text for b in CHAPTER.blocks] == [
        "≤0.4.38 (every release measured)",
        "since 0.12.0.1",
        "not on the newest release",
        "not on the newest release",
    ]
    assert [link.cell_id for link in view.links[FIRST.id]] == ["numerics.a"]
    assert view.blocks_of_row["numerics.c"] == (RAISES.id, AFTER.id)
    # 0.4.38: the block's assert fails while every §3.1 probe conforms; 0.4.38: a §3.2 block runs while every probe
    # of §3.2 differs; 0.12.0.1: a §3.2 block raises while every probe conforms. after_failure is never judged.
    assert [(d.block, d.version, d.probes_say) for d in view.disagreements] == [
        (ASSERTS.id, "0.4.38", "every probe conforms"),
        (RAISES.id, "0.4.38", "every probe differs"),
        (RAISES.id, "0.12.0.1", "every probe conforms"),
        (AFTER.id, "0.4.38", "every probe differs"),
    ]
    assert view.disagreements[0].probes[0].cell_id == "numerics.a"
    assert "caught is false where the chapter says true" in view.disagreements[1].probes[0].observed
    assert sections_of("§Ex2–4") == {"Ex2", "Ex3", "Ex4"} and sections_of("§3.1") == {"3.1"}
    # a probe of another subsection that checks a row of the block's section (the row list's section column)
    (linked,) = chapter_views(merge_files(files), {"numerics.c": "3.1"}, documented=CHAPTER.name)
    assert [link.cell_id for link in linked.links[FIRST.id]] == ["numerics.a", "numerics.c"]
    # another chapter's "3.1" is not the suite's §3.1 (review: a team's install guide was judged against numerics)
    (alone,) = chapter_views(merge_files(files), {"numerics.c": "3.1"})
    assert alone.links == {} and alone.blocks_of_row == {} and alone.disagreements == ()
    assert [s.text for s in alone.summaries] == [s.text for s in view.summaries]


def test_the_report_reads_block_cells_apart_from_the_probes():
    cells = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN)
    files = [
        result_file("0.12.0.1", [*cells.values(), probe("numerics.a", "§3.1", Status.CONFORMS)]),
        result_file("0.4.38", list(cells.values())),
    ]
    kept = without_blocks(files)
    assert [[c.case for c in f.cells] for f in kept] == [["numerics.a"], []]
    assert files[0].cells[0].case.startswith("chapter/")  # the files read are left as they were


@pytest.mark.parametrize("status", list(BlockStatus))
def test_every_block_status_stores_and_reads_back(status, tmp_path):
    cells = cells_for("0.12.0.1", status, status, status, status)
    header = RunHeader(jax="0.12.0.1", platform="linux-x86_64").to_json()
    stored = store_blocks(tmp_path, CHAPTER, cells, header)
    loaded = result_file_from_json(json.loads(Path(stored.path).read_text(encoding="utf-8")))
    assert [block_status(c) for c in loaded.cells] == [status] * 4


def test_a_block_is_bisected_over_the_releases_between_two_ends_with_its_chapter_as_the_oracle():
    from conformance.chapter.bisecting import bisect_block, find_block

    releases = ["0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.6.0", "0.7.0", "0.12.0.1"]

    class Builder:
        class index:
            @staticmethod
            def releases(project):
                return {v: None for v in releases}

        @staticmethod
        def interpreter_for(version):
            return None

    ran = []

    def run_release(version):
        ran.append(version)
        fixed = releases.index(version) >= releases.index("0.5.2")
        return cells_for(
            version,
            BlockStatus.RAN,
            BlockStatus.RAN if fixed else BlockStatus.ASSERT_FAILED,
            BlockStatus.RAN,
            BlockStatus.RAN,
        )

    block = find_block(CHAPTER, ASSERTS.hash[:8])
    assert find_block(CHAPTER, case_id(CHAPTER, ASSERTS)) is block
    outcome, lines = bisect_block(CHAPTER, block, "0.4.38", "0.12.0.1", Builder, run_release, lambda line: None)
    assert (outcome.last_good, outcome.first_bad) == ("0.5.1", "0.5.2")
    assert len(ran) < len(releases)  # a search, not every release
    assert lines[1].strip().startswith("last release like jax 0.4.38: 0.5.1 (assert_failed: line 1: assert")
    assert lines[2].strip() == "first release unlike it:     0.5.2 (ran)"
    with pytest.raises(Exception, match="names no block"):
        find_block(CHAPTER, "s9_9_00000000")


def test_a_block_tagged_to_raise_that_raises_name_error_for_a_failed_blocks_name_is_after_failure():
    from conformance.chapter.session import RawResult
    from conformance.chapter.statuses import block_outcomes

    chapter = chapter_from_text(
        "t",
        "t.md",
        "markdown",
        "## 1.1 A\n\n```python\ny = undefined_thing\n```\n\n"
        "```{code-cell} python\n:tags: [raises-exception]\nz = y / 0\n```\n",
    )
    name_error = {"outcome": "exception", "exception": "NameError", "mro": ["NameError", "Exception"]}
    raw = {
        0: RawResult(0, {**name_error, "message": "name 'undefined_thing' is not defined", "name": "undefined_thing"}),
        1: RawResult(1, {**name_error, "message": "name 'y' is not defined", "name": "y"}),
    }
    found = block_outcomes(chapter.blocks, raw, {}, 10.0)
    assert [o.status for o in found.values()] == [BlockStatus.RAISED, BlockStatus.AFTER_FAILURE]


def test_storing_a_chapter_whose_cell_ids_another_chapter_file_holds_is_refused_in_one_line(tmp_path):
    header = RunHeader(jax="0.12.0.1", platform="linux-x86_64", environment_digest="e").to_json()

    def store(name: str, path: str, code: str):
        chapter = chapter_from_text(name, path, "markdown", f"## 1.1 T\n\n```python\n{code}\n```\n")
        keys = block_keys(chapter, {}, 120.0, "e", "r")
        cells = {b.id: block_cell(chapter, b, Outcome(BlockStatus.RAN), "0.12.0.1", keys[b.id]) for b in chapter.blocks}
        return store_blocks(tmp_path, chapter, cells, header)

    store("my-guide", "/docs/my-guide.md", "x = 1")
    stored = store("my-guide", "/elsewhere/my-guide.md", "x = 2")  # the same file, edited: its old block dropped
    with pytest.raises(
        ConformanceError,
        match="holds the blocks of chapter my-guide.md under the same cell ids as "
        "my_guide.md .*--results folder of its own, or rename",
    ):
        store("my_guide", "/docs/my_guide.md", "y = 2")
    assert [c.details["source"] for c in load_result_file(stored.path).cells] == ["my-guide.md"]


def test_a_setup_changes_every_blocks_key_and_none_keeps_them_as_they_were():
    from dataclasses import replace

    before = block_keys(CHAPTER, {}, 120.0, "env", "runner")
    with_setup = block_keys(replace(CHAPTER, setup="import math as m"), {}, 120.0, "env", "runner")
    assert all(with_setup[k] != before[k] for k in before)
    assert block_keys(replace(CHAPTER, setup=""), {}, 120.0, "env", "runner") == before


def test_the_public_json_is_written_one_block_a_line_with_every_version_and_what_no_cell_or_word_reads_as():
    chapter = chapter_from_text(
        "001_tiny",
        "pagés/001_tiny.md",
        "markdown",
        "## 1 Ünïcode\n\n```python\nx = 'é'\n```\n\n```python\nprint(x)\n```\n",
    )
    first, second = chapter.blocks
    keys = block_keys(chapter, {}, 120.0, "env", "runner")
    ran = block_cell(
        chapter,
        first,
        Outcome(BlockStatus.RAN, stdout="", printed_differs=True, printed_diff=("-a", "+b")),
        "0.10.0",
        keys[first.id],
    )
    unknown_word = dataclasses.replace(ran, observation={**ran.observation, "block": "no such word"})
    raised = block_cell(
        chapter, second, Outcome(BlockStatus.RAISED, exception="NameError", message="x"), "0.4.38", keys[second.id]
    )
    cells = {"0.10.0": {first.id: ran}, "0.4.38": {first.id: unknown_word, second.id: raised}}
    text = dumps(chapter_json(chapter, cells, "linux-x86_64"))
    head = (
        '{"format": "jax-conformance chapter", "format_version": 1, "chapter": "001_tiny", "path": '
        '"pagés/001_tiny.md", "form": "markdown", "platform": "linux-x86_64", "versions": ["0.4.38", "0.10.0"], '
        '"blocks": [\n'
    )
    one = (
        f'{{"id": "{first.id}", "cell": "chapter/ch001_tiny.{first.id}", "index": 1, "heading": "1 Ünïcode", '
        f'"section": "1", "line": 4, "end_line": 4, "hash": "{first.hash}", "first_code": "x = \'é\'", '
        '"status": {"0.4.38": "crash", "0.10.0": "ran"}, "detail": {"0.4.38": "", "0.10.0": ""}, '
        '"printed_differs": {"0.4.38": true, "0.10.0": true}}'
    )
    two = (
        f'{{"id": "{second.id}", "cell": "chapter/ch001_tiny.{second.id}", "index": 2, "heading": "1 Ünïcode", '
        f'"section": "1", "line": 8, "end_line": 8, "hash": "{second.hash}", "first_code": "print(x)", '
        '"status": {"0.4.38": "raised", "0.10.0": "not run"}, "detail": {"0.4.38": "NameError: x", "0.10.0": ""}, '
        '"printed_differs": {"0.4.38": false, "0.10.0": false}}'
    )
    assert text == head + one + ",\n" + two + "\n]}\n"
    assert json.loads(text)["blocks"][1]["status"]["0.10.0"] == "not run"
