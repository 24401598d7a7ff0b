"""What a page says will happen, read as its author means it (issue 44): stated errors in every form, notes, the
output of each statement with its alternatives, output lines inside a fence, `>>>` transcripts, magics, listings
of a MyST notebook page, fences indented in list items, `[[run]]` entries and lists of pages. Pure parsing: no
process is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.chapter.blocks import block_plan
from conformance.chapter.magics import find_magics
from conformance.chapter.markdown import LISTING, is_notebook_page
from conformance.chapter.pages import git_blob_id, locate_pages, parse_pages
from conformance.chapter.printed import message_difference, printed_difference
from conformance.chapter.read import chapter_from_text
from conformance.chapter.skiplist import listings_to_run, parse_runs
from conformance.chapter.model import Step
from conformance.chapter.stated import (
    block_steps,
    stated_raise,
    unquoted,
    fence_output_lines,
    notes_of,
    printed_comments,
    stated_in_comment,
    stated_in_string,
)
from conformance.chapter.transcript import is_transcript, transcript_steps
from conformance.errors import ConformanceError


def md(*fences: str, header: str = "") -> str:
    return header + "# Page\n\n" + "\n".join(f"```python\n{code}\n```\n" for code in fences)


def test_a_comment_under_a_statement_states_its_error_with_or_without_a_message():
    assert stated_in_comment("# ValueError: out-of-bounds indexing at <..>:7 (f)") == (
        "ValueError",
        "out-of-bounds indexing at <..>:7 (f)",
    )
    assert stated_in_comment('# ConcretizationTypeError: "Abstract tracer value encountered ..."') == (
        "ConcretizationTypeError",
        "Abstract tracer value encountered ...",
    )
    assert stated_in_comment("#   FloatingPointError") == ("FloatingPointError", "")
    assert stated_in_comment("# jax.errors.TracerBoolConversionError: x") == (
        "jax.errors.TracerBoolConversionError",
        "x",
    )
    # not an exception's name, a warning (shown, not raised), or a sentence about an error
    for line in (
        "# Note: this is fine",
        "# UserWarning: explicitly requested dtype",
        "# TypeError is raised here",
        "# Prints: 3",
        "x = 1",
    ):
        assert stated_in_comment(line) is None, line


def test_a_string_literal_whose_first_line_names_an_exception_states_the_error_of_the_statement_before_it():
    assert stated_in_string("\nValueError:\n..  at mapped index 0: non-negative!\n") == (
        "ValueError",
        "..  at mapped index 0: non-negative!",
    )
    assert stated_in_string("TypeError: cannot reshape") == ("TypeError", "cannot reshape")
    assert stated_in_string("Just a docstring.") is None
    steps = block_steps('err.throw()\n"""\nValueError:\n  at mapped index 0: bad\n"""\nprint(1)')
    assert [(s.first, s.last, s.stated, s.stated_form) for s in steps] == [
        (1, 5, "ValueError", "string"),
        (6, 6, "", ""),
    ]
    assert steps[0].stated_message == "at mapped index 0: bad"


def test_steps_end_after_each_statement_the_page_says_something_of_and_a_block_it_says_nothing_of_is_one():
    code = (
        "import math\nerr = 1\nerr.throw()\n# ValueError: out-of-bounds\n\nx = 2\nx.throw()  # ==> raises "
        "KeyError\ny = 3\nprint(y)\n# Prints: 3\nz = 4"
    )
    steps = block_steps(code)
    assert [(s.first, s.last, s.stated, s.shown) for s in steps] == [
        (1, 3, "ValueError", None),
        (6, 7, "KeyError", None),
        (8, 11, "", None),
    ]
    # `# Prints:` belongs to the statement above it only in a Markdown page (`prints`)
    steps = block_steps(code, prints=True)
    assert [(s.first, s.last, s.shown) for s in steps][2:] == [(8, 9, "3"), (11, 11, None)]
    assert block_steps("x = 1\nprint(x)\n# a comment") == ()
    assert block_steps("def broken(:\n    pass\n# ValueError") == ()  # does not parse here: one step, run whole


def test_an_arrow_comment_that_does_not_say_raises_is_a_note():
    assert notes_of("f(2.) # ==> Pauses during execution!\ng()  # ==> raises ValueError") == (
        "the page says: Pauses during execution!",
    )
    (block,) = chapter_from_text("t", "t.md", "markdown", md("f(2., 1.) # ==> No breakpoint")).blocks
    assert block.notes == ("the page says: No breakpoint",) and not block.states_error


def test_prints_comments_keep_alternatives_apart_and_leave_out_comments_that_are_not_output():
    shown = printed_comments("f(2., 3.)\n# Prints: x: 2.0\n#         y: 3.0\n# OR\n# Prints: y: 3.0\n#         x: 2.0")
    assert shown == "x: 2.0\n        y: 3.0\n# OR\ny: 3.0\n        x: 2.0"
    assert printed_difference(shown, "y: 3.0\nx: 2.0\n") == ()
    assert printed_difference(shown, "x: 2.0\ny: 3.0\n") == ()
    assert printed_difference(shown, "x: 2.0\n") != ()
    assert printed_comments("jax.effects_barrier()\n# Prints: x: 2.\n# <do something else>\n# ...") == "x: 2."
    assert printed_comments("f()\n# <do something else>\n# Prints: x: 2.") == "x: 2."


def test_a_sentence_under_prints_is_prose_not_output_but_a_value_under_it_or_on_its_line_is_read():
    """Issue 59: the prose under a `# Prints:` (`The debugger stops here and waits.`) was read as output."""
    prose = "# The debugger stops here and waits for you."
    assert printed_comments(f"jax.debug.breakpoint()\n# Prints:\n{prose}") is None
    assert printed_comments(f"f(x)\n# Prints: x: 2.0\n{prose}\n#   y: 3.0") == "x: 2.0\n  y: 3.0"
    assert printed_comments(f"f()\n# Prints: 1\n# OR\n# Prints:\n{prose}") == "1"  # no empty alternative
    for value in (
        "Array([1., 2.], dtype=float32)",
        "4",
        "True",
        "[1. 2. 3.]",
        "x: 2.0",
        "The value is 42.",
        "The mean of x is 2.5.",
        "Traced<ShapedArray(float32[])> is here.",
        "Found  two  spaces  between words.",
        "Only three words.",
        "the lower case start here.",
        "Hello world ends without a stop",
    ):
        assert printed_comments(f"f()\n# Prints:\n# {value}") == value, value
    # the rest of the `# Prints:` line is always output, a sentence too
    assert (
        printed_comments('print("Hello to the whole world.")  # x\n# Prints: Hello to the whole world.')
        == "Hello to the whole world."
    )
    # as a step's shown output in a Markdown page, as `chapter` reads it
    page = chapter_from_text(
        "p",
        "/p.md",
        "markdown",
        md(
            f"jax.debug.breakpoint()\n# Prints:\n{prose}\ny = 1\nprint(y)\n# Prints:\n# 1",
            "print(jnp.array([1., 2.]))\n# Prints:\n# Array([1., 2.], dtype=float32)",
        ),
    )
    first, second = (block_plan(b.code, markdown=True)["steps"] for b in page.blocks)
    assert [(step.first, step.last, step.shown) for step in first] == [(1, 5, "1")]
    assert [(step.first, step.last, step.shown) for step in second] == [(1, 1, "Array([1., 2.], dtype=float32)")]
    assert [b.output for b in page.blocks] == ["1", "Array([1., 2.], dtype=float32)"]


def test_lines_inside_a_fence_that_are_not_code_are_its_output():
    code = "err, _ = f(0.)\nprint(err.get())\n>> nan generated by primitive mul at <...>:3 (f)"
    runnable, found = fence_output_lines(code)
    assert found == {3: "nan generated by primitive mul at <...>:3 (f)"} and runnable.endswith("\n")
    steps = block_steps(runnable, output_lines=found)
    assert steps[-1].shown == "nan generated by primitive mul at <...>:3 (f)"
    assert (
        printed_difference(steps[-1].shown, "nan generated by primitive mul at /tmp/x.py:3 (f)", wildcards=True) == ()
    )
    # a block that does not parse for another reason stays as it is (its SyntaxError is its outcome)
    assert fence_output_lines("def debug.print(fmt: str) -> None:\n  print(fmt)") == (
        "def debug.print(fmt: str) -> None:\n  print(fmt)",
        {},
    )
    assert fence_output_lines("x = 1\nprint(x)") == ("x = 1\nprint(x)", {})


def test_a_transcript_is_run_as_a_doctest_each_example_a_step():
    code = (
        ">>> import math\n>>> math.floor(2.5)\n2\n>>> for k in range(2):\n...     print(k)\n0\n1\n"
        ">>> int('q')\nTraceback (most recent call last):\n  ...\nValueError: invalid literal for int()\n"
    )
    assert is_transcript(code) and is_transcript("\n  >>> 1") and not is_transcript("x = 1\n>>> 2")
    runnable, steps, notes = transcript_steps(code)
    assert runnable.split("\n")[:5] == ["import math", "math.floor(2.5)", "", "for k in range(2):", "    print(k)"]
    assert [(s.first, s.last, s.mode, s.shown, s.stated) for s in steps] == [
        (1, 1, "single", "", ""),
        (2, 2, "single", "2", ""),
        (4, 5, "single", "0\n1", ""),
        (8, 8, "single", "", "ValueError"),
    ]
    assert steps[3].stated_message == "invalid literal for int()" and notes == ()
    _, skipped, notes = transcript_steps(">>> 1  # doctest: +SKIP\n1\n>>> 2\n2")
    assert len(skipped) == 1 and notes == ("line 1: not run (doctest: +SKIP)",)


def test_magics_run_as_the_magic_does_or_say_they_were_not_run():
    runnable, line_magics, cell, not_run = find_magics(
        "%xmode minimal\nimport math\n%timeit math.sqrt(2)\nfor k in range(2):\n    %time k\n!pip install jax"
    )
    assert runnable.split("\n") == ["pass", "import math", "pass", "for k in range(2):", "    pass", "pass"]
    assert line_magics == {3: "%timeit math.sqrt(2)"} and cell == ""
    assert not_run == ("%xmode", "%time", "!pip")  # a line magic inside indented code is not run
    assert find_magics("%%capture out\nprint(1)")[2] == "%%capture out"
    assert find_magics("x = '%timeit'")[1] == {}  # code that parses has no magic
    plan = block_plan("import math\n%timeit math.sqrt(2)\nprint(1)")
    assert [(s.first, s.last, s.magic) for s in plan["steps"]] == [
        (1, 1, ""),
        (2, 2, "%timeit math.sqrt(2)"),
        (3, 3, ""),
    ]


def test_a_myst_notebook_page_runs_only_its_code_cells_and_an_indented_fence_is_dedented():
    header = "---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n---\n"
    assert is_notebook_page(header.split("\n")) and not is_notebook_page(["---", "title: x", "---"])
    text = (
        header + "# Page\n\n```{code-cell}\nx = 1\n```\n\n```python\nx = 2\n```\n\n1. a step:\n\n   ```python\n"
        "   if x:\n       y = 3\n   ```\n"
    )
    blocks = chapter_from_text("t", "t.md", "markdown", text).blocks
    assert [b.listing for b in blocks] == ["", LISTING, LISTING]
    assert blocks[2].code == "if x:\n    y = 3"
    plain = chapter_from_text("t", "t.md", "markdown", "# P\n\n- item\n\n  ```python\n  if True:\n      z = 1\n  ```\n")
    assert plain.blocks[0].code == "if True:\n    z = 1" and not plain.blocks[0].listing


def test_a_skip_lists_run_entries_name_the_listings_to_run_all_the_same():
    header = "---\nkernelspec:\n  name: python3\n---\n"
    blocks = chapter_from_text("t", "t.md", "markdown", md("x = 1", "y = 2", header=header)).blocks
    entries = parse_runs(
        f'[[run]]\nhash = "{blocks[1].hash[:8]}"\nreason = "a doctest job runs it"\n'
        f'[[run]]\nheading = "Page"\nindex = 9\n'
    )
    named, unmatched = listings_to_run(blocks, entries)
    assert named == {blocks[1].id} and [e.describe() for e in unmatched] == ["heading 'Page' index 9"]
    with pytest.raises(ConformanceError, match=r"\[\[run\]\] 1"):
        parse_runs('[[run]]\nhash = "xyz"\n')


def test_printed_wildcards_and_the_message_of_a_stated_error():
    assert printed_difference("Array([1, ...], dtype=int32)", "Array([1, 2, 3], dtype=int32)", wildcards=True) == ()
    assert printed_difference("Array([1, ...], dtype=int32)", "Array([1, 2, 3], dtype=int32)") != ()
    assert (
        message_difference(
            "ValueError",
            "out-of-bounds indexing at <..>:7 (f)",
            "JaxRuntimeError",
            "out-of-bounds indexing at /tmp/b.py:7 (f)\nmore",
        )
        == ()
    )
    assert message_difference("ValueError", "must be positive!", "AssertionError", "must be positive!") == ()
    assert message_difference(
        "ValueError",
        "nan generated by primitive sin at <...>:8 (f)",
        "JaxRuntimeError",
        "nan generated by primitive: sin.",
    ) == (
        "-ValueError: nan generated by primitive sin at <...>:8 (f)",
        "+JaxRuntimeError: nan generated by primitive: sin.",
    )
    assert (
        printed_difference(
            "1.23 ms ± 45.6 µs per loop (mean ± std. dev. of 7 runs, 1,000 loops each)",
            "85.3 µs ± 70.6 µs per loop (mean ± std. dev. of 7 runs, 1 loop each)",
        )
        == ()
    )


def test_a_list_of_pages_names_each_by_path_and_commit_and_checks_the_checkout_has_that_content(tmp_path):
    page = b"# A page\n\n```python\nx = 1\n```\n"
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object of "hello\n"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_bytes(page)
    text = (
        f'repository = "jax-ml/jax"\n[[page]]\npath = "docs/a.md"\ncommit = "{"1" * 40}"\n'
        f'blob = "{git_blob_id(page)}"\nskip = "a.skip.toml"\n'
    )
    listed = parse_pages(text, "list.toml", tmp_path / "lists")
    assert [(p.path, p.name, p.skip) for p in listed.pages] == [
        ("docs/a.md", "docs/a", tmp_path / "lists" / "a.skip.toml")
    ]
    assert listed.pages[0].origin("jax-ml/jax") == "jax-ml/jax@111111111111:docs/a.md"
    assert locate_pages(listed, tmp_path) == [(listed.pages[0], tmp_path / "docs" / "a.md")]
    (tmp_path / "docs" / "a.md").write_bytes(page + b"edited\n")
    with pytest.raises(ConformanceError, match="is not the page the list names.*check out that commit"):
        locate_pages(listed, tmp_path)
    with pytest.raises(ConformanceError, match="docs/a.md is not in"):
        locate_pages(listed, tmp_path / "docs")
    for bad, said in (
        (text.replace('"jax-ml/jax"', '"jax"'), "owner/name"),
        (text.replace("1" * 40, "abc"), "commit should be 40"),
        (text + text.split("\n", 1)[1], "both named 'docs/a'"),
        ('repository = "a/b"\n', "names no page"),
        (text.replace("path = ", "where = "), "unknown key"),
    ):
        with pytest.raises(ConformanceError, match=said):
            parse_pages(bad, "list.toml", tmp_path)


def test_the_projects_list_of_jax_pages_names_five_pages_or_more_each_once():
    listed = parse_pages(
        (Path(__file__).parent.parent / "chapters" / "jax-docs.toml").read_text(encoding="utf-8"),
        "chapters/jax-docs.toml",
        Path(__file__).parent.parent / "chapters",
    )
    paths = [page.path for page in listed.pages]
    assert len(paths) >= 5 and len(set(paths)) == len(paths) and listed.repository == "jax-ml/jax"
    assert {
        "docs/debugging.md",
        "docs/jit-compilation.md",
        "docs/notebooks/Common_Gotchas_in_JAX.md",
        "docs/pytrees.md",
        "docs/random-numbers.md",
    } <= set(paths)
    assert all(page.skip is None or page.skip.is_file() for page in listed.pages)


def test_numpys_column_padding_inside_brackets_is_no_difference_but_another_number_or_word_is():
    # numpy pads an array's elements to one width: a stored output printed by another numpy (or other digits) puts
    # the padding elsewhere, `[0. 0.5 0.25]` against `[0.   0.5  0.25 ]`
    assert printed_difference("[0. 0.841471 0.9092974]", "[0.         0.84147096 0.9092974 ]") == ()
    assert printed_difference("[[ 1.  2.]\n [ 3.  4.]]", "[[1. 2.]\n [3. 4.]]") == ()
    assert printed_difference("(Array(1., dtype=float32), )", "(Array(1., dtype=float32),)") == ()
    assert printed_difference("[0. 0.841471 0.9092974]", "[0. 0.85 0.9092974]") != ()
    assert printed_difference("[0. 0.841471]", "[0. 0.841471 ]x") != ()


def test_numpys_padding_before_a_comma_of_complex_elements_is_no_difference():
    assert (
        printed_difference(
            "[ 5.989684 -3.5422976j, -5.1351547 +6.5593696j,", "[ 5.9896846 -3.5423026j, -5.1351523 +6.559373j ,"
        )
        == ()
    )
    assert printed_difference("a, b", "a, c") != ()


def test_an_old_ipythons_timeit_line_matches_the_one_timeit_prints_now():
    # a notebook executed under IPython before 5.0 stored `10 loops, best of 3: 12.3 ms per loop`
    printed = "5.27 ms ± 41.4 µs per loop (mean ± std. dev. of 3 runs, 10 loops each)"
    assert printed_difference("10 loops, best of 3: 12.3 ms per loop", printed) == ()
    assert printed_difference("1000 loops, best of 5: 2.04 µs per loop", printed) == ()
    assert printed_difference("10 loops, best of 3: 12.3 ms per loop", "12.3 ms") != ()


def test_a_transcripts_ignore_exception_detail_states_the_class_only():
    code = (
        ">>> int('x')  # doctest: +IGNORE_EXCEPTION_DETAIL\nTraceback (most recent call last):\n"
        "ValueError: an older message\n>>> int('y')\nTraceback (most recent call last):\nValueError: kept\n"
    )
    _, steps, _ = transcript_steps(code)
    assert [(s.stated, s.stated_message) for s in steps] == [("ValueError", ""), ("ValueError", "kept")]


def test_output_comments_and_a_fences_output_lines_are_shown_under_the_statement_before_them():
    """Found under mutation (issue 48): `# >>` comments and output lines between statements were checked only once."""
    steps = block_steps("x = f()\n# >> 1.0\n# >>   2.0  \ny = 2\nz = 3\n# >> 3")
    assert [(s.first, s.last, s.shown) for s in steps] == [(1, 1, "1.0\n  2.0"), (4, 5, "3")]
    code = "nan at the top\nx = 1\nnan generated by jit(f)\n>>again  \nprint(x)\n>> end"
    runnable, found = fence_output_lines(code)
    assert found == {1: "nan at the top", 3: "nan generated by jit(f)", 4: "again", 6: "end"}
    assert runnable == "\nx = 1\n\n\nprint(x)\n"
    steps = block_steps(runnable, output_lines=found)
    assert [(s.first, s.last, s.shown) for s in steps] == [(2, 2, "nan generated by jit(f)\nagain"), (5, 5, "end")]


@pytest.mark.parametrize(
    "line", ["print(x", "for each release", "None of these", "The results are:", "    indented text", ">>> 1 + 1"]
)
def test_a_line_that_looks_like_code_keeps_the_fence_as_written(line):
    code = f"x = 1\n{line}\ny = 2"
    assert fence_output_lines(code) == (code, {})


def test_fifty_lines_that_are_not_code_are_as_many_as_a_fence_may_show():
    shown = "\n".join(f"value {n} seen" for n in range(49))
    runnable, found = fence_output_lines("x = 1\n" + shown)
    assert len(found) == 49 and runnable.strip() == "x = 1"
    code = "x = 1\n" + shown + "\nvalue 49 seen"
    assert fence_output_lines(code) == (code, {})
    assert fence_output_lines("x = 1\nnan here\0") == ("x = 1\nnan here\0", {})  # Python refuses it: as written


def test_each_step_says_exactly_what_the_page_states_and_a_decorated_statement_starts_at_its_decorator():
    code = (
        '@dec\ndef f():\n    pass\n# >> defined\nx = int("q")\n# ValueError: "bad"\n'
        "y = 1  # ==> raises KeyError\nz = 2\n# >> two"
    )
    assert block_steps(code) == (
        Step(1, 3, shown="defined"),
        Step(5, 5, "ValueError", "bad", "comment"),
        Step(7, 7, "KeyError", "", "==> raises"),
        Step(8, 8, shown="two"),
    )
    assert stated_raise("x = 1\ny  # ==> raises KeyError") == "KeyError" and stated_raise("x = 1") == ""
    assert unquoted("XmaxX") == "XmaxX"
    assert (unquoted('""'), unquoted("'a'"), unquoted('"'), unquoted("'a\"")) == ("", "a", '"', "'a\"")
    assert notes_of("x = 1\ny = 2  # ==> Pauses during execution") == ("the page says: Pauses during execution",)


def test_a_code_cells_tags_are_read_from_every_form_of_its_options():
    """Found under mutation (issue 48): only `:tags: [x]` and a `---` block with `tags: [x]` were read."""
    header = "---\njupytext:\n  text_representation: {}\n...\n"
    cells = [
        ":tags: [ 'skip-execution' , raises-exception ]\n:other: x\ninput()",
        '---\nlang: py\ntags:\n  - "raises-exception"\n  - hide-output\n---\n1 / 0',
        "---\ntags: [raises-exception]\nx = 1",  # no closing `---`: no options, all code
        ":tags: [raises-exception]\n:name: z\n\ny = 1 / 0",
    ]
    text = header + "# Page\n\n" + "".join(f"```{{code-cell}}\n{cell}\n```\n\n" for cell in cells)
    assert is_notebook_page(text.split("\n"))
    chapter = chapter_from_text("p", "p.md", "markdown", text)
    assert [(b.skip != "", b.raises, b.code) for b in chapter.blocks] == [
        (True, "*", "input()"),
        (False, "*", "1 / 0"),
        (False, "", "---\ntags: [raises-exception]\nx = 1"),
        (False, "*", "y = 1 / 0"),
    ]  # the blank line after the options is not code (MyST drops it)
    assert not is_notebook_page([]) and not is_notebook_page(["---", "---", "kernelspec: x"])
    assert not is_notebook_page(["---", "kernelspec: x"])  # never closed


def _listed(tmp_path, pages: list[dict[str, str]]) -> str:
    """A pages list of `pages` (path, and optionally name and skip), each with a made-up commit and blob."""
    entries = "".join(
        f'[[page]]\n{"".join(f"{k} = {v!r}" + chr(10) for k, v in page.items())}commit = "{"1" * 40}"\n'
        f'blob = "{"2" * 40}"\n'
        for page in pages
    )
    return 'repository = "jax-ml/jax"\n' + entries.replace("'", '"')


def test_two_pages_that_give_one_chapter_id_are_refused_when_the_list_is_read(tmp_path):
    """issue 57: `docs/a-b/index.md` and `docs/a_b/index.md` both become chapter id docs_a_b_index; the second's
    cells and JSON replaced the first's, exit 0."""
    text = _listed(tmp_path, [{"path": "docs/a-b/index.md"}, {"path": "docs/a_b/index.md"}])
    with pytest.raises(
        ConformanceError,
        match=r"\[\[page\]\] 2 \('docs/a_b/index'\) and \[\[page\]\] 1 "
        r"\('docs/a-b/index'\) give one chapter id 'docs_a_b_index'",
    ):
        parse_pages(text, "list.toml", tmp_path)
    renamed = _listed(tmp_path, [{"path": "docs/a-b/index.md"}, {"path": "docs/a_b/index.md", "name": "a_b"}])
    assert [p.name for p in parse_pages(renamed, "list.toml", tmp_path).pages] == ["docs/a-b/index", "a_b"]


