"""Reading a chapter into blocks (issue 37): the plain-text splitter (and the seed chapter's split, read from
../shared at test time), Markdown/MyST, notebooks written with nbformat, the map file and the skip list. No JAX."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.chapter.blocks import code_hash, defined_names, ends_with_expression, printed_comments, unique_ids
from conformance.chapter.mapfile import parse_map
from conformance.chapter.model import Heading
from conformance.chapter.printed import normalised_lines, printed_difference
from conformance.chapter.read import chapter_from_text, read_chapter, read_skip_list
from conformance.chapter.skiplist import block_limits, parse_limits, parse_skip_list, skip_reasons
from conformance.chapter.textsplit import split_text
from conformance.errors import ConformanceError

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_074f18c932eb1ee6.txt"
PROJECT = Path(__file__).resolve().parents[1]

TEXT = """\
Chapter 1: A test chapter

Some prose that introduces the chapter. It has sentences, and it ends with a period.

1.1 Printing

A paragraph before the first code.

import math
values = [1, 2, 3]
print("total:", sum(values))
total: 6

Prose again, after the output and a blank line.

def double(x):
    return 2 * x

print("doubled:", double(4))
A0
doubled: 8
# ❌ Wrong: a comment that opens the next cell right under the output
broken = double("a") + 1
# ✅ Correct: a cell right under the one before
fixed = double(2) + 1
print(fixed)
5

Sample output head:

1.2 Tables
Type: Exception
"""


def _texts(text):
    lines = text.splitlines()
    return [
        ("\\n".join(lines[p.start : p.end]), "\\n".join(lines[p.out_start : p.out_end]), p.heading.section)
        for p in split_text(text)
    ]


def test_plain_text_code_output_prose_and_headings_are_told_apart():
    pieces = split_text(TEXT)
    lines = TEXT.splitlines()
    assert [(p.start + 1, p.end) for p in pieces] == [(9, 11), (16, 19), (22, 23), (24, 26)]
    assert ["\n".join(lines[p.out_start : p.out_end]) for p in pieces] == ["total: 6", "A0\ndoubled: 8", "", "5"]
    assert [p.heading.section for p in pieces] == ["1.1"] * 4
    assert pieces[0].heading.title == "Printing"
    # the cell under the one before (no blank line, a comment opening it): cut; its output goes with the last one
    assert [p.output_known for p in pieces] == [True, True, False, True]


def test_bare_names_and_annotations_without_value_are_output_not_code():
    pieces = split_text("x = 1\nprint(x)\nA0\nType: Exception\ncount: 3\n\nProse that follows the output.\n")
    assert [(p.start, p.end, p.out_start, p.out_end) for p in pieces] == [(0, 2, 2, 5)]


def test_output_goes_on_after_a_blank_line_when_it_starts_with_a_printed_literal_or_is_indented():
    text = (
        'print("head")\nprint("\\nSample messages:")\nprint("  indented")\nhead\n\nSample messages:\n'
        "  indented\n\nSample prose that is not printed by the code above.\n"
    )
    (piece,) = split_text(text)
    assert text.splitlines()[piece.out_start : piece.out_end] == ["head", "", "Sample messages:", "  indented"]


def test_a_prose_line_that_starts_like_python_but_does_not_compile_is_prose():
    text = 'with jax.named_scope("name"): adds the name to the name stack of every operation inside it.\n'
    assert split_text(text) == []
    assert split_text("#SectionMain tools\n0Symptom lookup table\n") == []


def test_multiline_strings_and_indented_bodies_with_blank_lines_stay_in_one_statement():
    text = 'SCRIPT = """\nimport jax\n\nprint(1)\n"""\ndef f(x):\n    y = 1\n\n    return x + y\nprint(f(1))\n2\n'
    (piece,) = split_text(text)
    assert (piece.start, piece.end, piece.out_start, piece.out_end) == (0, 10, 10, 11)


def test_markdown_fences_code_cells_tags_prints_and_raises(tmp_path):
    text = """# 2 Section two

