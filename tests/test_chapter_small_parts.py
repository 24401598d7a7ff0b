"""The chapter package's small pure parts, each output in full: which section a heading opens (`headings`), the
magics of a block (`magics`) and the `--blocks` listing (`listing`). No JAX, no process."""

from __future__ import annotations

import pytest

from conformance.chapter.headings import next_heading
from conformance.chapter.listing import block_lines
from conformance.chapter.magics import find_magics
from conformance.chapter.model import Block, Chapter, Heading, Step
from conformance.chapter.transcript import is_transcript, transcript_steps

BEFORE = Heading("3.1", "NaNs", "old sub")


@pytest.mark.parametrize(
    "text, heading",
    [
        ("6.2 Checking the current values", Heading("6.2", "Checking the current values")),
        ("  6.2.  Dotted  ", Heading("6.2", "Dotted")),
        ("10 Ten", Heading("10", "Ten")),
        ("6.2", Heading("3.1", "NaNs", "6.2")),  # a number alone opens nothing
        ("6.2 " + "x" * 152, Heading("3.1", "NaNs", "6.2 " + "x" * 152)),
        ("6.2 " + "x" * 151, Heading("6.2", "x" * 151)),
        ("Exercise 3: a leak detector", Heading("Ex3", "a leak detector")),
        ("exercise 12", Heading("Ex12", "")),
        ("Exercise 3:   spaced  ", Heading("Ex3", "spaced")),
        ("Exercises3", Heading("3.1", "NaNs", "Exercises3")),
        ("🔍 Extra: under the hood", Heading("3.1", "NaNs", "🔍 Extra: under the hood")),
        ("Summary", Heading("", "", "Summary")),
        ("A cheat sheet", Heading("", "", "A cheat sheet")),
        ("QUIZ time", Heading("", "", "QUIZ time")),
        ("Appendix B", Heading("", "", "Appendix B")),
        ("## Exercises", Heading("", "", "## Exercises")),
        ("More exercises", Heading("3.1", "NaNs", "More exercises")),  # `exercises` ends matter only at the start
    ],
)
def test_the_heading_a_line_opens(text, heading):
    assert next_heading(BEFORE, text) == heading


def test_magics_at_the_first_code_line_only_and_each_not_run_named_once():
    runnable, line_magics, cell, not_run = find_magics(
        "\n  \n%%timeit -n 2\nx = 1\n%%time\n%xmode a\n%xmode b\n%time\n%timeit   \n%matplotlib.inline x\n!ls -l"
    )
    assert runnable == "\n  \npass\nx = 1\npass\npass\npass\npass\npass\npass\npass"
    assert cell == "%%timeit -n 2" and line_magics == {}
    assert not_run == ("%%time", "%xmode", "%time", "%timeit", "%matplotlib.inline", "!ls")
    assert find_magics("%%bash\necho 1")[2:] == ("", ("%%bash",))
    assert find_magics("print(1)\n%%time\nx")[2:] == ("", ("%%time",))  # a cell magic only on the first code line
    assert find_magics("  %time x\n%time  y = 2 ")[1:] == ({2: "%time  y = 2"}, "", ("%time",))
    assert find_magics("%%capture --no-stdout out\nprint(1)") == ("pass\nprint(1)", {}, "%%capture --no-stdout out", ())


def block(index: int, **fields) -> Block:
    values = {
        "id": f"b{index}",
        "hash": f"h{index}",
        "code": "x = 1",
        "line": 3,
        "end_line": 4,
        "heading": Heading("1.1", "Setup"),
        **fields,
    }
    return Block(index=index, **values)


