"""The plain-text splitter (`conformance.chapter.textsplit`), block by block and field by field: where each block's
code and output start and end, whether its output is known, and the heading it sits under, where the repository
tests only check a few fields (written against the survivors of a mutation run). Small made-up chapters, no JAX."""

from __future__ import annotations

import ast

import pytest

from conformance.chapter import textsplit
from conformance.chapter.model import Heading
from conformance.chapter.textsplit import MAX_STATEMENT_LINES, Piece, split_text, statement_end

NONE = Heading()
FIRST = Heading("1.1", "First")


def block(start, end, out_start=None, out_end=None, known=True, heading=NONE):
    """A block `[start, end)` whose output is `[out_start, out_end)` (none, right after the code, when omitted)."""
    out_start = end if out_start is None else out_start
    return Piece(start, end, out_start, out_start if out_end is None else out_end, known, heading)


def split(*lines: str) -> list[Piece]:
    return split_text("\n".join(lines) + "\n")


# --- nothing, line ends -------------------------------------------------------------------------------------------


def test_an_empty_text_or_one_of_blank_lines_has_no_blocks():
    assert split_text("") == []
    assert split_text("\n\n   \n\t\n") == []


def test_crlf_line_ends_split_as_line_feeds_do():
    lines = ["1.1 First", "", "x = 1", "print(x)", "1", "", "Prose."]
    assert (
        split_text("\r\n".join(lines) + "\r\n")
        == split_text("\n".join(lines) + "\n")
        == [block(2, 4, 4, 5, heading=FIRST)]
    )


# --- what starts a statement --------------------------------------------------------------------------------------


def test_a_decorator_that_does_not_compile_alone_starts_the_function_under_it():
    assert split("@decorate", "def f():", "    return 1") == [block(0, 3)]


def test_a_statement_compiles_as_the_chapter_wrote_it_without_the_splitters_own_future_imports():
    # `from __future__ import annotations` (the splitter's own) refuses a named expression in an annotation
    assert split("x: (y := 1) = 2") == [block(0, 1)]


def test_a_line_python_refuses_outright_a_null_byte_is_prose_and_the_next_line_is_code():
    assert split("x = 1\0", "print(2)") == [block(1, 2)]


def test_a_line_no_later_line_can_mend_is_given_up_at_once_not_compiled_with_every_line_under_it(monkeypatch):
    compiled = []

    def counting(*args, **kwargs):
        compiled.append(args[0])
        return compile(*args, **kwargs)

    monkeypatch.setattr(textsplit, "compile", counting, raising=False)
    below = ["y = 2"] * 50
    assert statement_end(["x = = 1", *below], 0) is None  # an error on the last line may still be mended: 2 tries
    assert len(compiled) == 2
    compiled.clear()
    assert statement_end(["x = " + "-" * 10000 + "1", *below], 0) is None  # too deep for the compiler
    assert len(compiled) <= 2


def test_a_string_continued_by_backslashes_over_three_lines_is_one_statement():
    assert split('x = "abc\\', "def\\", 'ghi"', "print(x)", "abcdefghi") == [block(0, 4, 4, 5)]


def test_a_statement_of_max_statement_lines_is_found_and_a_longer_one_is_not():
    def chapter(items):
        return ["values = [", *["1,"] * items, "]", "print(len(values))", str(items)]

    assert MAX_STATEMENT_LINES == 400
    assert split(*chapter(398)) == [block(0, 401, 401, 402)]
    assert split(*chapter(399)) == [block(401, 402, 402, 403)]  # 401 lines: only the print is code


def test_an_indented_line_starts_no_statement():
    assert statement_end(["    x = 1", "y = 2"], 0) is None
    assert statement_end(["# a comment", "y = 2"], 0) == 1


# --- what continues a statement -----------------------------------------------------------------------------------


def test_an_indented_body_goes_on_after_a_blank_line_to_the_end_of_the_text():
    assert split("def f():", "    x = 1", "", "    return x") == [block(0, 4)]