## 2.1 First

```python
x = 1 + 1
print(x)
# Prints:
# 2
```

```{code-cell} ipython3
:tags: [raises-exception]
1 / 0
```

```{code-cell}
---
tags: [skip-execution]
---
input()
```

```py
int("x")  # ==> raises ValueError
```
```output
ignored? no: this is the output of the block above
```

```javascript
not python
```

### Exercise 3: last

```python
y = 2
```
"""
    chapter = chapter_from_text("md", "md.md", "markdown", text)
    blocks = chapter.blocks
    assert [b.first_code for b in blocks] == [
        "x = 1 + 1",
        "1 / 0",
        "input()",
        'int("x")  # ==> raises ValueError',
        "y = 2",
    ]
    assert [b.line for b in blocks] == [6, 14, 21, 25, 38]
    assert blocks[0].output == "2" and blocks[0].output_known
    assert blocks[1].raises == "*" and blocks[3].stated_errors == ("ValueError",)
    assert blocks[2].skip and not blocks[0].skip
    assert blocks[3].output == "ignored? no: this is the output of the block above"
    assert not blocks[4].output_known  # states no output: not compared
    assert [b.section for b in blocks] == ["2.1", "2.1", "2.1", "2.1", "Ex3"]
    assert blocks[4].heading.text == "Exercise 3: last"


def test_a_notebook_written_with_nbformat_is_read_with_its_tags_outputs_and_displayed_value(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# 4.2 Counting\nSome text."),
        nbformat.v4.new_code_cell(
            "print('hello')",
            execution_count=1,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="hello\n")],
        ),
        nbformat.v4.new_code_cell(
            "1 + 1",
            execution_count=2,
            outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=2)],
        ),
        nbformat.v4.new_code_cell("raise ValueError('x')", metadata={"tags": ["raises-exception"]}),
        nbformat.v4.new_code_cell("%matplotlib inline\nz = 3", metadata={"tags": ["skip-execution"]}),
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat.writes(notebook), encoding="utf-8")
    chapter = read_chapter(path)
    assert chapter.form == "notebook" and [b.line for b in chapter.blocks] == [2, 3, 4, 5]
    first, second, third, fourth = chapter.blocks
    assert first.output == "hello\n" and first.section == "4.2" and not first.display
    assert second.output == "2\n" and second.display
    assert third.raises == "*" and not third.output_known
    assert fourth.skip == "tagged skip-execution in the notebook"
    with pytest.raises(ConformanceError, match="not a Jupyter notebook"):
        chapter_from_text("bad", "bad.ipynb", "notebook", "{not json")


def test_hash_ids_names_and_display():
    assert code_hash("x = 1  \n\n") == code_hash("\nx = 1")
    assert code_hash("x = 1") != code_hash("x = 2")
    assert unique_ids(
        [(Heading("3.1"), "ab" * 8), (Heading("3.1"), "ab" * 8), (Heading("Ex2"), "cd" * 8), (Heading(""), "ef" * 8)]
    ) == ["s3_1_abababab", "s3_1_abababab_2", "ex2_cdcdcdcd", "b_efefefef"]
    code = (
        "import os.path, numpy as np\nfrom math import pi as PI, tau\nx, (y, *z) = 1, (2, 3)\nn += 1\n"
        "def f():\n    inner = 1\nclass C: pass\nfor i in range(2): pass\nwith open('f') as fh: pass\n"
        "try:\n    pass\nexcept Exception as e:\n    pass\nif (w := 3):\n    v = [q for q in range(3)]\n"
    )
    assert defined_names(code) == ("os", "np", "PI", "tau", "x", "y", "z", "n", "f", "C", "i", "fh", "e", "w", "v")
    assert ends_with_expression("x = 1\nx + 1") and not ends_with_expression("x + 1;")
    assert not ends_with_expression("x = 1")
    assert printed_comments("print(1)\n# Prints:\n# 1\n#  two\ny = 2\n# Prints: 3") == "1\n two\n3"


def test_printed_output_is_normalised_before_it_is_compared():
    assert normalised_lines("  a   b  \n\n") == ["a b"]
    assert (
        printed_difference(
            "object at 0x7f3a12 took 28.3 ms id=4658219312 <T 4672637456>",
            "object at 0x55aa took 1.2 s id=1 <T 1234567890>",
        )
        == ()
    )
    assert printed_difference("[0.92423433 0.39475057]", "[0.9242344 0.3947506]") == ()
    assert printed_difference("jit error = 107", "jit error = 5.91e-06") == (
        "-jit error = 107",
        "+jit error = 5.91e-06",
    )
    assert printed_difference("a\nb", "a") == ("-b",)


def test_the_map_file_replaces_what_the_splitter_found():
    text = "x = 1\ny = 2\nprint(x + y)\n3\n"
    chapter_map = parse_map(
        '[[block]]\nlines = [1, 1]\noutput = []\nsection = "9"\n[[block]]\nlines = [2, 3]\noutput = [4, 4]\n'
    )
    chapter = chapter_from_text("m", "m.txt", "text", text, chapter_map)
    assert [(b.line, b.end_line, b.output, b.section) for b in chapter.blocks] == [(1, 1, "", "9"), (2, 3, "3", "")]
    dropped = chapter_from_text("m", "m.txt", "text", text, parse_map("[[not_code]]\nlines = [1, 4]\n"))
    assert dropped.blocks == ()
    for bad, why in [
        ("[[block]]\nlines = [3, 1]\n", "first not after the last"),
        ("[[blok]]\n", "unknown table"),
        ("[[block]]\nlines = [1, 2]\ncolour = 1\n", "unknown key"),
        ("[[block]\n", "not valid TOML"),
    ]:
        with pytest.raises(ConformanceError, match=why):
            parse_map(bad)
    with pytest.raises(ConformanceError, match="plain-text chapter"):
        chapter_from_text("m", "m.md", "markdown", "```python\nx = 1\n```\n", chapter_map)


def test_the_skip_list_names_blocks_by_hash_or_heading_and_index_and_says_what_it_no_longer_matches():
    chapter = chapter_from_text(
        "s", "s.md", "markdown", "## 1.3 Breakpoints\n```python\na = 1\n```\n```python\nb = 2\n```\n"
    )
    first, second = chapter.blocks
    entries = parse_skip_list(
        f'[[skip]]\nhash = "{first.hash[:8]}"\nreason = "needs a terminal"\n'
        f'[[skip]]\nheading = "1.3"\nindex = 2\nreason = "needs macOS arm64"\n'
        f'[[skip]]\nhash = "0123456789abcdef"\nreason = "an edited block"\n'
    )
    reasons, unmatched = skip_reasons(chapter.blocks, entries)
    assert reasons == {first.id: "needs a terminal", second.id: "needs macOS arm64"}
    assert [e.hash for e in unmatched] == ["0123456789abcdef"]
    for bad, why in [
        ('[[skip]]\nhash = "abc"\nreason = "r"\n', "8 to 64"),
        ('[[skip]]\nhash = "0123456789"\n', "no reason"),
        ('[[skip]]\nheading = "1.3"\nreason = "r"\n', "heading"),
        ('[[skip]]\nreason = "r"\nwhy = 1\n', "unknown key"),
    ]:
        with pytest.raises(ConformanceError, match=why):
            parse_skip_list(bad)


def test_the_skip_list_gives_blocks_time_limits_of_their_own():
    chapter = chapter_from_text(
        "s", "s.md", "markdown", "## 4.1 Waiting\n```python\na = 1\n```\n```python\nwhile True:\n    pass\n```\n"
    )
    limits = parse_limits(
        f'[[limit]]\nheading = "4.1"\nindex = 2\nseconds = 15\n'
        f'[[limit]]\nhash = "{chapter.blocks[0].hash}"\nseconds = 900\n'
        f'[[limit]]\nhash = "0123456789abcdef"\nseconds = 1\n'
    )
    found, unmatched = block_limits(chapter.blocks, limits)
    assert found == {chapter.blocks[1].id: 15.0, chapter.blocks[0].id: 900.0}
    assert [e.hash for e in unmatched] == ["0123456789abcdef"]
    assert parse_skip_list('[[limit]]\nheading = "4.1"\nindex = 1\nseconds = 2\n') == ()
    for bad, why in [
        ('[[limit]]\nheading = "4.1"\nindex = 1\nseconds = 0\n', "above 0"),
        ('[[limit]]\nheading = "4.1"\nindex = 1\n', "above 0"),
        ("[[limits]]\n", "unknown table"),
    ]:
        with pytest.raises(ConformanceError, match=why):
            parse_limits(bad)


def test_the_skip_list_and_map_are_found_beside_the_chapter_and_must_be_regular_files(tmp_path):
    chapter = tmp_path / "ch.txt"
    chapter.write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "ch.skip.toml").write_text('[[skip]]\nheading = "x"\nindex = 1\nreason = "r"\n', encoding="utf-8")
    found, entries, _ = read_skip_list(chapter)
    assert found == tmp_path / "ch.skip.toml" and entries[0].reason == "r"
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.toml")
        with pytest.raises(ConformanceError, match="not a regular file"):
            read_skip_list(chapter, tmp_path / "fifo.toml")
        os.mkfifo(tmp_path / "fifo.txt")
        with pytest.raises(ConformanceError, match="not a regular file"):
            read_chapter(tmp_path / "fifo.txt")
    with pytest.raises(ConformanceError, match="does not exist"):
        read_chapter(tmp_path / "missing.txt")
    (tmp_path / "prose.txt").write_text("Only prose here.\n", encoding="utf-8")
    with pytest.raises(ConformanceError, match="found no Python code"):
        read_chapter(tmp_path / "prose.txt")


def test_the_projects_seed_skip_list_names_no_code():
    text = (PROJECT / "chapters" / "000_074f18c932eb1ee6.skip.toml").read_text(encoding="utf-8")
    entries = parse_skip_list(text)
    assert entries and all(e.reason for e in entries)
    assert "jax.debug.breakpoint()\n" not in text and "@jax.jit" not in text


@pytest.mark.skipif(not SEED.is_file(), reason="../shared/seeds is absent: the seed chapter's split is not checked")
def test_the_seed_chapters_split():
    chapter = read_chapter(SEED)
    lines = SEED.read_text(encoding="utf-8").splitlines()
    blocks = chapter.blocks
    assert len(blocks) == 91
    assert (blocks[0].line, blocks[0].end_line, blocks[0].section) == (64, 162, "0")
    assert blocks[0].heading.subheading == "Common setup"
    assert lines[blocks[0].line - 1].startswith("import os, sys, io, re")
    assert blocks[0].output == lines[162]  # the start-up line the chapter printed
    first_print = blocks[1]
    assert (first_print.line, first_print.end_line, first_print.output_line, first_print.section) == (
        183,
        192,
        193,
        "1.1",
    )
    assert first_print.first_code == "def stats(x):" and len(first_print.output.splitlines()) == 2
    breakpoint_demo = blocks[9]
    assert (breakpoint_demo.line, breakpoint_demo.end_line, breakpoint_demo.output) == (404, 410, "")
    assert lines[403].startswith("# Needs interaction, not executed")
    # a block cut from the one above it (no blank line between) shows its output after the next one
    assert (blocks[13].line, blocks[13].end_line, blocks[13].joined) == (505, 515, True)
    assert lines[blocks[14].line - 1].startswith("# ❌ Wrong: the weights are captured")
    assert [b.section for b in blocks[78:86:2]] == ["Ex1", "Ex2", "Ex3", "Ex4"]
    assert (blocks[-1].line, blocks[-1].end_line, blocks[-1].section) == (2821, 2839, "Ex4")
    assert blocks[-1].output.splitlines()[-1] == "First NaN: (5, 'log')"
    found, entries, limits = read_skip_list(SEED)
    reasons, unmatched = skip_reasons(blocks, entries)
    assert found == PROJECT / "chapters" / "000_074f18c932eb1ee6.skip.toml"
    assert unmatched == [] and list(reasons) == [breakpoint_demo.id] and limits == ()


def test_plain_text_and_map_file_blocks_read_what_a_raises_comment_states():
    text = "1.1 Errors\n\nimport math\nx = 1 / 0  # ==> raises ZeroDivisionError\n\nSome prose here.\n"
    (block,) = chapter_from_text("t", "t.txt", "text", text).blocks
    assert block.stated_errors == ("ZeroDivisionError",) and block.steps[-1].stated_form == "==> raises"
    mapped = chapter_from_text("t", "t.txt", "text", text, parse_map("[[block]]\nlines = [3, 4]\n"))
    assert mapped.blocks[0].stated_errors == ("ZeroDivisionError",)


def test_a_raises_comment_ending_a_sentence_names_the_exception_without_its_period():
    (block,) = chapter_from_text(
        "t", "t.md", "markdown", "```python\n1 / 0  # ==> raises ZeroDivisionError.\n```\n"
    ).blocks
    assert block.stated_errors == ("ZeroDivisionError",)
    (dotted,) = chapter_from_text(
        "t", "t.md", "markdown", "```python\nf()  # ==> raises jax.errors.TracerError.\n```\n"
    ).blocks
    assert dotted.stated_errors == ("jax.errors.TracerError",)


@pytest.mark.parametrize(
    "text, parse",
    [("skip = 5", parse_skip_list), ("limit = 5", parse_limits), ("block = 5", parse_map), ("not_code = 3", parse_map)],
)
def test_a_skip_list_or_map_table_that_is_not_an_array_of_tables_is_one_line(text, parse):
    key = text.split()[0]
    with pytest.raises(ConformanceError, match=rf"{key} should be \[\[{key}\]\] entries"):
        parse(text, "F")


@pytest.mark.parametrize(
    "notebook, words",
    [
        ({"metadata": {"kernelspec": "python3"}, "cells": []}, "metadata.kernelspec should be a JSON object"),
        (
            {
                "metadata": {},
                "cells": [
                    {
                        "cell_type": "code",
                        "source": "1/0",
                        "metadata": {"tags": "raises-exception"},
                        "outputs": [],
                        "execution_count": 1,
                    }
                ],
            },
            "metadata.tags should be a list of strings",
        ),
    ],
)
def test_a_notebook_with_a_malformed_kernelspec_or_tags_is_one_line(notebook, words):
    pytest.importorskip("nbformat")
    import json
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbformat's warning that the cells have no id
        with pytest.raises(ConformanceError, match=words):
            chapter_from_text("n", "n.ipynb", "notebook", json.dumps({"nbformat": 4, "nbformat_minor": 5, **notebook}))


def test_a_chapter_with_a_utf8_byte_order_mark_reads_as_without_one(tmp_path):
    markdown = tmp_path / "bom.md"
    markdown.write_bytes("\ufeff## 2.1 First\n\n```python\nx = 1\n```\n".encode("utf-8"))
    (block,) = read_chapter(markdown).blocks
    assert (block.section, block.heading.title) == ("2.1", "First")
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("y = 2")]
    path = tmp_path / "bom.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + nbformat.writes(notebook).encode("utf-8"))
    assert [b.code for b in read_chapter(path).blocks] == ["y = 2"]
    skip = tmp_path / "bom.skip.toml"
    skip.write_bytes(b"\xef\xbb\xbf" + b'[[skip]]\nheading = "2.1"\nindex = 1\nreason = "r"\n')
    assert read_skip_list(markdown)[1][0].reason == "r"


def test_a_cell_with_an_ipython_magic_line_still_displays_its_last_expression():
    assert ends_with_expression("%matplotlib inline\nx = 1\nx + 1")
    assert not ends_with_expression("x = 1\n%time x")
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%matplotlib inline\nx = 1\nx + 1",
            execution_count=1,
            outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)],
        )
    ]
    (block,) = chapter_from_text("n", "n.ipynb", "notebook", nbformat.writes(notebook)).blocks
    assert block.display


def test_a_headings_markdown_links_and_myst_roles_read_as_their_text():
    # a heading linking to the source it describes, and one with a MyST role, as optax's and JAX's pages write them
    text = (
        "# Our [library](https://example.org/lib) guide\n\n## Schedules ([schedule.py](https://example.org/s.py))\n\n"
        "```python\nx = 1\n```\n\n## Using {func}`lib.run`\n\n```python\ny = 2\n```\n"
    )
    chapter = chapter_from_text("links", "links.md", "markdown", text)
    assert chapter.title == "Our library guide"
    assert [b.heading.subheading for b in chapter.blocks] == ["Schedules (schedule.py)", "Using `lib.run`"]


def test_a_skip_lists_setup_is_its_code_and_reason_and_a_bad_one_is_one_line():
    from conformance.chapter.skiplist import parse_setup

    text = (
        '[setup]\ncode = "import math as m"\nreason = "the doctest harness gives m"\n\n'
        '[[skip]]\nhash = "abcdef12"\nreason = "r"\n'
    )
    assert parse_setup(text) == ("import math as m", "the doctest harness gives m")
    assert len(parse_skip_list(text)) == 1  # the other entries read as before
    assert parse_setup('[[skip]]\nhash = "abcdef12"\nreason = "r"\n') == ("", "")
    for bad, why in [
        ('setup = "import m"\n', "should be a \\[setup\\] table"),
        ('[setup]\ncode = "import m"\n', "needs a reason"),
        ('[setup]\ncode = 5\nreason = "r"\n', "should be strings"),
        ('[setup]\ncode = "def"\nreason = "r"\n', "is not Python"),
        ('[setup]\ncod = "x"\n', "takes code and reason"),
    ]:
        with pytest.raises(ConformanceError, match=why):
            parse_setup(bad, "S")


# --- conformance.chapter.markdown's helpers, edge by edge (issue 48: each pins a mutant that survived) ---


def test_cell_options_empty_yaml_header_all_option_lines_quoted_and_yaml_list_tags():
    """A `---` header closed on the very next line holds no options yet skips both lines; a cell that is only
    `:tags:` lines ends its options at the body's end; quoted tags keep an `X` (only quotes are stripped) and commas
    split them, not spaces; a YAML `- name` list reads the same."""
    from conformance.chapter.markdown import _cell_options

    assert _cell_options(["---", "---", "x = 1"]) == ([], 2)
    assert _cell_options([":tags: [skip-execution]"]) == (["skip-execution"], 1)
    assert _cell_options([":tags: [ 'XLA', \"raises-exception\"]", "1"]) == (["XLA", "raises-exception"], 1)
    assert _cell_options(["---", "tags:", "- XLA", "- 'raises-exception'", "---", "x"]) == (
        ["XLA", "raises-exception"],
        5,
    )


def test_fences_an_empty_fence_closes_on_the_next_line_and_an_unclosed_one_runs_to_the_end():
    from conformance.chapter.markdown import _fences, _tokens

    assert _fences(_tokens("```\n```\n```python\nx = 1\n```\n")) == [(0, 1, "", []), (2, 4, "python", ["x = 1"])]
    assert _fences(_tokens("~~~python\nx = 1\n")) == [(0, 2, "python", ["x = 1"])]


def test_a_fence_in_a_list_item_loses_at_most_its_own_indentation():
    """A line less indented than the fence loses only its own spaces, never its text (CommonMark)."""
    from conformance.chapter.markdown import read_markdown

    page = "1. Item:\n\n   ```python\n     a = 1\n   b = 2\n    c = 3\n   ```\n"
    assert [b["code"] for b in read_markdown(page)] == ["  a = 1\nb = 2\n c = 3"]


def test_notebook_front_matter_closed_by_dots_and_keys_on_any_line_of_it():
    """YAML's `...` closes the front matter too, with no `---` anywhere later; the keys may sit on any line of it;
    an empty front matter (`---` then `---`) names no keys, whatever the page says after it."""
    from conformance.chapter.markdown import is_notebook_page

    assert is_notebook_page(["---", "jupytext:", "...", "# Title"]) is True
    assert is_notebook_page(["---", "title: a", "kernelspec:", "---"]) is True
    assert is_notebook_page(["---", "---", "kernelspec: x", "---"]) is False
    assert is_notebook_page(["---", "title: a", "...", "kernelspec: x", "---"]) is False


def test_markdown_headings_next_to_fences_a_comment_in_code_is_no_heading_and_a_bare_fence_is_skipped():
    """A `# 2 ...` comment as a fence's last line is code, not a heading; a heading right under a closing fence
    (no blank line) counts; a fence with no info string is no block."""
    from conformance.chapter.markdown import read_markdown

    text = "# 1 One\n\n```python\nx = 1\n# 2 Not a heading\n```\n# 3 Three\n```\n```\n```python\ny = 2\n```\n"
    raw = read_markdown(text)
    assert [(b["code"], b["heading"].section) for b in raw] == [("x = 1\n# 2 Not a heading", "1"), ("y = 2", "3")]


def test_markdown_raw_blocks_whole_an_output_fence_after_a_blank_line_or_last_and_none_after_text():
    """Every field of the raw blocks: an output fence counts after blank lines (and as the page's last fence), not
    after a line of text; a plain fence's `:tags:` line is its code, not options; an empty fence ends on its own
    line; only a {code-cell} with a stated output shows its value."""
    from conformance.chapter.markdown import read_markdown

    page = (
        "\n".join(
            [
                "```python",
                "x = 1",
                "```",
                "",
                "```output",
                "a",
                "b",
                "```",
                "```python",
                ":tags: [skip-execution]",
                "```",
                "not blank",
                "```text",
                "t",
                "```",
                "```{code-cell}",
                ":tags: [skip-execution]",
                "print(2)",
                "# Prints: 2",
                "```",
                "```{code-cell}",
                "y",
                "```",
                "```python",
                "```",
                "```python",
                "z = 3",
                "```",
                "```text",
                "3",
                "```",
            ]
        )
        + "\n"
    )
    skipped = "tagged skip-execution in the chapter"
    expected = [
        ("x = 1", 2, 2, "a\nb", True, "", False),
        (":tags: [skip-execution]", 10, 10, "", False, "", False),
        ("print(2)\n# Prints: 2", 18, 19, "2", True, skipped, True),
        ("y", 22, 22, "", False, "", False),
        ("", 25, 25, "", False, "", False),
        ("z = 3", 27, 27, "3", True, "", False),
    ]
    raw = read_markdown(page)
    assert [
        (b["code"], b["line"], b["end_line"], b["output"], b["output_known"], b["skip"], b["shows_value"]) for b in raw
    ] == expected
    assert {(b["joined"], b["output_line"], b["markdown"], b["raises"], b["listing"]) for b in raw} == {
        (False, 0, True, "", "")
    }
