"""A block's plan and its making (`conformance.chapter.blocks`), field by field: hashes, ids, the names it binds,
whether its value is displayed, its steps, magics and shown output, where the reader tests check a chapter's blocks
as a whole (written against the survivors of a mutation run). Pure: no JAX, no process."""

from __future__ import annotations

import hashlib

import pytest

from conformance.chapter.blocks import (
    block_plan,
    code_hash,
    defined_names,
    ends_with_expression,
    make_blocks,
    normalised_code,
    section_slug,
    unique_ids,
)
from conformance.chapter.model import Block, Heading, Step


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_the_hash_is_of_the_code_without_trailing_spaces_crlf_or_blank_lines_around_it():
    assert normalised_code("\n \n  a = 1  \r\n\r\n  b\t\n\n") == "  a = 1\n\n  b"
    assert normalised_code("") == "" and normalised_code("\n\n") == ""
    assert code_hash("a = 1\r\nb = 2  \n\n") == code_hash("a = 1\nb = 2") == _sha("a = 1\nb = 2")
    assert code_hash("a = 1\n\nb = 2") == _sha("a = 1\n\nb = 2") != code_hash("a = 1\nb = 2")
    assert code_hash("é = 1") == _sha("é = 1") and len(code_hash("x")) == 16


@pytest.mark.parametrize(
    "section, slug",
    [
        ("3.1", "s3_1"),
        ("12", "s12"),
        ("Ex2", "ex2"),
        ("", "b"),
        ("Ex-2 b", "ex_2_b"),
        ("A.1", "a_1"),
        ("3.1 x", "s3_1_x"),
    ],
)
def test_a_sections_slug_starts_a_blocks_id(section, slug):
    assert section_slug(section) == slug


def test_ids_are_the_slug_and_eight_hex_digits_with_a_count_for_each_repeat_in_a_section():
    one, two = "0123456789abcdef", "fedcba9876543210"
    s31, ex2 = Heading("3.1", "T"), Heading("Ex2")
    assert unique_ids([(s31, one), (s31, two), (s31, one), (ex2, one), (s31, one), (Heading(), two)]) == [
        "s3_1_01234567",
        "s3_1_fedcba98",
        "s3_1_01234567_2",
        "ex2_01234567",
        "s3_1_01234567_3",
        "b_fedcba98",
    ]
    assert unique_ids([]) == []


def test_the_names_a_block_binds_at_top_level_each_once_in_order():
    code = (
        "import os.path, numpy as np\nfrom a import b, c as d\nfrom e import *\nx: int = 1\ny: int\n"
        "(p, [q, *r]) = 1, [2, 3]\ns += 1\nt.u = 2\nv[0] = 3\nif (w := 4): pass\nfor i, j in z: k = 1\n"
        "with open(f) as (fh, gh), g(): pass\ntry: pass\nexcept E as err: pass\nexcept F: pass\n"
        "@(deco := make())\ndef f(a):\n    inner = 1\n@dec2\nclass C:\n    attr = 1\n"
        "lam = lambda m: (mm := m)\nasync def g(): pass\nx = 2\n"
    )
    assert defined_names(code) == (
        "os",
        "np",
        "b",
        "d",
        "x",
        "p",
        "q",
        "r",
        "s",
        "w",
        "i",
        "j",
        "k",
        "fh",
        "gh",
        "err",
        "f",
        "deco",
        "C",
        "lam",
        "g",
    )
    assert defined_names("x = 1\nimport os\nfrom m import *") == ("x", "os")
    assert defined_names("y: int\nz: int = 0") == ("z",)
    assert defined_names("@decorate\ndef f(): pass\n@register\nclass K: pass") == ("f", "K")
    assert defined_names("def broken(:\n") == () and defined_names("") == ()


@pytest.mark.parametrize(
    "code, displayed",
    [
        ("x", True),
        ("x = 1\nx\n\n", True),
        ("x = 1\n\nx", True),
        ("f(x)  # shows it", True),
        ("x  # comment;", True),
        ("x;", False),
        ("x;  # hidden", False),
        ("x;  # a # b", False),
        ("x;\n# a note", False),
        ("x;\n# a # b", False),
        ("print(x)", False),
        ("x = 1", False),
        ("", False),
        ("# only a comment", False),
        ("def broken(:", False),
        ("%matplotlib inline\nx", True),
        ("x\n%matplotlib inline", False),
        ("obj.print(x)", True),
    ],
)
def test_whether_a_notebook_would_display_the_blocks_last_expression(code, displayed):
    assert ends_with_expression(code) is displayed


