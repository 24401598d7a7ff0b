"""The two wrong edits of `chapter/stated.py` that passed every test (issue 59), each with the input that exposes
it: a stated error under a statement that spans several lines (read under its last line, not its first), and the
names a page can state ending in `Exit` or `Interrupt` (`# SystemExit: 2`, `# KeyboardInterrupt`)."""

from __future__ import annotations

import pytest

from conformance.chapter.model import Step
from conformance.chapter.stated import block_steps, stated_in_comment


def test_a_stated_error_under_a_statement_of_several_lines_is_read_under_its_last_line():
    # Read under the statement's first line instead, the comment is missed: the block is `raised` and the
    # statement after it never runs.
    code = "values = compute(\n    1,\n    2)\n# ValueError: boom\nafter = 1\n"
    assert block_steps(code) == (
        Step(1, 3, stated="ValueError", stated_message="boom", stated_form="comment"),
        Step(5, 5),
    )


def test_a_comment_inside_a_statement_of_several_lines_is_not_its_stated_error():
    code = "values = compute(\n    # ValueError: not a statement's\n    2)\nafter = 1\n"
    assert block_steps(code) == ()


@pytest.mark.parametrize(
    "line, stated",
    [
        ("# SystemExit: 2", ("SystemExit", "2")),
        ("# KeyboardInterrupt", ("KeyboardInterrupt", "")),
        ("# argparse.SystemExit", ("argparse.SystemExit", "")),
    ],
)
def test_a_page_can_state_an_exit_or_an_interrupt(line, stated):
    assert stated_in_comment(line) == stated
    assert block_steps(f"import sys\nsys.exit(2)\n{line}\nprint('after')\n") == (
        Step(1, 2, stated=stated[0], stated_message=stated[1], stated_form="comment"),
        Step(4, 4),
    )


def test_a_word_that_only_ends_like_an_exit_is_not_a_stated_error():
    assert stated_in_comment("# Exit: the loop stops here") is None
    assert stated_in_comment("# an Interrupt") is None
