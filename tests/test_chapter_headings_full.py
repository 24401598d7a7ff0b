"""A chapter's title and its reStructuredText headings (`conformance.chapter.headings`), string by string: the first
heading of each form, past code fences and front matter, read as the page shows it (issue 48: written against the
survivors of a mutation run). Small made-up pages, no JAX."""

from __future__ import annotations

import json

import pytest

from conformance.chapter.headings import TITLE_CHARS, chapter_title, rst_headings


def notebook(*cells: dict) -> str:
    return json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def markdown(source) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


# --- Markdown: the first ATX heading outside code fences ---


@pytest.mark.parametrize(
    "text, title",
    [
        ("Intro\n\n# The Title\n\n## Later\n", "The Title"),
        ("```python\n# a comment\n```\n# The Title\n", "The Title"),
        # a fence closes only on its own character, at least as long: a shorter run of backticks and a tilde fence
        # inside a four-backtick fence are its text
        ("````markdown\n```\n# shown source\n````\n# The Title\n", "The Title"),
        ("```\n~~~~\n# shown source\n```\n# The Title\n", "The Title"),
        ("~~~\n```\n# shown source\n~~~\n# The Title\n", "The Title"),
        ("```\n# never closed\n", ""),
        ("Only prose, no heading.\n", ""),
        ("", ""),
        ("   ### Indented three  ###\n", "Indented three"),
    ],
)
def test_a_markdown_pages_title_is_its_first_heading_outside_code_fences(text, title):
    assert chapter_title("markdown", text) == title


@pytest.mark.parametrize(
    "text, title",
    [
        # a YAML comment in the front matter is no heading, and the heading right after it is the title
        ("---\njupytext:\n  formats: md:myst\n# a YAML comment\n---\n# The Title\n## Later\n", "The Title"),
        ("---\n# a YAML comment first\nkernelspec: x\n---\n# The Title\n", "The Title"),
        # an empty front matter is closed on its second line: a thematic break later ends nothing
        ("---\n---\n# The Title\n\n---\n", "The Title"),
        # a `---` never closed is a thematic break, not front matter: only its own line is passed over
        ("---\n# The Title\n", "The Title"),
        ("---\n", ""),
        ("  ---  \ntitle: x\n  ---\n# The Title\n", "The Title"),
    ],
)
def test_a_markdown_pages_front_matter_is_passed_over(text, title):
    assert chapter_title("markdown", text) == title


# --- a notebook: the first `#` heading of its Markdown cells ---


def test_a_notebooks_title_is_its_first_markdown_heading_whether_its_source_is_lines_or_one_string():
    code = {
        "cell_type": "code",
        "metadata": {},
        "source": "# a comment in code\n",
        "outputs": [],
        "execution_count": None,
    }
    assert chapter_title("notebook", notebook(code, markdown(["Intro\n", "# The Title\n"]))) == "The Title"
    assert chapter_title("notebook", notebook(markdown("Intro\n# The Title\n"))) == "The Title"
    assert chapter_title("notebook", notebook(markdown(["# The ", "Title"]))) == "The Title"


def test_a_notebooks_cells_are_read_one_after_the_other_each_from_its_own_line():
    assert chapter_title("notebook", notebook(markdown("# First"), markdown("# Second"))) == "First"
    assert chapter_title("notebook", notebook(markdown("Intro"), markdown("# Second"))) == "Second"
    assert (
        chapter_title(
            "notebook", notebook(markdown("```"), markdown("# In a fence"), markdown("```"), markdown("# After"))
        )
        == "After"
    )


def test_a_notebooks_empty_or_odd_cells_give_no_title_and_hide_none():
    # an empty source, a missing one, a number (read as its text), a cell that is no object
    cells = [
        markdown([]),
        markdown(""),
        markdown(None),
        {"cell_type": "markdown"},
        markdown(7),
        "not a cell",
        {"cell_type": "raw", "source": "# Raw"},
    ]
    assert chapter_title("notebook", notebook(*cells)) == ""
    assert chapter_title("notebook", notebook(*cells, markdown("# The Title"))) == "The Title"