@pytest.mark.parametrize(
    "skip", ["../outside.skip.toml", "sub/../../outside.skip.toml", "/etc/passwd", "\\\\server\\share.toml"]
)
def test_a_skip_path_that_leaves_the_lists_folder_is_refused_like_a_page_path(tmp_path, skip):
    with pytest.raises(ConformanceError, match=r"\[\[page\]\] 1: skip should be .*inside its folder"):
        parse_pages(_listed(tmp_path, [{"path": "docs/a.md", "skip": skip}]), "list.toml", tmp_path)


def test_each_skip_list_is_read_and_checked_when_the_list_is_read(tmp_path):
    """Not when its page runs: a missing or malformed skip list of the second page stops the command before the
    first page runs."""
    from conformance.chapter.pages import read_pages

    listed = tmp_path / "list.toml"
    listed.write_text(
        _listed(tmp_path, [{"path": "docs/a.md"}, {"path": "docs/b.md", "skip": "b.skip.toml"}]), encoding="utf-8"
    )
    with pytest.raises(
        ConformanceError,
        match=r"the skip list of docs/b.md \(in .*list.toml\) .*b.skip.toml does "
        r"not exist",
    ):
        read_pages(listed)
    (tmp_path / "b.skip.toml").write_text("[[skip]]\nreason = 1\n", encoding="utf-8")
    with pytest.raises(ConformanceError, match="b.skip.toml"):
        read_pages(listed)
    (tmp_path / "b.skip.toml").write_text('[[skip]]\nhash = "4c1d0e9a"\nreason = "slow"\n', encoding="utf-8")
    assert read_pages(listed).pages[1].skip == tmp_path / "b.skip.toml"