def test_the_blocks_listing_says_where_each_block_is_and_what_the_page_says_of_it():
    blocks = (
        block(0, code="# a comment\nx = 1", output="1\n2", output_line=5),
        block(1, joined=True, raises="*", display=True, heading=Heading()),
        block(
            2,
            raises="ValueError",
            steps=(
                Step(1, 2, "TypeError", stated_form="comment", shown="3"),
                Step(3, 3, magic="%timeit f()", shown="", mode="single"),
            ),
            cell_magic="%%time",
            magics_not_run=("%xmode",),
            notes=("the page says: pauses",),
            skip="own reason",
        ),
        block(3, listing="a plain fence of a MyST notebook page"),
        block(4, listing="a plain fence", steps=(Step(1, 1, shown="x"),)),
        block(5, output="shown", output_line=0),
    )
    chapter = Chapter("small", "/p/small.md", "markdown", blocks)
    lines = block_lines(chapter, {"b1": "needs a terminal", "b2": ""}, {"b4"})
    assert lines == [
        "small (markdown, /p/small.md): 6 blocks",
        "   1  b0                 h0  lines 3-4, output 5-6  [1.1 Setup]",
        "      x = 1",
        "   2  b1                 h1  lines 3-4, output after the next block  [-]",
        "      x = 1",
        "      (raises an exception; displays its last expression; skipped: needs a terminal)",
        "   3  b2                 h2  lines 3-4  [1.1 Setup]",
        "      x = 1",
        "      (raises ValueError; line 2: raises TypeError (comment); 2 statement(s) show their output, a >>> "
        "transcript; line 3: runs %timeit f(); runs under %%time; magic not run: %xmode; the page says: pauses; "
        "skipped: own reason)",
        "   4  b3                 h3  lines 3-4  [1.1 Setup]",
        "      x = 1",
        "      (not run: a plain fence of a MyST notebook page)",
        "   5  b4                 h4  lines 3-4  [1.1 Setup]",
        "      x = 1",
        "      (1 statement(s) show their output; runs all the same ([[run]]))",
        "   6  b5                 h5  lines 3-4  [1.1 Setup]",
        "      x = 1",
    ]
    notebook = Chapter("nb", "nb.ipynb", "notebook", (block(0, line=7, code="y" * 120),))
    assert block_lines(notebook, {}) == [
        "nb (notebook, nb.ipynb): 1 blocks",
        "   1  b0                 h0  cell 7  [1.1 Setup]",
        "      " + "y" * 100,
    ]


def test_a_transcript_is_its_first_non_blank_line_a_prompt():
    assert [is_transcript(code) for code in [">>>", ">>>x", "\n\n>>> 1", "  >>>\tx", "# c\n>>> 1", ""]] == [
        True,
        False,
        True,
        True,
        False,
        False,
    ]


def test_each_example_of_a_transcript_is_a_step_at_its_own_lines():
    runnable, steps, notes = transcript_steps(
        ">>> def f():\n...     return 1\n>>> f()\n1\n\n>>> 2  # doctest: +SKIP\n2"
    )
    assert runnable == "def f():\n    return 1\nf()\n\n\n\n"
    assert steps == (Step(1, 2, shown="", mode="single"), Step(3, 3, shown="1", mode="single"))
    assert notes == ("line 6: not run (doctest: +SKIP)",)
    assert transcript_steps("  >>> if 1:\n ...   pass\n") == (
        "pass\n\n",
        (),
        ("not run: the transcript's indentation is inconsistent (doctest refuses it)",),
    )


@pytest.mark.parametrize(
    "said, stated, message",
    [
        ("ZeroDivisionError: division by zero", "ZeroDivisionError", "division by zero"),
        ("ValueError: first\nsecond line", "ValueError", "first\nsecond line"),
        ("KeyError", "KeyError", ""),
        ("ValueError: 'a: b'", "ValueError", "a: b"),
        # found under mutation (issue 48): a class not named ...Error lost its message ("\nmore")
        ("jax.errors.Boom: bad thing\nmore", "jax.errors.Boom", "bad thing\nmore"),
        ("Boom", "Boom", ""),
    ],
)
def test_a_traceback_in_a_transcript_states_the_error_and_its_message(said, stated, message):
    code = f">>> f()\nTraceback (most recent call last):\n  ...\n{said}\n"
    runnable, (step,), _ = transcript_steps(code)
    assert runnable.split("\n")[0] == "f()"
    assert step == Step(1, 1, stated=stated, stated_message=message, stated_form="doctest", shown="", mode="single")


def test_code_of_blank_lines_python_refuses_has_no_magic():
    assert find_magics("\u00a0\n ") == ("\u00a0\n ", {}, "", ())


def test_an_examples_source_and_output_keep_their_own_trailing_characters():
    runnable, steps, _ = transcript_steps(">>> X = 1  \n>>> print('X  ')\nX  \n")
    assert runnable == "X = 1  \nprint('X  ')\n\n"
    assert [s.shown for s in steps] == ["", "X  "]