def test_an_indented_compound_statement_after_a_blank_line_stays_in_the_function():
    assert split("def f(x):", "    y = 1", "", "    if x:", "        y = 2", "    return y") == [block(0, 6)]


def test_a_function_with_a_blank_line_in_its_body_after_prose_is_one_block():
    assert split("Intro prose.", "", "def f():", "    x = 1", "", "    return x") == [block(2, 6)]


def test_an_indented_comment_under_a_multiline_string_belongs_to_its_statement():
    assert split('SQL = """', "select 1", '"""', "  # the query above", "print(SQL)") == [block(0, 5)]


def test_a_closing_bracket_at_column_0_continues_a_body_and_another_column_0_line_ends_it():
    assert split("def f(x):", "    y = 1", "", "    return (x + y", ")") == [block(0, 5)]
    # `+ y)` at column 0 is no continuation: the function ends before the blank line, the rest is neither
    assert split("def f(x):", "    y = 1", "", "    return (x", "+ y)") == [block(0, 2)]


def test_else_and_except_at_column_0_continue_the_statement():
    assert split("try:", "    x = 1", "except ValueError:", "    x = 2", "print(x)", "1") == [block(0, 5, 5, 6)]


def test_a_whitespace_line_a_trailing_backslash_carries_the_statement_onto_stays_in_the_block_so_it_parses():
    chapter = ["print(0)", "", "x = 1 \\", "   "]
    assert split(*chapter) == [block(0, 4)]
    ast.parse("\n".join(chapter))  # without its last line the block would end on a backslash: no Python


# --- blocks cut at a comment ----------------------------------------------------------------------------------------


def test_a_comment_right_under_a_statement_opens_a_block_and_the_output_goes_with_the_last():
    assert split("x = 1", "# second cell", "y = x + 1", "print(y)", "2", "", "Prose.") == [
        block(0, 1, known=False),
        block(1, 4, 4, 5),
    ]


def test_a_comment_under_a_comment_opens_no_second_block():
    assert split("x = 1", "# a", "# b", "y = 2") == [block(0, 1, known=False), block(1, 4)]


def test_a_comment_after_a_blank_line_opens_no_block():
    assert split("x = 1", "", "# c", "y = 2") == [block(0, 4)]


def test_a_cut_needs_the_line_right_above_the_comment_to_be_code_and_a_statement_under_it():
    assert split("", "x = 1", "# c", "y = 2") == [block(1, 2, known=False), block(2, 4)]
    assert split("x = 1", "# done") == [block(0, 2)]  # a comment ending the run opens nothing


def test_a_run_of_comments_only_is_prose():
    assert split("# Section  Tool", "# one  two") == []


# --- output ---------------------------------------------------------------------------------------------------------


def test_output_right_under_code_runs_to_a_blank_line_and_trailing_blank_lines_are_left_out():
    assert split("print(1)", "1", "", "", "") == [block(0, 1, 1, 2)]
    assert split("print(1)", "1", "", "Prose after the output.") == [block(0, 1, 1, 2)]


def test_code_after_a_blank_line_shows_no_output_even_when_the_next_paragraph_is_what_it_prints():
    assert split('print("Hello there")', "", "Hello there") == [block(0, 1)]


def test_output_ends_at_the_next_statement():
    assert split("print(1)", "1", "print(2)", "2") == [block(0, 1, 1, 2), block(2, 3, 3, 4)]


def test_an_indented_paragraph_after_a_blank_line_goes_on_with_the_output():
    assert split("print(t)", "T", "", " a  1", "", "   b  2", "Prose right under.") == [block(0, 1, 1, 7)]
    assert split("print(t)", "T", "", "  row") == [block(0, 1, 1, 4)]
    assert split("print(t)", "T", "", "  row", "end") == [block(0, 1, 1, 5)]


@pytest.mark.parametrize("bullet", ["  - item", "  * item", "  • item", "  12. item", "\t- item"])
def test_an_indented_bullet_after_a_blank_line_ends_the_output(bullet):
    assert split("print(t)", "T", "", bullet, "more") == [block(0, 1, 1, 2)]


