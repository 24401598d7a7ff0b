"""A Markdown/MyST page's fences and headings, found as CommonMark (markdown-it-py, what MyST uses) finds them
(issue 60): the five edge cases where a line-by-line reading went wrong, and a `{code-cell}`'s first line. No JAX."""

from __future__ import annotations

from conformance.chapter.markdown import read_markdown


def _codes(page: str) -> list[str]:
    return [block["code"] for block in read_markdown(page)]


def test_a_fence_inside_an_html_comment_is_not_run():
    """An author comments code out with `<!-- -->`: the page's build shows nothing of it, so nothing of it runs."""
    page = "# 1 A\n\n<!--\n```python\nraise SystemExit('commented out')\n```\n-->\n\n```python\nkept = 1\n```\n"
    assert _codes(page) == ["kept = 1"]


def test_a_fence_indented_four_spaces_after_a_paragraph_is_no_python_block():
    """Four spaces under a paragraph continue the paragraph (indented code cannot interrupt one): no fence."""
    page = "Some prose:\n    ```python\n    x = 'part of the paragraph'\n    ```\n\n```python\ny = 2\n```\n"
    assert _codes(page) == ["y = 2"]
    # not under a paragraph, the same lines are indented code: still no Python block
    assert _codes("Prose.\n\n    ```python\n    x = 1\n    ```\n") == []


def test_a_fence_inside_a_quote_is_found_without_its_quote_markers():
    page = "> A quote:\n>\n> ```python\n> quoted = 1 + 1\n> print(quoted)\n> ```\n>\n> ```text\n> 2\n> ```\n"
    (block,) = read_markdown(page)
    assert (block["code"], block["line"], block["end_line"]) == ("quoted = 1 + 1\nprint(quoted)", 4, 5)
    assert (block["output"], block["output_known"]) == ("2", True)


def test_a_setext_heading_is_a_heading():
    page = "# 1 First\n\n```python\na = 1\n```\n\n1.2 A setext heading\n--------------------\n\n```python\nb = 2\n```\n"
    assert [(b["heading"].section, b["heading"].title) for b in read_markdown(page)] == [
        ("1", "First"),
        ("1.2", "A setext heading"),
    ]
    # `===` underlines too; a `---` under a blank line is a thematic break, not a heading
    page = "2 Second\n========\n\n---\n\n```python\nc = 3\n```\n"
    assert read_markdown(page)[0]["heading"].section == "2"


def test_a_longer_fence_holds_a_shorter_one_as_its_text():
    """A ```` fence is closed only by ```` or longer: the ``` line inside is code (this one the old reader had
    right; kept so that it stays right)."""
    page = '````python\ns = """\n```\n"""\nprint(len(s))\n````\n\n# 2 After\n'
    assert _codes(page) == ['s = """\n```\n"""\nprint(len(s))']


def test_a_code_cells_first_line_is_after_its_options_and_the_blank_line_after_them():
    """MyST drops a directive body's first line when blank (after the options): the code, its line numbers and
    `--blocks` start at the first line of code, as myst-nb reads the cell."""
    page = (
        "```{code-cell} ipython3\n:tags: [raises-exception]\n\n1 / 0\n```\n\n"
        "```{code-cell}\n---\ntags: [x]\n---\n\ny = 2\n```\n"
    )
    blocks = read_markdown(page)
    assert [(b["code"], b["line"], b["end_line"], b["raises"]) for b in blocks] == [
        ("1 / 0", 4, 4, "*"),
        ("y = 2", 12, 12, ""),
    ]
    # no options: a leading blank line is dropped as well; a second blank line is code (kept, as MyST keeps it)
    assert [(b["code"], b["line"]) for b in read_markdown("```{code-cell}\n\n\nz = 3\n```\n")] == [("\nz = 3", 3)]
