"""The map file (`conformance.chapter.mapfile`): the code, output and heading of each block it sets, the blocks it
drops, and a one-line error for every malformed entry. Pure, no JAX."""

from __future__ import annotations


import pytest

from conformance.chapter.mapfile import ChapterMap, MapBlock, apply_map, parse_map
from conformance.chapter.model import Heading
from conformance.chapter.read import chapter_from_text
from conformance.errors import ConformanceError

TEXT = "x = 1\ny = 2\nprint(x + y)\n3\n"


def test_a_map_block_holds_exactly_its_lines_of_code_and_output():
    """Issue 48: an edit that cut a map block's last line of code survived the map-file test."""
    chapter_map = parse_map("[[block]]\nlines = [1, 1]\noutput = []\n[[block]]\nlines = [2, 3]\noutput = [4, 4]\n")
    chapter = chapter_from_text("m", "m.txt", "text", TEXT, chapter_map)
    assert [(b.code, b.output) for b in chapter.blocks] == [("x = 1", ""), ("y = 2\nprint(x + y)", "3")]


def raw(line: int, end: int, heading: Heading = Heading()) -> dict:
    return {"code": f"piece {line}", "line": line, "end_line": end, "heading": heading}


LINES = ["x = 1", "y = 2", "print(x + y)", "3", "z = 4", "5"]


def test_apply_map_sets_every_field_of_a_block_and_keeps_the_heading_it_sits_under():
    near, far = Heading("3.1", "NaNs"), Heading("4", "Later")
    pieces = [raw(1, 1, near), raw(2, 2, near), raw(6, 6, far)]
    chapter_map = ChapterMap((MapBlock(2, 3, (4, 5)), MapBlock(5, 5, None, None, "Own title")))
    got = apply_map(pieces, chapter_map, LINES)
    assert [p["line"] for p in got] == [1, 2, 5, 6]
    first, second = got[1], got[2]
    assert first == {
        "code": "y = 2\nprint(x + y)",
        "line": 2,
        "end_line": 3,
        "heading": near,
        "output": "3\nz = 4",
        "joined": False,
        "output_known": True,
        "output_line": 4,
        "raises": "",
        "skip": "",
        "shows_value": True,
    }
    # a title of its own keeps the section of the heading it sits under (the piece at line 2 is dropped, the one at
    # line 1 is still the nearest at or before line 5 of the raw pieces: line 2's)
    assert second["heading"] == Heading("3.1", "Own title", "") and second["output"] == ""
    assert second["output_line"] == 0 and second["shows_value"] is False
    # a block starting on a piece's own line takes that piece's heading
    (only,) = apply_map([raw(3, 3, far)], ChapterMap((MapBlock(3, 3),)), LINES)
    assert only["heading"] == far
    # before every piece: no heading; a section of its own keeps the title ''
    (alone,) = apply_map([raw(4, 4, far)], ChapterMap((MapBlock(1, 1, section="9"),)), LINES)[:1]
    assert alone["heading"] == Heading("9", "", "")
    (plain,) = apply_map([], ChapterMap((MapBlock(1, 1),)), LINES)
    assert plain["heading"] == Heading()


def test_a_stated_raise_in_a_map_block_is_read_from_its_code():
    lines = ["x = 1", "1 / 0  # ==> raises ZeroDivisionError"]
    (block,) = apply_map([], ChapterMap((MapBlock(1, 2),)), lines)
    assert block["raises"] == "ZeroDivisionError"


def test_apply_map_refuses_lines_past_the_chapters_end_and_takes_its_last_line():
    assert apply_map([], ChapterMap((MapBlock(6, 6, (6, 6)),)), LINES)[0]["output"] == "5"
    with pytest.raises(ConformanceError) as caught:
        apply_map([], ChapterMap((MapBlock(7, 7),)), LINES)
    assert str(caught.value) == "the map names line 7, but the chapter has 6 lines"
    with pytest.raises(ConformanceError) as caught:
        apply_map([], ChapterMap((MapBlock(1, 2, (3, 9)),)), LINES)
    assert str(caught.value) == "the map names line 9, but the chapter has 6 lines"


