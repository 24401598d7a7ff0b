"""The printed comparison (`conformance.chapter.printed`), value by value: what a block printed against what the page
shows, where the chapter tests only check that a difference is found or not (written against the survivors of a
mutation run). Pure: strings in, strings out."""

from __future__ import annotations

import pytest

from conformance.chapter.printed import (
    ALTERNATIVE,
    alternatives,
    lines_equal,
    message_difference,
    normalised_lines,
    printed_difference,
)


def test_normalised_lines_drop_colours_crlf_blank_edges_and_spaces_and_put_placeholders():
    text = (
        "\n \n  \x1b[31mError\x1b[0m at 0x7f3a12  \r\n\r\nin /tmp/abc/x.py:3, took 28.3 ms\r\n"
        "id=4658219312 obj 123456789 and 1234567\n10 loops, best of 3: 12.3 ms per loop\n"
        "5.27 ms ± 41.4 µs per loop (mean ± std. dev. of 3 runs, 10 loops each)\n \n"
    )
    assert normalised_lines(text) == [
        "Error at 0x…",
        "",
        "in /tmp/…, took <time>",
        "id=… obj <id> and 1234567",  # 7 digits: not an id
        "<time> ± <time> per loop (mean ± std. dev. of <runs>)",  # IPython before 5.0: the line it prints now
        "<time> ± <time> per loop (mean ± std. dev. of <runs>)",
    ]
    # without the rules: what a page's wildcard may stand for (times, paths, addresses kept as printed)
    assert normalised_lines(text, rules=False) == [
        "Error at 0x7f3a12",
        "",
        "in /tmp/abc/x.py:3, took 28.3 ms",
        "id=4658219312 obj 123456789 and 1234567",
        "12.3 ms ± 12.3 ms per loop (mean ± std. dev. of <runs>)",
        "5.27 ms ± 41.4 µs per loop (mean ± std. dev. of <runs>)",
    ]


def test_normalised_lines_of_nothing_and_of_blank_lines_are_none():
    assert normalised_lines("") == []
    assert normalised_lines("\n \r\n\t\n") == []
    assert normalised_lines("a\r\nb") == normalised_lines("a\nb") == ["a", "b"]
    assert normalised_lines("\x1b[1;32mok\x1b[0m") == ["ok"]


def test_lines_equal_numbers_to_a_relative_and_an_absolute_tolerance():
    assert lines_equal("x = 0.92423433", "x = 0.9242344")
    assert lines_equal("0.0", "1e-7")  # the absolute tolerance: 1e-6
    assert not lines_equal("0.0", "1e-5")
    assert lines_equal("1000.0", "1000.9") and not lines_equal("1000.0", "1001.1")  # relative 1e-3
    assert not lines_equal("x = 1", "y = 1")  # the text around the numbers is compared as it is
    assert not lines_equal("1 2", "1 2 3")


def test_lines_equal_nan_equals_only_nan():
    assert lines_equal("[nan 1.]", "[-nan 1.]")
    assert not lines_equal("[nan 1.]", "[1.0 1.]")
    assert not lines_equal("[1.0 1.]", "[nan 1.]")
    assert lines_equal("inf", "+inf") and not lines_equal("inf", "-inf")


def test_lines_equal_ignores_numpy_padding_only_at_brackets_and_commas():
    assert lines_equal("[0. 0.841471 0.9092974]", "[0. 0.84147096 0.9092974 ]")  # as normalised
    assert lines_equal("( 1. , 2.)", "(1., 2.)")
    assert not lines_equal("[1. 2.]", "[1.2.]")


def test_the_same_output_is_no_difference_and_a_differing_line_is_a_minus_and_a_plus():
    assert printed_difference("a\n  b  \n", "\n\na\nb") == ()
    assert printed_difference("", "") == ()
    assert printed_difference("a\nb\nc", "a\nB\nc") == ("-b", "+B")
    assert printed_difference("x", "") == ("-x",)
    assert printed_difference("", "y") == ("+y",)


def test_a_long_difference_is_cut_at_the_limit_and_says_how_many_more():
    shown = "\n".join(f"l{k}" for k in range(7))
    printed = "\n".join(f"m{k}" for k in range(7))
    pairs = tuple(line for k in range(7) for line in (f"-l{k}", f"+m{k}"))
    assert printed_difference(shown, printed) == pairs[:12] + ("… 2 more line(s)",)
    assert printed_difference(shown, printed, limit=5) == pairs[:5] + ("… 9 more line(s)",)
    assert printed_difference(shown, printed, limit=14) == pairs
    six = "\n".join(f"l{k}" for k in range(6)), "\n".join(f"m{k}" for k in range(6))
    assert printed_difference(*six) == pairs[:12]  # exactly the limit: nothing more to say


