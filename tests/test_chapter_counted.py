"""The one counting phrase of a release's blocks (issue 59: the report said "29 ran as written, 2 raised as
documented" where the terminal said "31 of 32 run as written"): `chapter.model.counted`, used by both."""

from __future__ import annotations

from conformance.chapter.model import counted


def test_one_block_is_one_block_and_nothing_else_adds_no_parenthesis():
    assert counted({"ran": 1}) == "1 of 1 block run as written"
    assert counted({"ran": 2}) == "2 of 2 blocks run as written"


def test_blocks_not_judged_are_said_apart_and_not_counted():
    assert (
        counted({"ran": 2, "listing": 2, "skipped": 1})
        == "2 of 2 blocks run as written (1 skipped; 2 listings not run)"
    )
    assert (
        counted({"listing": 1, "interactive": 1})
        == "0 of 0 blocks run as written (1 listing not run; 1 interactive, not run)"
    )


def test_raised_as_documented_runs_as_written_and_an_unknown_word_is_said_in_words():
    assert (
        counted({"ran": 1, "raised_as_documented": 2, "raised": 1}, printed=3)
        == "3 of 4 blocks run as written (1 raised, 2 raised as documented; 3 printed differently)"
    )
    assert counted({"ran": 1, "not_yet": 2}) == "1 of 3 blocks run as written (2 not yet)"