@pytest.mark.parametrize("text", ["not JSON", "[1, 2]", "{}", '{"cells": null}', '"a string"'])
def test_a_notebook_that_is_not_one_has_no_title(text):
    assert chapter_title("notebook", text) == ""


# --- reStructuredText: its first underlined heading ---


@pytest.mark.parametrize(
    "text, title",
    [
        ("A paragraph\n\nThe Title\n=========\n\nText\n\nLater\n-----\n", "The Title"),
        ("=========\nThe Title\n=========\n", "The Title"),
        ("The Title\n=========", "The Title"),  # the page's last two lines
        ("Just a paragraph.\n", ""),
        ("", ""),
    ],
)
def test_a_rst_pages_title_is_its_first_heading(text, title):
    assert chapter_title("rst", text) == title


def test_rst_headings_are_text_at_column_0_over_an_adornment_at_column_0_at_least_as_long():
    assert rst_headings(["Title", "====="]) == {0: "Title"}
    assert rst_headings(["Title  ", "=====   ", "", "Next", "~~~~~~"]) == {0: "Title", 3: "Next"}
    assert rst_headings(["  Indented", "=========="]) == {}  # indented text is no heading
    assert rst_headings(["Text", "    ====="]) == {}  # an indented line of `=` is no adornment
    assert rst_headings(["Title", "===   "]) == {}  # trailing spaces do not lengthen an adornment
    assert rst_headings(["Title", "===="]) == {}
    assert rst_headings(["=====", "-----"]) == {}  # an adornment over an adornment is no heading
    assert rst_headings(["Title"]) == {} and rst_headings([]) == {}


# --- plain text: its first non-blank line ---


@pytest.mark.parametrize(
    "text, title",
    [
        ("\n   \n  Chapter 8: The Debugging Toolkit  \nx = 1\n", "Chapter 8: The Debugging Toolkit"),
        ("", ""),
        ("\n \n\t\n", ""),
    ],
)
def test_a_plain_text_chapters_title_is_its_first_non_blank_line(text, title):
    assert chapter_title("text", text) == title


# --- every form: the title as the page shows it, and not too long ---


@pytest.mark.parametrize(
    "form, text, title",
    [
        ("markdown", "# The `jax.jit` transform\n", "The jax.jit transform"),
        ("markdown", "# Using {func}`jax.jit`  and   {py:class}`jax.Array`\n", "Using jax.jit and jax.Array"),
        ("markdown", "# Schedules ([schedule.py](https://example.org/s.py))\n", "Schedules (schedule.py)"),
        ("rst", "The ``jit`` transform\n=====================\n", "The jit transform"),
        ("text", "A   `spaced`\ttitle\n", "A spaced title"),
    ],
)
def test_a_title_reads_as_the_page_shows_it(form, text, title):
    assert chapter_title(form, text) == title


def test_a_title_of_at_most_150_characters_as_shown_is_kept_and_a_longer_line_is_no_title():
    assert TITLE_CHARS == 150
    assert chapter_title("text", "x" * 150) == "x" * 150
    assert chapter_title("text", "x" * 151) == ""
    assert chapter_title("markdown", "# " + "x" * 151 + "\n") == ""
    assert chapter_title("text", "x" * 148 + "   `y`") == "x" * 148 + " y"  # counted after spaces and backticks go


def test_front_matter_closed_by_yamls_dots_is_passed_over_as_markdown_pages_reader_does():
    """`---` ... `...` is YAML's document end, which `markdown.is_notebook_page` accepts: the title after it was lost
    (with a later `---` in the page, the heading between was taken for front matter)."""
    assert chapter_title("markdown", "---\njupytext: x\n...\n# Title\n\ntext\n\n---\n") == "Title"


def test_a_fence_line_with_an_info_string_does_not_close_an_open_fence():
    """CommonMark: a closing fence takes no info string, so ```python inside an open fence is a line of its code."""
    assert chapter_title("markdown", "```\n```python\n# shown in the code\n```\n# Title\n") == "Title"
    assert chapter_title("markdown", "```\ncode\n```   \n# Title\n") == "Title"  # spaces after a closing fence