@pytest.mark.parametrize("line", ["  -1.5", "  1.5 m", "  *args", "  -"])
def test_an_indented_line_that_only_starts_like_a_bullet_goes_on_with_the_output(line):
    assert split("print(t)", "T", "", line) == [block(0, 1, 1, 4)]


def test_a_paragraph_starting_with_a_printed_literal_of_four_characters_or_more_goes_on():
    chapter = ["print('x')", 'print(f"Done")', "x", "", "Done", "", "None of this is printed."]
    assert split(*chapter) == [block(0, 2, 2, 5)]
    assert split("print('abc')", "x", "", "abc") == [block(0, 1, 1, 2)]  # three characters are too few


def test_each_line_of_a_printed_literal_is_a_start_the_output_may_go_on_with():
    assert split('print("Results\\n\\nSecond part")', "Results", "", "Second part") == [block(0, 1, 1, 4)]


def test_the_literals_are_those_of_the_run_not_of_the_prose_above_it():
    chapter = ["Intro prose.", "", 'print("Head")', 'print("Sample messages:")', "Head", "", "Sample messages:"]
    assert split(*chapter) == [block(2, 4, 4, 7)]


def test_output_lines_are_never_read_as_headings():
    chapter = ['print("head")', 'print("Totals")', "head", "", "Totals", "", "x = 1"]
    assert split(*chapter) == [block(0, 2, 2, 5), block(6, 7)]


# --- headings -------------------------------------------------------------------------------------------------------


def test_a_heading_needs_a_blank_line_on_both_sides():
    assert split("1.1 First", "", "x = 1", "", "2.2 Second", "Prose right under it.", "", "y = 2") == [
        block(2, 3, heading=FIRST),
        block(7, 8, heading=FIRST),
    ]
    assert split("1.1 First", "", "x = 1", "", "Prose right above it.", "2.2 Second", "", "y = 2") == [
        block(2, 3, heading=FIRST),
        block(7, 8, heading=FIRST),
    ]
    assert split("Title Here", "print(1)") == [block(1, 2)]
    assert split("Prose.", "x = 1") == [block(1, 2)]


def test_the_first_line_and_the_last_line_are_headings_when_blank_lines_border_them_inside():
    assert split("2.2 Second", "", "x = 1", "", "3.3 Third") == [block(2, 3, heading=Heading("2.2", "Second"))]


def heading_over_code(line: str) -> Heading:
    (found,) = split("1.1 First", "", line, "", "x = 1")
    return found.heading


@pytest.mark.parametrize(
    "line, heading",
    [
        ("2.2 Second", Heading("2.2", "Second")),
        ("Exercise 2: a leak detector.", Heading("Ex2", "a leak detector.")),
        ("Common setup", Heading("1.1", "First", "Common setup")),
        ("🔍 Extra notes", Heading("1.1", "First", "🔍 Extra notes")),
        ("élan vital", Heading("1.1", "First", "élan vital")),
        ("Summary", Heading("", "", "Summary")),
        ("A" * 80, Heading("1.1", "First", "A" * 80)),
        ("A" * 81, FIRST),
        (" ".join(["Word"] * 10), Heading("1.1", "First", " ".join(["Word"] * 10))),
        (" ".join(["Word"] * 11), FIRST),
        ("3.1 This sentence starts with a number and ends.", FIRST),
        ("see the table below", FIRST),
        (" 2.2 Indented by one space", FIRST),
        ("🟢 Works on every release", FIRST),
        ("⚠️ Careful here", FIRST),
        ("Ends with a colon:", FIRST),
        ("Ends with a comma,", FIRST),
        ("Ends with a semicolon;", FIRST),
        ("Ends with a period.", FIRST),
    ],
)
def test_which_lines_between_blank_lines_are_headings(line, heading):
    assert heading_over_code(line) == heading
