"""A chapter's blocks as cells (`conformance.chapter.cells`), field by field: the whole cell a block's outcome gives,
what each status observes and expects, the ids, the pytest entry, the reuse key's recipe and the runner's digest
(issue 48: written against the survivors of a mutation run; the repository's tests check the cells' states).
Blocks built by hand, no JAX, no process."""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import conformance
from conformance.chapter import cells
from conformance.chapter.cells import (
    block_cell,
    block_keys,
    block_status,
    case_id,
    chapter_ident,
    is_block_cell,
    runner_digest,
)
from conformance.chapter.model import Block, BlockStatus, Chapter, Heading, Outcome, Step
from conformance.core.observation import TAIL_CHARS
from conformance.core.status import Status
from conformance.results.schema import CellResult

NANS = Heading("3.1", "NaNs", "Extra")


def block(index: int, **fields) -> Block:
    """A block of section 3.1, its id and hash made from its index."""
    values = {
        "index": index,
        "id": f"s3_1_{index:08x}",
        "hash": f"{index:02x}" * 32,
        "code": f"x{index} = 1",
        "line": 10 * (index + 1),
        "end_line": 10 * (index + 1) + 2,
        "heading": NANS,
    } | fields
    return Block(**values)


def chapter(*blocks: Block, **fields) -> Chapter:
    return Chapter("001_my-guide", "/docs/pages/001_my-guide.md", "markdown", tuple(blocks), **fields)