def test_overlaps_counts_ranges_that_touch_at_either_end():
    chapter_map = ChapterMap((MapBlock(3, 5),), ((10, 12),))
    assert [
        chapter_map.overlaps(a, b) for a, b in [(1, 2), (1, 3), (5, 6), (6, 9), (12, 14), (13, 20), (4, 4), (1, 30)]
    ] == [False, True, True, False, True, False, True, True]


def test_parse_map_reads_each_key():
    chapter_map = parse_map(
        '[[block]]\nlines = [2, 3]\noutput = [4, 5]\nsection = "1.4"\ntitle = "A title"\n'
        "[[block]]\nlines = [7, 7]\n[[not_code]]\nlines = [9, 10]\n"
    )
    assert chapter_map == ChapterMap(
        (MapBlock(2, 3, (4, 5), "1.4", "A title"), MapBlock(7, 7, None, None, None)), ((9, 10),)
    )
    assert parse_map("[[block]]\nlines = [1, 1]\noutput = []\n").blocks == (MapBlock(1, 1, None),)
    assert parse_map("") == ChapterMap()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[block]\n", None),
        ("[[blok]]\n[[x]]\n", "M: unknown table(s) blok, x; it takes [[block]] and [[not_code]]"),
        ("block = 1\n", "M: block should be [[block]] entries (an array of tables), not block = 1"),
        ("block = [1]\n", "M: [[block]] 1 is not a table"),
        (
            "[[block]]\nlines = [1, 1]\n[[block]]\nlines = [1, 2]\ncolour = 1\nz = 2\n",
            "M: [[block]] 2: unknown key(s) colour, z",
        ),
        (
            "[[block]]\nlines = [3, 1]\n",
            "M: [[block]] 1: lines should be [first, last]: two line numbers from 1, the "
            "first not after the last, not [3, 1]",
        ),
        (
            "[[block]]\nlines = [1, 2]\noutput = [0, 1]\n",
            "M: [[block]] 1: output should be [first, last]: two line "
            "numbers from 1, the first not after the last (or [] for none), not [0, 1]",
        ),
        ("[[block]]\nlines = [1, 2]\nsection = 1\n", "M: [[block]] 1: section should be a string"),
        ("[[block]]\nlines = [1, 2]\ntitle = 1\n", "M: [[block]] 1: title should be a string"),
        (
            "[[not_code]]\nlines = [1, 1]\n[[not_code]]\nlines = [1, 2]\nx = 1\n",
            "M: [[not_code]] 2 should be a table with lines = [first, last] only",
        ),
        ("not_code = [1]\n", "M: [[not_code]] 1 should be a table with lines = [first, last] only"),
        (
            "[[not_code]]\nlines = [2, 1]\n",
            "M: [[not_code]] 1: lines should be [first, last]: two line numbers from 1, "
            "the first not after the last, not [2, 1]",
        ),
    ],
)
def test_parse_map_refuses_each_malformed_entry_with_one_line_naming_it(text, message):
    with pytest.raises(ConformanceError) as caught:
        parse_map(text, "M")
    assert str(caught.value) == message if message else str(caught.value).startswith("M is not valid TOML: ")


@pytest.mark.parametrize(
    "value", ["[1]", "[1, 2, 3]", '"1, 2"', "[1.0, 2]", "[true, 2]", "[0, 2]", "[1, 0]", '[1, "2"]', "[2, 1]"]
)
def test_a_range_is_two_whole_line_numbers_from_1_in_order(value):
    with pytest.raises(ConformanceError, match=r"^M: \[\[block\]\] 1: lines should be \[first, last\]"):
        parse_map(f"[[block]]\nlines = {value}\n", "M")
    assert parse_map("[[block]]\nlines = [2, 2]\n", "M").blocks == (MapBlock(2, 2),)


def test_a_map_files_errors_name_it_by_default():
    with pytest.raises(ConformanceError, match=r"^the map file: unknown table\(s\) blok;"):
        parse_map("[[blok]]\n")