def test_a_plain_block_has_no_plan_of_its_own():
    assert block_plan("x = 1\nx") == {
        "runnable": "",
        "steps": (),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": (),
        "step_output": False,
    }
    # a transcript, `# Prints:` and `>>` lines are a Markdown page's: not read in other blocks
    assert block_plan(">>> 1 + 1\n2") == {
        "runnable": "",
        "steps": (),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": (),
        "step_output": False,
    }
    assert block_plan("x = 1\n# Prints: 1")["steps"] == ()


def test_a_markdown_transcript_runs_as_a_doctest_each_example_a_step():
    assert block_plan(">>> 1 + 1\n2\n>>> x = 1  # doctest: +SKIP\n# ==> Slow", markdown=True) == {
        "runnable": "1 + 1\n\n\n",
        "steps": (Step(1, 1, shown="2", mode="single"),),
        "cell_magic": "",
        "notes": ("the page says: Slow", "line 3: not run (doctest: +SKIP)"),
        "magics_not_run": (),
        "step_output": True,
    }


def test_a_fences_output_lines_are_blanked_and_shown_by_the_statement_above_them():
    assert block_plan("x = 1\n>> one\n>> two\ny = 2", markdown=True) == {
        "runnable": "x = 1\n\n\ny = 2",
        "steps": (Step(1, 1, shown="one\ntwo"), Step(4, 4)),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": (),
        "step_output": True,
    }
    # outside a Markdown page they are code that does not parse: one step, the block's
    assert block_plan("x = 1\n>> one\n>> two\ny = 2") == {
        "runnable": "",
        "steps": (),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": (),
        "step_output": False,
    }


def test_prints_comments_of_a_markdown_block_are_each_statements_output():
    code = "x = 1\nprint(x)\n# Prints: 1\nprint(x, x)\n# Prints: 1 1\n# OR\n# Prints: 1  1\n"
    assert block_plan(code, markdown=True) == {
        "runnable": "",
        "steps": (Step(1, 2, shown="1"), Step(4, 4, shown="1 1\n# OR\n1  1")),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": (),
        "step_output": True,
    }


def test_line_magics_run_in_their_place_and_a_cell_magic_wraps_the_block():
    assert block_plan("%timeit f(x)\ny = 2\n%xmode minimal") == {
        "runnable": "pass\ny = 2\npass",
        "steps": (Step(1, 1, magic="%timeit f(x)"), Step(2, 3)),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": ("%xmode",),
        "step_output": False,
    }
    assert block_plan("%%time\nx = 1") == {
        "runnable": "pass\nx = 1",
        "steps": (),
        "cell_magic": "%%time",
        "notes": (),
        "magics_not_run": (),
        "step_output": False,
    }


def test_line_magics_of_code_that_does_not_parse_are_not_run_each_named_once_after_the_others():
    assert block_plan("%timeit f(x)\ndef broken(:\n") == {
        "runnable": "pass\ndef broken(:\n",
        "steps": (),
        "cell_magic": "",
        "notes": (),
        "magics_not_run": ("%timeit",),
        "step_output": False,
    }
    assert block_plan("%xmode minimal\n%timeit f(x)\n%time g(y)\n%timeit h(z)\n%xmode plain\nx = (\n")[
        "magics_not_run"
    ] == ("%xmode", "%timeit", "%time")


def _raw(code: str, **fields) -> dict:
    return {
        "code": code,
        "line": 5,
        "end_line": 5 + code.count("\n"),
        "heading": Heading("3.1", "Title"),
        "output": "",
        "joined": False,
        "output_known": True,
        "output_line": 0,
        "raises": "",
        "skip": "",
    } | fields


def test_a_block_is_made_with_every_field_its_id_hash_display_and_names():
    code = "import numpy as np\nx = np.arange(3)\nx\n"
    digest = _sha("import numpy as np\nx = np.arange(3)\nx")
    assert make_blocks([_raw(code, output="array([0, 1, 2])", output_line=9)]) == (
        Block(
            index=0,
            id=f"s3_1_{digest[:8]}",
            hash=digest,
            code=code,
            line=5,
            end_line=8,
            heading=Heading("3.1", "Title"),
            output="array([0, 1, 2])",
            output_known=True,
            joined=False,
            output_line=9,
            raises="",
            skip="",
            display=True,
            defines=("np", "x"),
            steps=(),
            runnable="",
            cell_magic="",
            notes=(),
            magics_not_run=(),
            listing="",
            step_output=False,
        ),
    )
    assert make_blocks([]) == ()


