"""The map file (`conformance.chapter.mapfile`): the code, output and heading of each block it sets, the blocks it
drops, and a one-line error for every malformed entry. Pure, no JAX."""

from __future__ import annotations


from conformance.chapter.mapfile import parse_map
from conformance.chapter.read import chapter_from_text

TEXT = "x = 1\ny = 2\nprint(x + y)\n3\n"


def test_a_map_block_holds_exactly_its_lines_of_code_and_output():
    """Issue 48: an edit that cut a map block's last line of code survived the map-file test."""
    chapter_map = parse_map("[[block]]\nlines = [1, 1]\noutput = []\n[[block]]\nlines = [2, 3]\noutput = [4, 4]\n")
    chapter = chapter_from_text("m", "m.txt", "text", TEXT, chapter_map)
    assert [(b.code, b.output) for b in chapter.blocks] == [("x = 1", ""), ("y = 2\nprint(x + y)", "3")]