def test_alternatives_any_one_matching_is_no_difference_else_the_closest_first_on_a_tie():
    assert alternatives("a") == ["a"]
    assert alternatives("a" + ALTERNATIVE + "b\nc") == ["a", "b\nc"]
    close, far = "a\nx\nz", "a\nb\nc"
    assert printed_difference(close + ALTERNATIVE + far, "a\nx\ny") == ("-z", "+y")
    assert printed_difference(far + ALTERNATIVE + close, "a\nx\ny") == ("-z", "+y")
    assert printed_difference("a\nb" + ALTERNATIVE + "a\nc", "a\nd") == ("-b", "+d")
    assert printed_difference("a\nb" + ALTERNATIVE + "a\nd", "a\nd") == ()


def test_lines_of_another_count_are_a_unified_difference_without_its_headers():
    assert printed_difference("a\nc", "a\nb\nc") == ("+b",)
    assert printed_difference("a\nb\nc\nd", "a\nd") == ("-b", "-c")
    # without wildcards a line of `...` is text like any other
    assert printed_difference("a\n...\nc", "a\nb\nb2\nc") == ("-...", "+b", "+b2")


def test_a_missing_or_extra_line_that_starts_like_a_diff_header_is_still_a_difference():
    # a table's rule (`----`) or a `++` line: the unified difference's headers are not these lines
    assert printed_difference("name  value\n----  -----\na     1", "name value\na 1") == ("----- -----",)
    assert printed_difference("a\nb", "a\n++ c\nb") == ("+++ c",)
    assert printed_difference("a\nb", "a\n@@ c\nb") == ("+@@ c",)


def test_a_wildcard_matches_what_the_rules_made_of_a_line_or_the_line_as_printed():
    assert printed_difference("took 3 ms ...", "took 5 ms in all", wildcards=True) == ()
    assert printed_difference("took 3 ms ...", "took 5 ms in all") == ("-took <time> ...", "+took <time> in all")
    assert printed_difference("id ...89", "id 123456789", wildcards=True) == ()  # the raw line: `<id>` as printed
    assert printed_difference("id ...89", "id 123456788", wildcards=True) == ("-id ...89", "+id <id>")
    assert printed_difference("Array([1, ...], dtype=int32)", "Array([1, 2, 3], dtype=int32)", wildcards=True) == ()


def test_a_line_of_a_wildcard_alone_stands_for_any_lines():
    assert printed_difference("start\n...\nend", "start\nx\ny\nend", wildcards=True) == ()
    assert printed_difference("start\n<...>\nmid ...\n…\nend", "start\nx\ny\nmid z\nw\nend", wildcards=True) == ()
    assert printed_difference("start\n...\nend", "other\nx\ny\nend", wildcards=True) == (
        "-start",
        "-...",
        "+other",
        "+x",
        "+y",
    )
    assert printed_difference("start\n...\nend", "start\nx\ny\nEND", wildcards=True) == (
        "-...",
        "-end",
        "+x",
        "+y",
        "+END",
    )
    # a wildcard inside a line is not a line of its own: the lines are still counted, the difference unified
    assert printed_difference("a ...\nc", "a x\ny\nc", wildcards=True) == ("-a ...", "+a x", "+y")


def test_an_error_message_the_page_states_is_found_in_what_was_raised():
    assert message_difference("ValueError", "", "TypeError", "anything") == ()
    assert message_difference("ValueError", "must  be\npositive", "ValueError", "x must be positive!") == ()
    assert message_difference("ValueError", "at <..>:7 (f)", "JaxRuntimeError", "at /tmp/a.py:7 (f)") == ()
    assert message_difference("ValueError", "...", "ValueError", "") == ()
    assert message_difference("ValueError", "must be  positive", "JaxRuntimeError", "\n  \n  other thing \nmore") == (
        "-ValueError: must be positive",
        "+JaxRuntimeError: other thing",
    )


def test_a_message_not_found_shows_the_first_line_raised_cut_at_300_characters():
    assert message_difference("ValueError", "boom", "ValueError", "") == ("-ValueError: boom", "+ValueError: ")
    assert message_difference("ValueError", "boom", "ValueError", " \n\t\n") == ("-ValueError: boom", "+ValueError: ")
    long = "x" * 299 + "yz"
    assert message_difference("E", "boom", "F", long) == ("-E: boom", "+F: " + "x" * 299 + "y")


@pytest.mark.parametrize(
    "shown, printed", [("α = 1.0", "α = 1.0004"), ("[ 1.  2.]", "[1. 2.]"), ("0x1f at /tmp/q", "0xabc at /tmp/r")]
)
def test_outputs_that_differ_only_as_the_module_allows_are_the_same(shown, printed):
    assert printed_difference(shown, printed) == ()