def test_repeats_of_a_block_are_counted_and_each_block_keeps_its_index():
    blocks = make_blocks([_raw("x = 1"), _raw("y = 2"), _raw("x = 1\n"), _raw("x = 1", heading=Heading("Ex2"))])
    digest = _sha("x = 1")
    assert [(b.index, b.id, b.hash, b.code, b.defines) for b in blocks] == [
        (0, f"s3_1_{digest[:8]}", digest, "x = 1", ("x",)),
        (1, f"s3_1_{_sha('y = 2')[:8]}", _sha("y = 2"), "y = 2", ("y",)),
        (2, f"s3_1_{digest[:8]}_2", digest, "x = 1\n", ("x",)),
        (3, f"ex2_{digest[:8]}", digest, "x = 1", ("x",)),
    ]


@pytest.mark.parametrize(
    "fields, display",
    [
        ({"output": "1"}, True),  # no shows_value: the output the document shows says so
        ({"output": ""}, False),
        ({}, False),
        ({"output": "1", "shows_value": False}, False),
        ({"output": "", "shows_value": True}, True),
    ],
)
def test_a_blocks_value_is_displayed_when_the_document_shows_it_and_it_ends_with_an_expression(fields, display):
    (block,) = make_blocks([_raw("x = 1\nx", **fields)])
    assert block.display is display
    (statement,) = make_blocks([_raw("x = 1", **fields)])
    assert statement.display is False


def test_a_markdown_blocks_steps_output_is_its_output_each_steps_first_alternative():
    code = "x = 1\nprint(x)\n# Prints: 1\nprint(x, x)\n# Prints: 1 1\n# OR\n# Prints: 1  1\n"
    (block,) = make_blocks([_raw(code, output="stale", output_known=False, markdown=True, shows_value=True)])
    assert (block.output, block.output_known, block.step_output, block.display, block.runnable) == (
        "1\n1 1",
        True,
        True,
        False,
        "",
    )
    assert block.steps == (Step(1, 2, shown="1"), Step(4, 4, shown="1 1\n# OR\n1  1"))
    (plain,) = make_blocks([_raw(code, output="kept", output_known=False)])  # not Markdown: no steps
    assert (plain.output, plain.output_known, plain.step_output, plain.steps) == ("kept", False, False, ())


def test_a_markdown_blocks_steps_still_display_its_last_value_a_transcripts_prompt_displays_its_own():
    (fence,) = make_blocks([_raw("x = 1\nx\n# Prints: 1", markdown=True, shows_value=True)])
    assert (fence.steps, fence.display, fence.output) == ((Step(1, 2, shown="1"),), True, "1")
    (transcript,) = make_blocks([_raw(">>> x = 1\n>>> x\n1", markdown=True, shows_value=True)])
    assert (transcript.steps, transcript.display, transcript.output, transcript.runnable, transcript.defines) == (
        (Step(1, 1, shown="", mode="single"), Step(2, 2, shown="1", mode="single")),
        False,
        "1",
        "x = 1\nx\n",
        ("x",),
    )


@pytest.mark.parametrize("raises, kept", [("ValueError", ""), ("*", "*"), ("", "")])
def test_a_raises_comment_on_a_statement_is_its_steps_not_the_blocks(raises, kept):
    name = raises if raises not in ("", "*") else "ValueError"
    (block,) = make_blocks([_raw(f"f()  # ==> raises {name}\ng()", raises=raises)])
    assert block.raises == kept  # a notebook's raises-exception tag (`*`) is the block's own
    assert block.steps == (Step(1, 1, stated=name, stated_form="==> raises"), Step(2, 2))


def test_a_block_stated_to_raise_with_no_step_saying_so_keeps_it():
    (block,) = make_blocks([_raw("f()\ng()", raises="KeyError")])
    assert (block.raises, block.steps) == ("KeyError", ())
    (block,) = make_blocks([_raw("f()\n# ValueError: bad\ng()", raises="KeyError")])
    assert (block.raises, block.stated_errors) == ("KeyError", ("KeyError", "ValueError"))


def test_a_blocks_magics_are_on_the_block_and_its_names_read_from_the_code_as_run():
    (block,) = make_blocks([_raw("%matplotlib inline\nimport os\nos", output="<module 'os'>")])
    assert (block.runnable, block.magics_not_run, block.defines, block.display, block.steps) == (
        "pass\nimport os\nos",
        ("%matplotlib",),
        ("os",),
        True,
        (),
    )
