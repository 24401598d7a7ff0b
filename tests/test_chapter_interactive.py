"""Blocks that wait for a person (issue 59): a call to `breakpoint()`, `input()`, `jax.debug.breakpoint()` or
`pdb.set_trace()` makes the block `interactive`, not run and not judged, where it read as a broken page (`raised`,
with the prose under its `# Prints:` taken as output). No JAX, no process."""

from __future__ import annotations

import pytest

from conformance.chapter.grid import chapter_views
from conformance.chapter.interactive import interactive_call
from conformance.chapter.model import DID_NOT_FINISH, NOT_JUDGED, BlockStatus, counted
from conformance.chapter.read import chapter_from_text
from conformance.chapter.session import RawResult
from conformance.chapter.statuses import block_outcomes


@pytest.mark.parametrize(
    "code, said",
    [
        ("x = 1\njax.debug.breakpoint()\n", "line 2: jax.debug.breakpoint()"),
        (
            "def f(x):\n    y = x + 1\n    jax.debug.breakpoint()\n    return y\nf(1.)\n",
            "line 3: jax.debug.breakpoint()",
        ),
        ("from jax import debug\ndebug.breakpoint()\n", "line 2: debug.breakpoint()"),
        ("breakpoint()\n", "line 1: breakpoint()"),
        ("name = input('name? ')\n", "line 1: input()"),
        ("import pdb; pdb.set_trace()\n", "line 1: pdb.set_trace()"),
        ("try:\n    f()\nexcept Exception:\n    import pdb\n    pdb.post_mortem()\n", "line 5: pdb.post_mortem()"),
    ],
)
def test_a_call_that_waits_for_a_person_is_found_with_its_line(code, said):
    assert interactive_call(code) == said


@pytest.mark.parametrize(
    "code",
    [
        "input_data = load()\n",  # a name that starts like one
        "print('call breakpoint() to stop')\n",  # in a string
        "jax.debug.print('x = {}', x)\n",
        "counter.breakpoint_count += 1\n",
        "def breakpoint_free(x):\n    return x\n",
        "jax.debug.breakpoint(\n",  # does not parse: not judged here
    ],
)
def test_code_that_does_not_wait_for_anyone_is_not_interactive(code):
    assert interactive_call(code) == ""


PAGE = chapter_from_text(
    "debug",
    "/docs/debugging.md",
    "markdown",
    """\
# Debugging

```python
import jax

def f(x):
    y = jax.numpy.sin(x)
    jax.debug.breakpoint()
    return y

value = f(1.)
# Prints:
# The debugger stops here and waits for a command.
```

```python
print(value)
```
""",
)


def test_an_interactive_block_is_not_run_nor_judged_and_its_prose_is_not_compared():
    waiting, after = PAGE.blocks
    # the runner ran only the second block (the first is never sent to it), which missed `value`
    raw = {
        1: RawResult(
            1,
            {
                "outcome": "exception",
                "exception": "NameError",
                "message": "name 'value' is not defined",
                "name": "value",
                "mro": ["NameError", "Exception"],
            },
        )
    }
    found = block_outcomes(PAGE.blocks, raw, {}, 10.0)
    first = found[waiting.id]
    assert first.status is BlockStatus.INTERACTIVE and not first.printed_differs
    assert first.detail == "not run: it waits for a person at line 5: jax.debug.breakpoint()"
    assert found[after.id].status is BlockStatus.AFTER_FAILURE  # its name was to come from the block not run
    assert BlockStatus.INTERACTIVE in NOT_JUDGED and BlockStatus.INTERACTIVE in DID_NOT_FINISH
    assert counted({"interactive": 1, "ran": 2}) == "2 of 2 blocks run as written (1 interactive, not run)"


def test_the_report_draws_an_interactive_block_with_its_own_glyph_and_words():
    from conformance.chapter.cells import block_cell, block_keys
    from conformance.report.chapterpage import GLYPHS, MEANINGS, chapter_page
    from conformance.results.merge import merge_files
    from conformance.results.schema import ResultFile, RunHeader

    waiting, _ = PAGE.blocks
    outcome = block_outcomes((waiting,), {}, {}, 10.0)[waiting.id]
    keys = block_keys(PAGE, {}, 60.0, "env", "runner")
    cell = block_cell(PAGE, waiting, outcome, "0.12.0.1", keys[waiting.id])
    (view,) = chapter_views(merge_files([ResultFile(RunHeader(jax="0.12.0.1", platform="linux-x86_64"), [cell])]), {})
    page = chapter_page(view)
    (drawn,) = page.rows[0]["cells"]
    assert drawn["glyph"] == GLYPHS["interactive"] and drawn["glyph"] not in {
        GLYPHS[s] for s in GLYPHS if s != "interactive"
    }
    assert drawn["label"] == (
        "0.12.0.1: not run: it waits for a person: not run: it waits for a person at line 5: jax.debug.breakpoint()"
    )
    assert MEANINGS["interactive"].startswith("not run: it waits for a person")
    assert page.breaks == () and page.summaries[0]["text"] == (
        "0.12.0.1: 0 of 0 blocks run as written (1 interactive, not run)"
    )


def test_the_blocks_listing_says_an_interactive_block_is_not_run():
    from conformance.chapter.listing import block_lines

    lines = block_lines(PAGE, {})
    # the prose under its `# Prints:` is a sentence, not output the block shows (`stated._SENTENCE`)
    assert lines[3] == "      (not run: it waits for a person at line 5: jax.debug.breakpoint())"
    assert (PAGE.blocks[0].output, PAGE.blocks[0].output_known) == ("", False)
    assert "waits" not in " ".join(lines[4:])
    skipped = block_lines(PAGE, {PAGE.blocks[0].id: "by hand"})[3]  # the skip list's word, not both
    assert skipped == "      (skipped: by hand)"
