"""What a page states of each statement (`conformance.chapter.stated`), on the edges the other tests leave out: the
exact text of `# Prints:` comments, a stated error's message of several lines, which statement a stated error
belongs to, and the fence lines that are kept as written. Pure parsing: no process is started."""

from __future__ import annotations

from conformance.chapter.model import Step
from conformance.chapter.stated import block_steps, fence_output_lines, printed_comments, stated_in_string


def test_prints_comments_on_the_first_line_keep_each_comment_under_them_as_written_less_its_hash_and_one_space():
    # the `# Prints:` line loses its trailing blanks; a comment under it loses `#` and one space (none where there is
    # none), indented or not, and keeps the rest
    assert printed_comments("# Prints: 3   \n#b\n    # c  \n# d") == "3\nb\nc  \nd"
    assert printed_comments("# Prints: 3") == "3"
    assert printed_comments("x = 1") is None
    steps = block_steps("f()\n# Prints: [1,\n#  2]", prints=True)
    assert steps == (Step(1, 1, shown="[1,\n 2]"),)


def test_a_string_states_a_message_of_several_lines_after_the_exceptions_name():
    assert stated_in_string("ValueError: first\nsecond\nthird") == ("ValueError", "first\nsecond\nthird")
    assert stated_in_string("\n\nKeyError: 'k'\n  more\n") == ("KeyError", "'k'\n  more")


def test_a_string_right_after_the_last_statement_but_one_states_its_error():
    assert block_steps('f()\n"""ValueError: bad"""') == (Step(1, 2, "ValueError", "bad", "string"),)


def test_a_string_after_another_string_states_nothing():
    # the first string is a docstring, no statement that raises: the page says nothing of either
    assert block_steps('"""A docstring."""\n"ValueError: bad"') == ()


def test_a_raises_comment_inside_a_statement_of_several_lines_is_that_statements_not_the_ones_before():
    code = "x = 1\ny = f(\n    2,  # ==> raises KeyError\n)"
    assert block_steps(code) == (Step(1, 4, "KeyError", "", "==> raises"),)
    assert block_steps("x = 1\ny = [\n# >> inner\n1]") == ()  # output shown inside a statement is no step's


def test_code_python_cannot_parse_for_its_depth_is_kept_as_written():
    for code in ("x = " + "-" * 100000 + "1", "x = 1" + "+1" * 5000):
        assert fence_output_lines(code) == (code, {})


def test_a_fence_line_indented_by_one_space_is_code_and_a_line_marked_with_two_arrows_is_output_however_it_reads():
    code = "x = 1\n nan generated here"
    assert fence_output_lines(code) == (code, {})
    assert fence_output_lines("x = 1\n>> total:") == ("x = 1\n", {2: "total:"})
    assert fence_output_lines("x = 1\n>>  y = 2  ") == ("x = 1\n", {2: " y = 2"})
