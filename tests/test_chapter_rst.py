"""Reading a reStructuredText page into blocks (`conformance.chapter.rst`), on small made-up pages: code-block
directives, literal blocks, `>>>` transcripts run as doctests, `testcode`/`testoutput`, headings. No JAX."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.chapter.read import chapter_from_text, form_of, read_chapter
from conformance.errors import ConformanceError

PAGE = """\
==========
Our guide
==========

Some prose with ``inline code`` and a sentence.

1 Arrays
--------

Promotion of a scalar:

.. code-block:: python

   >>> x = [1, 2]
   >>> len(x)
   2

Setting it globally::

  total = sum([1, 2, 3])

A shell command, not Python::

  pip install our-package

.. code-block:: bash

   echo not python

.. code-block:: python
   :linenos:
   :caption: a caption

   def double(v):
       return 2 * v

   print(double(3))

Subsection
~~~~~~~~~~

.. testcode::

   print(double(4))

.. testoutput::

   8

.. doctest::

   >>> int("x")
   Traceback (most recent call last):
   ValueError: invalid literal for int() with base 10: 'x'

.. note::

   An admonition's text is prose, its literal block code::

     y = double(5)

The end.
"""


def test_an_rst_page_is_read_by_its_suffix():
    assert form_of(Path("docs/type_promotion.rst")) == "rst"
    assert form_of(Path("page.RST")) == "rst"


def test_code_blocks_literal_blocks_transcripts_and_testcode_are_blocks_in_order_with_their_lines():
    chapter = chapter_from_text("guide", "guide.rst", "rst", PAGE)
    blocks = chapter.blocks
    assert chapter.title == "Our guide"
    assert [b.first_code for b in blocks] == [
        ">>> x = [1, 2]",
        "total = sum([1, 2, 3])",
        "def double(v):",
        "print(double(4))",
        '>>> int("x")',
        "y = double(5)",
    ]
    assert [(b.line, b.end_line) for b in blocks] == [(14, 16), (20, 20), (34, 37), (44, 44), (52, 54), (60, 60)]
    assert [b.heading.section for b in blocks] == ["1"] * 6
    assert blocks[0].heading.title == "Arrays" and blocks[3].heading.subheading == "Subsection"
    # a transcript runs as a doctest: its output is compared, its traceback states the error
    assert blocks[0].steps and blocks[0].output_known and blocks[0].output.strip() == "2"
    assert blocks[4].steps[-1].stated == "ValueError"
    # a testcode's testoutput is its output; a block without one states none
    assert blocks[3].output == "8" and blocks[3].output_known
    assert not blocks[2].output_known and "linenos" not in blocks[2].code
    assert all(not b.listing and not b.skip for b in blocks)


def test_a_page_without_python_code_is_one_line_naming_its_form(tmp_path):
    page = tmp_path / "shell.rst"
    page.write_text("Install\n=======\n\nRun::\n\n  pip install x\n\n.. code-block:: console\n\n   $ ls\n")
    with pytest.raises(ConformanceError, match=r"found no Python code in .*shell.rst \(read as rst\)"):
        read_chapter(page)


def test_a_doctest_block_is_a_paragraph_of_its_own_that_starts_with_the_prompt_and_ends_at_a_blank_line():
    page = (
        "Timing\n======\n\nConsider this program:\n\n>>> import math\n>>> math.sqrt(4.0)\n2.0\n\n"
        "More prose, then another one in a list:\n\n* an item\n\n  >>> math.floor(2.5)\n  2\n\nThe end.\n"
    )
    blocks = chapter_from_text("timing", "timing.rst", "rst", page).blocks
    assert [(b.first_code, b.line, b.end_line) for b in blocks] == [
        (">>> import math", 6, 8),
        (">>> math.floor(2.5)", 14, 15),
    ]
    assert [b.output.strip() for b in blocks] == ["2.0", "2"]


def test_a_literal_block_of_output_lines_that_parse_as_annotations_is_not_code():
    page = "The output is::\n\n    Inside: 0\n    Result: 0\n\nAnd the code::\n\n    size: int = 3\n"
    blocks = chapter_from_text("out", "out.rst", "rst", page).blocks
    assert [b.first_code for b in blocks] == ["size: int = 3"]
