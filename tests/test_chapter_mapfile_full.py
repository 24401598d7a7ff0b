"""A map file's `[[block]]` entries that claim one line (`conformance.chapter.mapfile`): each refusal's one line in
full, naming the two blocks and their lines, and the ranges that meet nowhere accepted (issue 48: written against
the survivors of a mutation run). Small made-up map files, no JAX."""

from __future__ import annotations

import pytest

from conformance.chapter.mapfile import MapBlock, parse_map
from conformance.errors import ConformanceError


def blocks(*entries: str) -> str:
    return "".join(f"[[block]]\n{entry}\n" for entry in entries)


def refusal(text: str, source: str = "M") -> str:
    with pytest.raises(ConformanceError) as caught:
        parse_map(text, source)
    return str(caught.value)


def overlap(one: int, one_lines: str, other: int, other_lines: str, source: str = "M") -> str:
    return (
        f"{source}: [[block]] {one} (lines {one_lines}) and [[block]] {other} (lines {other_lines}) overlap; "
        f"each line belongs to one block at most"
    )


@pytest.mark.parametrize(
    "entries, message",
    [
        # one shared line of code
        (["lines = [1, 5]", "lines = [5, 8]"], overlap(1, "1-5", 2, "5-8")),
        (["lines = [4, 4]", "lines = [4, 4]"], overlap(1, "4-4", 2, "4-4")),
        (["lines = [10, 20]", "lines = [15, 25]"], overlap(1, "10-20", 2, "15-25")),
        (["lines = [3, 9]", "lines = [4, 5]"], overlap(1, "3-9", 2, "4-5")),  # one inside the other
        # the block that starts first is named first, whatever their order in the file
        (["lines = [10, 12]", "lines = [3, 10]"], overlap(2, "3-10", 1, "10-12")),
        # each block is named by its place in the file, from 1
        (["lines = [1, 2]", "lines = [5, 6]", "lines = [2, 3]"], overlap(1, "1-2", 3, "2-3")),
        # output lines count as the block's: another's output, another's code
        (["lines = [1, 2]\noutput = [3, 6]", "lines = [6, 7]"], overlap(1, "3-6", 2, "6-7")),
        (["lines = [1, 2]\noutput = [3, 4]", "lines = [5, 6]\noutput = [4, 4]"], overlap(1, "3-4", 2, "4-4")),
        # the span reaching furthest so far is the one named: a block's code reaching past its own output
        (["lines = [1, 10]\noutput = [3, 4]", "lines = [6, 7]"], overlap(1, "1-10", 2, "6-7")),
        (["lines = [1, 10]\noutput = [5, 10]", "lines = [10, 12]"], overlap(1, "1-10", 2, "10-12")),
        (["lines = [1, 3]\noutput = [4, 20]", "lines = [10, 11]"], overlap(1, "4-20", 2, "10-11")),
    ],
)
def test_two_blocks_claiming_one_line_are_refused_naming_both_and_their_lines(entries, message):
    assert refusal(blocks(*entries)) == message


def test_an_overlap_is_refused_in_the_map_files_own_name_and_by_default_as_the_map_file():
    text = blocks("lines = [1, 5]", "lines = [5, 8]")
    assert refusal(text, "chapters/c.map.toml") == overlap(1, "1-5", 2, "5-8", "chapters/c.map.toml")
    with pytest.raises(ConformanceError) as caught:
        parse_map(text)
    assert str(caught.value) == overlap(1, "1-5", 2, "5-8", "the map file")


@pytest.mark.parametrize(
    "entries",
    [
        ["lines = [1, 5]", "lines = [6, 8]"],  # adjacent, sharing no line
        ["lines = [6, 8]", "lines = [1, 5]"],
        ["lines = [1, 2]\noutput = [3, 4]", "lines = [5, 6]\noutput = [7, 7]"],
        ["lines = [5, 6]\noutput = [1, 4]", "lines = [7, 7]"],  # output before its code
        ["lines = [1, 2]\noutput = []", "lines = [3, 3]"],
        ["lines = [1, 10]\noutput = [3, 4]"],  # a block's own lines may meet: no other block claims them
        ["lines = [1, 10]\noutput = [5, 10]", "lines = [11, 12]"],
        ["lines = [1, 1]", "lines = [2, 2]", "lines = [3, 3]"],
    ],
)
def test_blocks_whose_lines_meet_nowhere_are_accepted(entries):
    chapter_map = parse_map(blocks(*entries), "M")
    assert len(chapter_map.blocks) == len(entries)


def test_an_accepted_map_keeps_each_blocks_code_and_output_lines():
    chapter_map = parse_map(blocks("lines = [1, 2]\noutput = [3, 4]", "lines = [5, 6]\noutput = [7, 7]"), "M")
    assert chapter_map.blocks == (MapBlock(1, 2, (3, 4)), MapBlock(5, 6, (7, 7)))


def test_a_not_code_range_may_meet_a_block_and_an_overlap_is_found_before_a_bad_not_code_entry():
    assert parse_map(blocks("lines = [1, 5]") + "[[not_code]]\nlines = [5, 6]\n", "M").not_code == ((5, 6),)
    assert refusal(blocks("lines = [1, 5]", "lines = [5, 8]") + "[[not_code]]\nlines = [2, 1]\n") == overlap(
        1, "1-5", 2, "5-8"
    )