def sha(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


# ---------------------------------------------------------------------------------------------------- ids


def test_a_chapters_name_becomes_an_identifier_with_ch_before_a_leading_digit_only():
    assert chapter_ident("000_seedlike") == "ch000_seedlike"
    assert chapter_ident("a1") == "a1"  # a digit after the first character is kept as it is
    assert chapter_ident("my-guide.v2") == "my_guide_v2"
    assert chapter_ident("9") == "ch9"
    assert chapter_ident("") == "ch"
    assert chapter_ident("é-x") == "é_x"  # a letter of any script is a word character


def test_a_case_id_takes_a_chapter_or_its_name_and_a_block_or_its_id():
    b = block(0)
    ch = chapter(b)
    assert case_id(ch, b) == "chapter/ch001_my_guide.s3_1_00000000"
    assert case_id("001_my-guide", "s3_1_00000000") == case_id(ch, b)
    assert case_id(ch, "s9_9_x") == "chapter/ch001_my_guide.s9_9_x"
    assert case_id("guide", b) == "chapter/guide.s3_1_00000000"


def test_only_cells_of_the_chapter_namespace_are_block_cells_and_only_they_have_a_block_status():
    def cell(case: str, status: Status, observation=None) -> CellResult:
        return CellResult(case=case, param="", rows=[], status=status, observation=observation)

    assert is_block_cell(cell("chapter/ch1.s1_0", Status.CONFORMS))
    assert not is_block_cell(cell("chapters.x", Status.CONFORMS)) and not is_block_cell(
        cell("numerics.x", Status.CONFORMS)
    )
    assert block_status(cell("chapter/ch1.s1_0", Status.DIFFERS, {"block": "raised"})) is BlockStatus.RAISED
    assert block_status(cell("chapter/ch1.s1_0", Status.SKIPPED)) is BlockStatus.SKIPPED  # no observation kept
    assert block_status(cell("numerics.x", Status.SKIPPED)) is None  # a skipped probe is no skipped block
    assert block_status(cell("chapter/ch1.s1_0", Status.CONFORMS)) is None
    assert block_status(cell("numerics.x", Status.CONFORMS, {"caught": True})) is None
    assert block_status(cell("numerics.x", Status.CONFORMS, [1, 2])) is None
    assert block_status(cell("chapter/ch1.s1_0", Status.DIFFERS, {"block": "no such word"})) is None


# -------------------------------------------------------------------------------- what each status says

EVERYTHING = {
    "exception": "ValueError",
    "message": "bad value",
    "assert_line": 3,
    "assert_text": "assert x > 0",
    "name": "y",
    "because": "s1_1_0",
    "stated": "TypeError: wrong type",
    "raised_as_stated": ("line 2: TypeError", "line 5: KeyError"),
}


@pytest.mark.parametrize(
    "status, verdict, observation, changed",
    [
        (BlockStatus.RAN, Status.CONFORMS, {"block": "ran"}, False),
        (BlockStatus.ASSERT_FAILED, Status.DIFFERS, {"block": "assert_failed", "assert": "line 3: assert x > 0"}, True),
        (BlockStatus.RAISED, Status.DIFFERS, {"block": "raised", "exception": "ValueError"}, True),
        (BlockStatus.TIMEOUT, Status.TIMEOUT, {"block": "timeout"}, True),
        (BlockStatus.CRASH, Status.CRASH, {"block": "crash"}, True),
        (BlockStatus.SKIPPED, Status.SKIPPED, None, False),
        (
            BlockStatus.AFTER_FAILURE,
            Status.ERROR,
            {"block": "after_failure", "exception": "ValueError", "name": "y"},
            True,
        ),
        (
            BlockStatus.RAISED_AS_DOCUMENTED,
            Status.CONFORMS,
            {"block": "raised_as_documented", "raised": ["line 2: TypeError", "line 5: KeyError"]},
            False,
        ),
        (
            BlockStatus.RAISED_OTHERWISE,
            Status.DIFFERS,
            {"block": "raised_otherwise", "exception": "ValueError", "stated": "TypeError: wrong type"},
            True,
        ),
        (
            BlockStatus.DID_NOT_RAISE,
            Status.DIFFERS,
            {"block": "did_not_raise", "stated": "TypeError: wrong type"},
            True,
        ),
        (BlockStatus.LISTING, Status.SKIPPED, {"block": "listing"}, False),
    ],
)
def test_each_block_status_observes_exactly_what_decides_it_and_differs_only_when_judged_and_not_as_written(
    status, verdict, observation, changed
):
    b = block(0)
    cell = block_cell(chapter(b), b, Outcome(status, **EVERYTHING), "0.4.38", "k")
    judged = status not in (BlockStatus.SKIPPED, BlockStatus.LISTING)
    assert cell.status is verdict
    assert cell.observation == observation
    assert cell.expected == ({"block": "ran"} if judged else None)
    assert cell.diff == (
        [{"path": "block", "expected": "ran", "observed": status.value, "kind": "changed"}] if changed else []
    )
    assert block_status(cell) is status


def test_a_failed_assert_without_a_known_line_observes_its_text_alone():
    b = block(0)
    cell = block_cell(chapter(b), b, Outcome(BlockStatus.ASSERT_FAILED, assert_text="assert ok"), "0.4.38", "k")
    assert cell.observation == {"block": "assert_failed", "assert": "assert ok"}


def test_a_block_that_states_no_error_is_expected_to_run():
    b = block(0, steps=(Step(1, 2), Step(3, 3, shown="1\n")))
    cell = block_cell(chapter(b), b, Outcome(BlockStatus.RAN), "0.4.38", "k")
    assert cell.expected == {"block": "ran"}


def test_the_errors_a_page_states_are_expected_statement_by_statement_then_the_blocks_own():
    steps = (Step(1, 2, stated="ValueError", stated_message="out of bounds"), Step(3, 3), Step(4, 6, stated="KeyError"))

    def expected(**fields):
        b = block(0, **fields)
        return block_cell(chapter(b), b, Outcome(BlockStatus.RAISED_AS_DOCUMENTED), "0.4.38", "k").expected

    assert expected(steps=steps) == {
        "block": "raised_as_documented",
        "stated": ["ValueError: out of bounds", "KeyError"],
    }
    assert expected(steps=steps, raises="TypeError") == {
        "block": "raised_as_documented",
        "stated": ["ValueError: out of bounds", "KeyError", "TypeError"],
    }
    assert expected(raises="*") == {"block": "raised_as_documented", "stated": ["an exception"]}
    assert expected(raises="ZeroDivisionError") == {"block": "raised_as_documented", "stated": ["ZeroDivisionError"]}


def test_a_block_that_states_an_error_and_raises_another_differs_from_raised_as_documented():
    b = block(0, raises="TypeError")
    cell = block_cell(
        chapter(b), b, Outcome(BlockStatus.RAISED_OTHERWISE, exception="ValueError", stated="TypeError"), "0.4.38", "k"
    )
    assert cell.diff == [
        {"path": "block", "expected": "raised_as_documented", "observed": "raised_otherwise", "kind": "changed"}
    ]


# ------------------------------------------------------------------------------------------ the whole cell


def test_a_block_that_ran_is_one_whole_cell_with_its_printed_difference_tails_and_details():
    b = block(
        1, code="# a comment\n@jax.jit\ndef f(x):\n    return x\nprint(f(1))\n", output="ok\nfine\n", output_line=26
    )
    ch = chapter(block(0), b, origin="jax-ml/jax@8c0c43c0:docs/debugging.md", title="Chapter 8: Debugging")
    printed = ("-fine", "+FINE", "-", "+extra", "… 2 more line(s)")
    outcome = Outcome(
        BlockStatus.RAN,
        stdout="a" * 5 + "b" * TAIL_CHARS,
        stderr="c" * 3 + "d" * TAIL_CHARS,
        duration_s=1.234567,
        printed_differs=True,
        printed_diff=printed,
        replayed=True,
        notes=("magic not run: %xmode",),
    )
    details = {
        "chapter": "001_my-guide",
        "source": "001_my-guide.md",
        "form": "markdown",
        "block": "s3_1_00000001",
        "index": 2,
        "hash": "01" * 32,
        "line": 20,
        "end_line": 22,
        "output_line": 26,
        "section": "3.1",
        "heading": "3.1 NaNs · Extra",
        "first_code": "def f(x):",
        "detail": "magic not run: %xmode",
        "message": "",
        "because": "",
        "replayed": True,
        "printed_lines": list(printed),
        "notes": ["magic not run: %xmode"],
        "origin": "jax-ml/jax@8c0c43c0:docs/debugging.md",
        "title": "Chapter 8: Debugging",
    }
    assert block_cell(ch, b, outcome, "0.12.0.1", "the-key") == CellResult(
        case="chapter/ch001_my_guide.s3_1_00000001",
        param="",
        rows=[],
        status=Status.CONFORMS,
        expected={"block": "ran"},
        observation={"block": "ran"},
        diff=[],
        details=details,
        reason="magic not run: %xmode",
        duration_s=1.2346,
        stdout_tail="b" * TAIL_CHARS,
        stderr_tail="d" * TAIL_CHARS,
        command="jax-conformance chapter 001_my-guide.md --jax 0.12.0.1",
        launcher="chapter",
        key="the-key",
        printed_expected={"stdout": ["ok", "fine"]},
        printed_diff=[{"path": "stdout", "expected": ["fine", ""], "observed": ["FINE", "extra"], "kind": "changed"}],
        section="§3.1",
        heading="The chapter as written: 001_my-guide",
        claim="3.1 NaNs · Extra — line 20: def f(x):",
        suite_version=conformance.__version__,
    )


def test_a_block_that_raised_otherwise_keeps_every_optional_detail_and_its_words_as_the_reason():
    b = block(
        0,
        steps=(Step(1, 1, stated="TypeError", stated_message="wrong"),),
        listing="a plain fence",
        line=7,
        end_line=7,
        output="",
        output_known=False,
    )
    outcome = Outcome(
        BlockStatus.RAISED_OTHERWISE,
        exception="ValueError",
        message="bad",
        line=1,
        because="",
        stated="TypeError: wrong",
        settings=("jax_debug_nans=True (set by block s1_1_0)",),
        cause="ZeroDivisionError in the callback",
        stdout="out\n",
        stderr="err\n",
        duration_s=0.5,
    )
    reason = (
        "line 1: raised ValueError: bad; the page states TypeError: wrong; ZeroDivisionError in the callback; "
        "jax_debug_nans=True (set by block s1_1_0)"
    )
    details = {
        "chapter": "001_my-guide",
        "source": "001_my-guide.md",
        "form": "markdown",
        "block": "s3_1_00000000",
        "index": 1,
        "hash": "00" * 32,
        "line": 7,
        "end_line": 7,
        "output_line": 0,
        "section": "3.1",
        "heading": "3.1 NaNs · Extra",
        "first_code": "x0 = 1",
        "detail": reason,
        "message": "bad",
        "because": "",
        "replayed": False,
        "printed_lines": [],
        "raising_line": 1,
        "stated": "TypeError: wrong",
        "settings": ["jax_debug_nans=True (set by block s1_1_0)"],
        "cause": "ZeroDivisionError in the callback",
        "listing": "a plain fence",
    }
    assert block_cell(chapter(b), b, outcome, "0.4.38", "k2") == CellResult(
        case="chapter/ch001_my_guide.s3_1_00000000",
        param="",
        rows=[],
        status=Status.DIFFERS,
        expected={"block": "raised_as_documented", "stated": ["TypeError: wrong"]},
        observation={"block": "raised_otherwise", "exception": "ValueError", "stated": "TypeError: wrong"},
        diff=[{"path": "block", "expected": "raised_as_documented", "observed": "raised_otherwise", "kind": "changed"}],
        details=details,
        reason=reason,
        duration_s=0.5,
        stdout_tail="out\n",
        stderr_tail="err\n",
        command="jax-conformance chapter 001_my-guide.md --jax 0.4.38",
        launcher="chapter",
        key="k2",
        printed_expected=None,
        printed_diff=[],
        section="§3.1",
        heading="The chapter as written: 001_my-guide",
        claim="3.1 NaNs · Extra — line 7: x0 = 1",
        suite_version=conformance.__version__,
    )


def test_a_skipped_block_is_a_skipped_cell_with_nothing_expected_observed_or_compared():
    b = block(0, output="ok\n", skip="needs a GPU")
    cell = block_cell(chapter(b), b, Outcome(BlockStatus.SKIPPED, reason="needs a GPU", duration_s=0.0), "0.4.38", "k")
    assert (cell.status, cell.expected, cell.observation, cell.diff, cell.printed_expected, cell.printed_diff) == (
        Status.SKIPPED,
        None,
        None,
        [],
        None,
        [],
    )
    assert (cell.reason, cell.details["detail"], cell.duration_s) == ("needs a GPU", "needs a GPU", 0.0)


def test_a_listing_is_skipped_but_observed_as_a_listing_and_says_so_in_its_details():
    b = block(0, output="ok\n", listing="a plain fence in a MyST notebook")
    cell = block_cell(chapter(b), b, Outcome(BlockStatus.LISTING, reason="not run: a listing"), "0.4.38", "k")
    assert (cell.status, cell.expected, cell.observation, cell.diff, cell.printed_expected) == (
        Status.SKIPPED,
        None,
        {"block": "listing"},
        [],
        None,
    )
    assert cell.details["listing"] == "a plain fence in a MyST notebook" and cell.reason == "not run: a listing"


def test_what_a_block_prints_is_compared_only_when_the_page_shows_it_after_that_same_block():
    def printed_expected(**fields):
        b = block(0, output="ok\n", **fields)
        return block_cell(
            chapter(b), b, Outcome(BlockStatus.ASSERT_FAILED, assert_text="a"), "0.4.38", "k"
        ).printed_expected

    assert printed_expected() == {"stdout": ["ok"]}
    assert printed_expected(output_known=False) is None  # the page states no output: nothing to compare
    assert printed_expected(joined=True) is None  # what it prints is shown after the next block
    assert printed_expected(output_known=False, joined=True) is None


def test_a_block_before_the_first_heading_has_no_section_and_says_so_in_its_claim():
    b = block(0, heading=Heading(), line=3, code="\n# setup\nimport jax\n")
    cell = block_cell(chapter(b), b, Outcome(BlockStatus.RAN), "0.4.38", "k")
    assert (cell.section, cell.claim) == ("", "(before the first heading) — line 3: import jax")
    assert (cell.details["section"], cell.details["heading"]) == ("", "")


def test_a_claim_is_cut_at_400_characters_and_a_reason_at_the_message_limit():
    long_line = "y = " + "1 + " * 200 + "1"
    b = block(0, code=long_line)
    cell = block_cell(chapter(b), b, Outcome(BlockStatus.RAISED, exception="E", message="m" * 3000), "0.4.38", "k")
    assert cell.claim == f"3.1 NaNs · Extra — line 10: {long_line}"[:400] and len(cell.claim) == 400
    assert cell.reason == ("E: " + "m" * 3000)[:2000]


def test_a_blocks_pytest_entry_holds_its_cell_under_the_chapter_files_name_and_the_blocks_id():
    b = block(2)
    ch = chapter(block(0), block(1), b)
    cell = block_cell(ch, b, Outcome(BlockStatus.RAISED, exception="E"), "0.4.38", "k")
    assert cells.test_entry(ch, b, cell) == {
        "nodeid": "chapter/001_my-guide.md::s3_1_00000002",
        "lineno": 30,
        "outcome": "failed",
        "keywords": [],
        "metadata": cell.to_json(),
    }
    ran = block_cell(ch, b, Outcome(BlockStatus.RAN), "0.4.38", "k")
    assert cells.test_entry(ch, b, ran)["outcome"] == "passed"
    skipped = block_cell(ch, b, Outcome(BlockStatus.SKIPPED), "0.4.38", "k")
    assert cells.test_entry(ch, b, skipped)["outcome"] == "skipped"


# ---------------------------------------------------------------------------------------------- reuse keys


def plan(b: Block, ran: bool = False) -> str:
    """How a block runs when not whole, as its key holds it."""
    return sha(
        json.dumps([[s.to_json() for s in b.steps], b.runnable, b.cell_magic, b.listing, ran], sort_keys=True), 16
    )


def documented_key(
    b: Block,
    before: list,
    timeout_s: float = 120.0,
    skip: str = "",
    how: str | None = None,
    setup: str = "",
    environment: str = "env",
    runner: str = "runner",
) -> str:
    """The module's recipe: the block, the blocks before it, its limit, the environment, the runner, the suite."""
    own = {
        "code": b.hash,
        "output": sha(b.output, 16),
        "output_known": b.output_known,
        "joined": b.joined,
        "raises": b.raises,
        "display": b.display,
        "skip": skip,
    } | ({"plan": how} if how is not None else {})
    data = {
        "block": own,
        "before": before,
        "timeout_s": timeout_s,
        "environment": environment,
        "runner": runner,
        "suite": conformance.__version__,
    } | ({"setup": setup} if setup else {})
    return sha(json.dumps(data, sort_keys=True), 32)


PLAIN = block(0, output="ok\n", raises="ValueError", display=True)
STEPS = block(
    1, steps=(Step(1, 2, stated="KeyError", stated_message="k", stated_form="comment", shown="1"),), joined=True
)
RUNNABLE = block(2, runnable="pass\nx = 1\n", output_known=False)
MAGIC = block(3, cell_magic="%%time")
LISTING = block(4, listing="a plain fence", skip="the page never runs it")
LAST = block(5)
KEYED = chapter(PLAIN, STEPS, RUNNABLE, MAGIC, LISTING, LAST)


def test_every_blocks_key_is_its_recipe_with_a_plan_for_each_way_a_block_runs_other_than_whole():
    before = [[PLAIN.hash, False]]
    expected = {PLAIN.id: documented_key(PLAIN, [])}
    for b in (STEPS, RUNNABLE, MAGIC, LISTING):
        how = plan(b)
        expected[b.id] = documented_key(b, list(before), how=how, skip=b.skip)
        before.append([b.hash, bool(b.skip), how])
    expected[LAST.id] = documented_key(LAST, before)
    keys = block_keys(KEYED, {}, 120.0, "env", "runner")
    assert keys == expected
    assert all(len(k) == 32 and int(k, 16) >= 0 for k in keys.values())
    assert len(set(keys.values())) == 6


def test_a_skip_reason_from_the_skip_list_enters_the_blocks_key_and_whether_it_was_skipped_every_later_one():
    keys = block_keys(KEYED, {STEPS.id: "too slow", LISTING.id: "listed too"}, 120.0, "env", "runner")
    assert keys[STEPS.id] == documented_key(STEPS, [[PLAIN.hash, False]], skip="too slow", how=plan(STEPS))
    assert keys[LISTING.id] == documented_key(
        LISTING,
        [
            [PLAIN.hash, False],
            [STEPS.hash, True, plan(STEPS)],
            [RUNNABLE.hash, False, plan(RUNNABLE)],
            [MAGIC.hash, False, plan(MAGIC)],
        ],
        skip="listed too",
        how=plan(LISTING),
    )
    assert keys[LAST.id] == documented_key(
        LAST,
        [
            [PLAIN.hash, False],
            [STEPS.hash, True, plan(STEPS)],
            [RUNNABLE.hash, False, plan(RUNNABLE)],
            [MAGIC.hash, False, plan(MAGIC)],
            [LISTING.hash, True, plan(LISTING)],
        ],
    )


def test_a_listing_a_run_entry_runs_has_another_plan_and_so_do_the_blocks_after_it():
    plain = block_keys(KEYED, {}, 120.0, "env", "runner")
    ran = block_keys(KEYED, {}, 120.0, "env", "runner", ran_listings={LISTING.id})
    assert [b.id for b in KEYED.blocks if ran[b.id] != plain[b.id]] == [LISTING.id, LAST.id]
    assert ran[LISTING.id] == documented_key(
        LISTING,
        [
            [PLAIN.hash, False],
            [STEPS.hash, False, plan(STEPS)],
            [RUNNABLE.hash, False, plan(RUNNABLE)],
            [MAGIC.hash, False, plan(MAGIC)],
        ],
        skip=LISTING.skip,
        how=plan(LISTING, ran=True),
    )


def test_a_blocks_own_time_limit_changes_its_key_alone_and_the_default_limit_is_read_as_a_float():
    plain = block_keys(KEYED, {}, 120.0, "env", "runner")
    limited = block_keys(KEYED, {}, 120.0, "env", "runner", limits={MAGIC.id: 30})
    assert [b.id for b in KEYED.blocks if limited[b.id] != plain[b.id]] == [MAGIC.id]
    assert limited[MAGIC.id] == documented_key(
        MAGIC,
        [[PLAIN.hash, False], [STEPS.hash, False, plan(STEPS)], [RUNNABLE.hash, False, plan(RUNNABLE)]],
        timeout_s=30.0,
        how=plan(MAGIC),
    )
    assert block_keys(KEYED, {}, 120, "env", "runner", limits={}) == plain
    assert block_keys(KEYED, {}, 120.0, "env", "runner", limits={MAGIC.id: 120}) == plain
    assert block_keys(KEYED, {}, 60.0, "env", "runner")[PLAIN.id] == documented_key(PLAIN, [], timeout_s=60.0)


def test_a_setup_is_in_every_key_the_environment_and_runner_too_and_an_empty_chapter_has_no_keys():
    with_setup = block_keys(replace(KEYED, setup="import math"), {}, 120.0, "env", "runner")
    assert with_setup[PLAIN.id] == documented_key(PLAIN, [], setup="import math")
    assert block_keys(KEYED, {}, 120.0, "other", "digest")[PLAIN.id] == documented_key(
        PLAIN, [], environment="other", runner="digest"
    )
    assert block_keys(chapter(), {}, 120.0, "env", "runner") == {}


# ---------------------------------------------------------------------------------------------- the runner


def test_the_runner_digest_is_the_digest_of_each_runner_sources_digest_in_order(tmp_path, monkeypatch):
    folder = Path(cells.__file__).resolve().parent
    assert (
        runner_digest()
        == hashlib.sha256(
            "".join(hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in cells._RUNNER_SOURCES).encode()
        ).hexdigest()
    )
    copy = tmp_path / "chapter"
    copy.mkdir()
    for name in cells._RUNNER_SOURCES:
        shutil.copyfile(folder / name, copy / name)
    monkeypatch.setattr(cells, "__file__", str(copy / "cells.py"))
    first = runner_digest()
    assert first == runner_digest() and len(first) == 64
    seen = {first}
    for name in cells._RUNNER_SOURCES:  # an edit to any one of them reruns every block
        (copy / name).write_text((copy / name).read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        seen.add(runner_digest())
    assert len(seen) == len(cells._RUNNER_SOURCES) + 1


def test_the_runner_digest_covers_every_module_of_the_chapter_package_its_sources_import():
    folder = Path(cells.__file__).resolve().parent
    covered, todo = set(cells._RUNNER_SOURCES), list(cells._RUNNER_SOURCES)
    while todo:
        for node in ast.walk(ast.parse((folder / todo.pop()).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("conformance.chapter."):
                name = node.module.split(".")[2] + ".py"
                if name not in covered:
                    covered.add(name)
                    todo.append(name)
    assert covered == set(cells._RUNNER_SOURCES)
